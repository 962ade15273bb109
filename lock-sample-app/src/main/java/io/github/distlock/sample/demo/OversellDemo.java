package io.github.distlock.sample.demo;

import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;

import io.github.distlock.LockTimeoutException;
import io.github.distlock.sample.SampleApplication;
import io.github.distlock.sample.redis.EmbeddedRedis;
import io.github.distlock.sample.redis.EmbeddedRedisInitializer;
import io.github.distlock.sample.stock.Deduction;
import io.github.distlock.sample.stock.StockLevel;
import io.github.distlock.sample.stock.StockService;

import org.springframework.boot.Banner;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.SimpleCommandLinePropertySource;
import org.springframework.core.env.StandardEnvironment;

/**
 * Makes the oversell problem visible: two independent instances of the sample application share
 * one Redis, and a few hundred concurrent requests, alternating between the instances, each try to
 * sell one unit of the same SKU. First through {@link StockService#deductUnguarded(String)}, then
 * through {@link StockService#deduct(String)}, which holds {@code @DistributedLock}. The result is
 * a table of units sold, final stock and oversold units per mode.
 *
 * <p>The instances are separate Spring application contexts in this JVM, each with its own
 * {@code RedisConnectionFactory} and lock service, so they coordinate only through Redis, exactly
 * like separate processes would; a JVM lock could not help them.
 *
 * <p>Unless a Redis address is given ({@code --spring.data.redis.host}, {@code .port},
 * {@code .url}, or the matching environment variables), the demo starts a private embedded
 * redis-server on a free port and never touches a Redis that may already run on localhost:6379.
 */
public final class OversellDemo {

    /** The command-line option that selects the demo: {@code --demo}. */
    public static final String DEMO_OPTION = "demo";

    /** The SKU the demo sells. */
    public static final String SKU = "demo-sku";

    /** The mode names, as they appear in the table. */
    public static final String UNGUARDED = "unguarded";
    /** @see #UNGUARDED */
    public static final String GUARDED = "guarded";

    private static final List<String> INSTANCE_NAMES = List.of("instance-a", "instance-b");

    private static final List<String> REDIS_ADDRESS_PROPERTIES = List.of("spring.data.redis.url",
            "spring.data.redis.host", "spring.data.redis.port", "spring.data.redis.sentinel.master",
            "spring.data.redis.cluster.nodes");

    private OversellDemo() {
    }

    /**
     * Runs the demo as a command: starts a private Redis unless an address was given, prints the
     * table to standard output and returns the exit status.
     *
     * @param args the application's arguments; {@code --demo} is dropped, everything else (for
     *        example {@code --sample.demo.requests=500} or {@code --distributed-lock.default-ttl=5s})
     *        reaches both application instances
     * @return 0 if the guarded run balanced its books and no request failed unexpectedly, else 1
     */
    public static int runFromCommandLine(String[] args) {
        PrintStream out = System.out;
        StandardEnvironment given = new StandardEnvironment();
        given.getPropertySources().addFirst(new SimpleCommandLinePropertySource(args));
        DemoSettings settings = new DemoSettings(
                given.getProperty("sample.demo.requests", Integer.class, DemoSettings.defaults().requests()),
                given.getProperty("sample.demo.initial-stock", Long.class, DemoSettings.defaults().initialStock()),
                given.getProperty("sample.demo.threads-per-instance", Integer.class,
                        DemoSettings.defaults().threadsPerInstance()));

        List<String> instanceArgs = new ArrayList<>(Arrays.stream(args)
                .filter(arg -> !arg.equals("--" + DEMO_OPTION)).toList());
        // Only an address the user passed explicitly counts: the demo must never fall back to localhost:6379,
        // which may be a Redis that other people use.
        boolean addressGiven = REDIS_ADDRESS_PROPERTIES.stream().anyMatch(given::containsProperty);
        EmbeddedRedis embedded = null;
        try {
            if (addressGiven) {
                out.println("Using the Redis given on the command line or in the environment.");
            } else {
                embedded = EmbeddedRedis.start();
                instanceArgs.add("--spring.data.redis.host=" + EmbeddedRedis.HOST);
                instanceArgs.add("--spring.data.redis.port=" + embedded.port());
                out.printf("No Redis address given: started a private embedded redis-server on %s:%d for this demo "
                        + "(pass --spring.data.redis.host/--spring.data.redis.port to use another Redis).%n",
                        EmbeddedRedis.HOST, embedded.port());
            }
            out.printf("%d application instances (separate Spring contexts, separate Redis connections) each run "
                    + "%d request threads. Per mode: the stock of '%s' is reset to %d, then %d deductions run "
                    + "concurrently, alternating between the instances.%n%n", INSTANCE_NAMES.size(),
                    settings.threadsPerInstance(), SKU, settings.initialStock(), settings.requests());

            DemoReport report = run(settings, instanceArgs.toArray(String[]::new));
            out.print(report.toTable());

            int status = 0;
            for (DemoRow row : report.rows()) {
                if (row.errors() > 0) {
                    out.printf("%n%s: %d requests failed unexpectedly, the first with: %s%n", row.mode(), row.errors(),
                            row.firstError());
                    status = 1;
                }
            }
            if (report.row(GUARDED).oversold() != 0) {
                out.println("\nThe guarded run oversold: the lock did not exclude concurrent deductions.");
                status = 1;
            }
            if (report.row(UNGUARDED).oversold() == 0) {
                // Not a failure of the lock: the race simply did not hit on this machine this time.
                out.println("\nThe unguarded run happened not to oversell this time; try more requests "
                        + "(--sample.demo.requests=1000) or a longer --sample.stock.work-delay=5ms.");
            }
            return status;
        } catch (RuntimeException e) {
            out.println("The demo failed: " + e);
            e.printStackTrace(out);
            return 1;
        } finally {
            if (embedded != null) {
                embedded.close();
            }
        }
    }

