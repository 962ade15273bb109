package io.github.distlock.sample.demo;

import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
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
import io.github.distlock.sample.stock.Deduction;
import io.github.distlock.sample.stock.StockLevel;
import io.github.distlock.sample.stock.StockService;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.StandardEnvironment;

/**
 * Makes the oversell problem visible: two independent instances of the sample application
 * share one Redis, and a few hundred concurrent requests, alternating between the
 * instances, each try to sell one unit of the same SKU. First through
 * {@link StockService#deductUnguarded(String)}, then through
 * {@link StockService#deduct(String)}, which holds {@code @DistributedLock}. The result
 * is a table of units sold, final stock and oversold units per mode.
 *
 * <p>
 * The instances are separate Spring application contexts in this JVM, each with its own
 * {@code RedisConnectionFactory} and lock service, so they coordinate only through Redis,
 * exactly like separate processes would; a JVM lock could not help them.
 *
 * <p>
 * {@link DemoCommand} provides the Redis: a private embedded redis-server unless an
 * address is given.
 */
public final class OversellDemo {

    /** The demo's name for {@code --demo=<name>}. */
    public static final String NAME = "oversell";

    /** The SKU the demo sells. */
    public static final String SKU = "demo-sku";

    /** The mode names, as they appear in the table. */
    public static final String UNGUARDED = "unguarded";

    /** @see #UNGUARDED */
    public static final String GUARDED = "guarded";

    private static final List<String> INSTANCE_NAMES = List.of("instance-a", "instance-b");

    private OversellDemo() {
    }

    /**
     * Runs the demo as a command on the Redis that {@link DemoCommand} chose, printing
     * the table and a verdict.
     * @param out where the table goes
     * @param given the command line and environment, for the demo's own settings
     * ({@code --sample.demo.requests=500}, ...)
     * @param instanceArgs the arguments for every application instance, naming the Redis
     * @return 0 if the guarded run balanced its books and no request failed unexpectedly,
     * else 1
     */
    static int runCommand(PrintStream out, StandardEnvironment given, String[] instanceArgs) {
        DemoSettings settings = new DemoSettings(
                given.getProperty("sample.demo.requests", Integer.class, DemoSettings.defaults().requests()),
                given.getProperty("sample.demo.initial-stock", Long.class, DemoSettings.defaults().initialStock()),
                given.getProperty("sample.demo.threads-per-instance", Integer.class,
                        DemoSettings.defaults().threadsPerInstance()));
        out.printf(
                "%d application instances (separate Spring contexts, separate Redis connections) each run "
                        + "%d request threads. Per mode: the stock of '%s' is reset to %d, then %d deductions run "
                        + "concurrently, alternating between the instances.%n%n",
                INSTANCE_NAMES.size(), settings.threadsPerInstance(), SKU, settings.initialStock(),
                settings.requests());

        DemoReport report = run(settings, instanceArgs);
        out.print(report.toTable());

        int status = 0;
        for (DemoRow row : report.rows()) {
            if (row.errors() > 0) {
                out.printf("%n%s: %d requests failed unexpectedly, the first with: %s%n", row.mode(), row.errors(),
                        row.firstError());
                status = 1;
            }
        }
        DemoRow unguarded = report.row(UNGUARDED);
        DemoRow guarded = report.row(GUARDED);
        if (guarded.oversold() != 0) {
            out.println("\nVerdict: the guarded run oversold: the lock did not exclude concurrent deductions.");
            return 1;
        }
        if (unguarded.oversold() == 0) {
            // Not a failure of the lock: the race simply did not hit on this machine this
            // time.
            out.println("\nVerdict: the guarded run sold exactly the stock; the unguarded run happened not to oversell "
                    + "this time (try --sample.demo.requests=1000 or --sample.stock.work-delay=5ms).");
        }
        else {
            out.printf("%nVerdict: without the lock the two instances sold %d units the stock never had; with it, "
                    + "none.%n", unguarded.oversold());
        }
        return status;
    }

    /**
     * Starts the application instances, runs the unguarded and then the guarded mode, and
     * closes the instances again. The caller provides the Redis.
     * @param settings how many requests, how much stock, how many threads
     * @param args arguments for every instance; they must name the Redis, for example
     * {@code --spring.data.redis.port=6390}
     * @return one row per mode, unguarded first
     */
    public static DemoReport run(DemoSettings settings, String... args) {
        List<ConfigurableApplicationContext> instances = new ArrayList<>();
        try {
            for (String name : INSTANCE_NAMES) {
                instances.add(startInstance(name, args));
            }
            List<StockService> services = instances.stream()
                .map(context -> context.getBean(StockService.class))
                .toList();
            DemoRow unguarded = runMode(UNGUARDED, settings, services, StockService::deductUnguarded);
            DemoRow guarded = runMode(GUARDED, settings, services, StockService::deduct);
            return new DemoReport(settings, instances.size(), List.of(unguarded, guarded));
        }
        finally {
            for (int i = instances.size() - 1; i >= 0; i--) {
                instances.get(i).close();
            }
        }
    }

    /**
     * Starts one application instance without a web server; package-private for the
     * tests.
     */
    static ConfigurableApplicationContext startInstance(String name, String... args) {
        // Long enough that guarded requests queue for the lock instead of being rejected:
        // the guarded run
        // serialises a few hundred short deductions, which takes about a second.
        return DemoInstances.start(name, Map.of("sample.stock.lock-wait-time", "10s"), args);
    }

    private enum Outcome {

        SOLD, SOLD_OUT, REJECTED, ERROR

    }

    private static DemoRow runMode(String mode, DemoSettings settings, List<StockService> services,
            BiFunction<StockService, String, Deduction> deduction) {
        services.get(0).reset(SKU, settings.initialStock());
        List<ExecutorService> pools = new ArrayList<>();
        for (int i = 0; i < services.size(); i++) {
            pools.add(Executors.newFixedThreadPool(settings.threadsPerInstance(),
                    threads(mode + "-" + INSTANCE_NAMES.get(i))));
        }
        CountDownLatch go = new CountDownLatch(1);
        Throwable[] firstError = new Throwable[1];
        List<Future<Outcome>> outcomes = new ArrayList<>();
        try {
            for (int i = 0; i < settings.requests(); i++) {
                StockService service = services.get(i % services.size());
                outcomes.add(pools.get(i % services.size()).submit(() -> {
                    // All threads start together, so the first requests collide as they
                    // would under real load.
                    go.await();
                    try {
                        return deduction.apply(service, SKU).deducted() ? Outcome.SOLD : Outcome.SOLD_OUT;
                    }
                    catch (LockTimeoutException e) {
                        return Outcome.REJECTED;
                    }
                    catch (RuntimeException e) {
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
        }
        catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while running the " + mode + " demo", e);
        }
        catch (ExecutionException e) {
            throw new IllegalStateException("A " + mode + " request failed", e.getCause());
        }
        finally {
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
        }
        catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

}