    /**
     * Starts the application instances, runs the unguarded and then the guarded mode, and closes
     * the instances again. The caller provides the Redis.
     *
     * @param settings how many requests, how much stock, how many threads
     * @param args arguments for every instance; they must name the Redis, for example
     *        {@code --spring.data.redis.port=6390}
     * @return one row per mode, unguarded first
     */
    public static DemoReport run(DemoSettings settings, String... args) {
        List<ConfigurableApplicationContext> instances = new ArrayList<>();
        try {
            for (String name : INSTANCE_NAMES) {
                instances.add(startInstance(name, args));
            }
            List<StockService> services = instances.stream().map(context -> context.getBean(StockService.class))
                    .toList();
            DemoRow unguarded = runMode(UNGUARDED, settings, services, StockService::deductUnguarded);
            DemoRow guarded = runMode(GUARDED, settings, services, StockService::deduct);
            return new DemoReport(settings, instances.size(), List.of(unguarded, guarded));
        } finally {
            for (int i = instances.size() - 1; i >= 0; i--) {
                instances.get(i).close();
            }
        }
    }

    /** Starts one application instance without a web server; package-private for the tests. */
    static ConfigurableApplicationContext startInstance(String name, String... args) {
        Map<String, Object> properties = new LinkedHashMap<>();
        properties.put("spring.application.name", name);
        // Each instance shows up under its own name in CLIENT LIST: two connection pools, not one.
        properties.put("spring.data.redis.client-name", "sample-" + name);
        // The launcher already chose the Redis; an instance starting a server of its own would share nothing.
        properties.put(EmbeddedRedisInitializer.MODE_PROPERTY, "never");
        // Long enough that guarded requests queue for the lock instead of being rejected: the guarded run
        // serialises a few hundred short deductions, which takes about a second.
        properties.put("sample.stock.lock-wait-time", "10s");
        // The table is the output; startup chatter of two instances would bury it.
        properties.put("logging.level.root", "WARN");
        // Placed after the system properties and environment variables but before application.properties,
        // which Spring Boot appends later: the demo's values override the application's own settings, and
        // the command line, -D options and environment variables still override the demo's.
        StandardEnvironment environment = new StandardEnvironment();
        environment.getPropertySources().addLast(new MapPropertySource("sampleDemoInstance", properties));
        return new SpringApplicationBuilder(SampleApplication.class)
                .environment(environment)
                .web(WebApplicationType.NONE)
                .bannerMode(Banner.Mode.OFF)
                .logStartupInfo(false)
                .run(args);
    }

    private enum Outcome { SOLD, SOLD_OUT, REJECTED, ERROR }

    private static DemoRow runMode(String mode, DemoSettings settings, List<StockService> services,
            BiFunction<StockService, String, Deduction> deduction) {
        services.get(0).reset(SKU, settings.initialStock());
        List<ExecutorService> pools = new ArrayList<>();
        for (int i = 0; i < services.size(); i++) {
            pools.add(Executors.newFixedThreadPool(settings.threadsPerInstance(), threads(mode + "-" + INSTANCE_NAMES.get(i))));
        }
        CountDownLatch go = new CountDownLatch(1);
        Throwable[] firstError = new Throwable[1];
        List<Future<Outcome>> outcomes = new ArrayList<>();
        try {
            for (int i = 0; i < settings.requests(); i++) {
                StockService service = services.get(i % services.size());
                outcomes.add(pools.get(i % services.size()).submit(() -> {
                    // All threads start together, so the first requests collide as they would under real load.
                    go.await();
                    try {
                        return deduction.apply(service, SKU).deducted() ? Outcome.SOLD : Outcome.SOLD_OUT;
                    } catch (LockTimeoutException e) {
                        return Outcome.REJECTED;
                    } catch (RuntimeException e) {
                        synchronized (firstError) {
                            if (firstError[0] == null) {
                                firstError[0] = e;
                            }
                        }
                        return Outcome.ERROR;
                    }
                }));
            }
            long started = System.nanoTime();
            go.countDown();
            int[] counts = new int[Outcome.values().length];
            for (Future<Outcome> outcome : outcomes) {
                counts[outcome.get().ordinal()]++;
            }
            Duration elapsed = Duration.ofNanos(System.nanoTime() - started);

            StockLevel level = services.get(0).level(SKU);
            long oversold = level.sold() + level.stock() - settings.initialStock();
            synchronized (firstError) {
                return new DemoRow(mode, settings.requests(), level.sold(), counts[Outcome.SOLD_OUT.ordinal()],
                        counts[Outcome.REJECTED.ordinal()], counts[Outcome.ERROR.ordinal()], level.stock(), oversold,
                        elapsed, firstError[0]);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while running the " + mode + " demo", e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("A " + mode + " request failed", e.getCause());
        } finally {
            for (ExecutorService pool : pools) {
                pool.shutdownNow();
            }
            for (ExecutorService pool : pools) {
                awaitQuietly(pool);
            }
        }
    }

    private static ThreadFactory threads(String prefix) {
        AtomicInteger count = new AtomicInteger();
        return runnable -> {
            Thread thread = new Thread(runnable, prefix + "-" + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }

    private static void awaitQuietly(ExecutorService pool) {
        try {
            pool.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
