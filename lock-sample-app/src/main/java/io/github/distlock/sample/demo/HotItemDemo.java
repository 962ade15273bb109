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
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.distlock.LockService;
import io.github.distlock.LockTimeoutException;
import io.github.distlock.sample.stock.SegmentedStock;
import io.github.distlock.sample.stock.StockLevel;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.core.env.StandardEnvironment;

/**
 * One SKU under heavy load. The lock makes every sale of it run one at a time: correct,
 * but the item's throughput is one sale per (work + lock round trips), however many
 * instances serve it. Splitting its stock into segments, each with its own lock
 * ({@link SegmentedStock}), lets as many sales run at once as there are segments, and
 * still never oversells. The demo sells the same stock from two instances with 1 segment
 * and with N, and prints the time and throughput of each.
 */
public final class HotItemDemo {

    /** The demo's name for {@code --demo=<name>}. */
    public static final String NAME = "hot-item";

    private static final List<String> INSTANCE_NAMES = List.of("instance-a", "instance-b");

    private HotItemDemo() {
    }

    /**
     * The size of a run.
     *
     * @param requests sales attempted per mode, spread evenly over the instances
     * @param stock units of the hot SKU
     * @param segments segments of the segmented mode (the other mode has 1)
     * @param threadsPerInstance concurrent request threads per instance
     */
    public record Settings(int requests, long stock, int segments, int threadsPerInstance) {

        /** 160 requests for 120 units, 8 segments, 16 threads per instance. */
        public static Settings defaults() {
            return new Settings(160, 120, 8, 16);
        }

        /** Rejects sizes that make no demo. */
        public Settings {
            if (requests <= 0 || stock < 0 || segments < 2 || threadsPerInstance <= 0) {
                throw new IllegalArgumentException("requests and threadsPerInstance must be positive, stock not "
                        + "negative and segments at least 2: " + requests + ", " + stock + ", " + segments + ", "
                        + threadsPerInstance);
            }
        }
    }

    /**
     * One mode's outcome.
     *
     * @param segments how many segments (and locks) the stock had
     * @param requests sales attempted
     * @param sold units sold (the atomic sales counter)
     * @param soldOut requests that found every segment empty
     * @param rejected requests that did not get a segment's lock within the wait
     * @param errors requests that failed otherwise
     * @param finalStock units left over all segments
     * @param oversold {@code sold + finalStock - stock}: units sold that the stock never
     * had
     * @param elapsed wall time of the run
     * @param firstError the first unexpected failure, or {@code null}
     */
    public record Row(int segments, int requests, long sold, int soldOut, int rejected, int errors, long finalStock,
            long oversold, Duration elapsed, Throwable firstError) {

        /** Units sold per second of wall time. */
        public long salesPerSecond() {
            return Math.round(sold * 1e9 / Math.max(1, elapsed.toNanos()));
        }
    }

    /**
     * The outcome of both modes.
     *
     * @param settings the size of the runs
     * @param single the run with one segment
     * @param segmented the run with {@code settings.segments()} segments
     */
    public record Report(Settings settings, Row single, Row segmented) {

        /** The rows as a table. */
        public DemoTable table() {
            DemoTable table = new DemoTable().right("segments")
                .right("requests")
                .right("sold")
                .right("sold out")
                .right("lock timeout")
                .right("final stock")
                .right("oversold")
                .right("time")
                .right("sales/s");
            for (Row row : List.of(single, segmented)) {
                table.row(row.segments(), row.requests(), row.sold(), row.soldOut(), row.rejected(), row.finalStock(),
                        row.oversold(), row.elapsed().toMillis() + " ms", row.salesPerSecond());
            }
            return table;
        }

        /** How many times the segmented run's throughput the single run's is. */
        public double speedup() {
            return (double) segmented.salesPerSecond() / Math.max(1, single.salesPerSecond());
        }
    }

    /** Runs the demo as a command; see {@link DemoCommand}. */
    static int runCommand(PrintStream out, StandardEnvironment given, String[] instanceArgs) {
        Settings defaults = Settings.defaults();
        Settings settings = new Settings(
                given.getProperty("sample.demo.hot-item.requests", Integer.class, defaults.requests()),
                given.getProperty("sample.demo.hot-item.stock", Long.class, defaults.stock()),
                given.getProperty("sample.demo.hot-item.segments", Integer.class, defaults.segments()),
                given.getProperty("sample.demo.threads-per-instance", Integer.class, defaults.threadsPerInstance()));
        out.printf("%d instances x %d threads send %d sales of one hot SKU with %d units. Every sale is the "
                + "read-check-write of the oversell demo under a lock. First the stock is one segment with one "
                + "lock; then it is split into %d segments of about %d units, each with its own lock, and a sale "
                + "takes a free segment with stock left (the library's SegmentedLock).%n%n", INSTANCE_NAMES.size(),
                settings.threadsPerInstance(), settings.requests(), settings.stock(), settings.segments(),
                settings.stock() / settings.segments());

        Report report = run(settings, instanceArgs);
        out.print(report.table());

        int status = 0;
        for (Row row : List.of(report.single(), report.segmented())) {
            if (row.errors() > 0) {
                out.printf("%n%d segment(s): %d requests failed unexpectedly, the first with: %s%n", row.segments(),
                        row.errors(), row.firstError());
                status = 1;
            }
        }
        if (report.single().oversold() != 0 || report.segmented().oversold() != 0) {
            out.println("\nVerdict: a run oversold: a segment's lock did not exclude concurrent sales.");
            return 1;
        }
        out.printf(
                "%nVerdict: no oversell either way; %d segments sold at %d sales/s against %d with one lock, "
                        + "%.1fx the throughput (each segment's lock serialises only its own sales).%n",
                settings.segments(), report.segmented().salesPerSecond(), report.single().salesPerSecond(),
                report.speedup());
        return status;
    }

    /**
     * Starts two application instances, runs the single-segment and then the segmented
     * mode, and closes the instances again. The caller provides the Redis.
     * @param settings the size of the runs
     * @param args arguments for every instance; they must name the Redis
     */
    public static Report run(Settings settings, String... args) {
        List<ConfigurableApplicationContext> instances = new ArrayList<>();
        try {
            for (String name : INSTANCE_NAMES) {
                instances.add(DemoInstances.start(name, Map.of(), args));
            }
            // Untimed warm-up: the first run would otherwise also pay for class loading
            // and JIT compilation.
            runMode(new Settings(40, 40, settings.segments(), settings.threadsPerInstance()), 2, instances);
            Row single = runMode(settings, 1, instances);
            Row segmented = runMode(settings, settings.segments(), instances);
            return new Report(settings, single, segmented);
        }
        finally {
            for (int i = instances.size() - 1; i >= 0; i--) {
                instances.get(i).close();
            }
        }
    }

    private enum Outcome {

        SOLD, SOLD_OUT, REJECTED, ERROR

    }

    private static Row runMode(Settings settings, int segments, List<ConfigurableApplicationContext> instances) {
        String sku = "hot-sku-" + segments;
        List<SegmentedStock> stocks = new ArrayList<>();
        for (ConfigurableApplicationContext instance : instances) {
            Duration workDelay = instance.getEnvironment()
                .getProperty("sample.stock.work-delay", Duration.class, Duration.ofMillis(2));
            // Long enough that a sale queues for its segment instead of being turned away
            // under load.
            stocks.add(new SegmentedStock(instance.getBean(LockService.class),
                    instance.getBean(StringRedisTemplate.class), segments, workDelay, Duration.ofSeconds(10)));
        }
        stocks.get(0).reset(sku, settings.stock());

        List<ExecutorService> pools = new ArrayList<>();
        for (int i = 0; i < stocks.size(); i++) {
            AtomicInteger count = new AtomicInteger();
            String prefix = "hot-" + segments + "-" + INSTANCE_NAMES.get(i) + "-";
            pools.add(Executors.newFixedThreadPool(settings.threadsPerInstance(), runnable -> {
                Thread thread = new Thread(runnable, prefix + count.incrementAndGet());
                thread.setDaemon(true);
                return thread;
            }));
        }
        CountDownLatch go = new CountDownLatch(1);
        Throwable[] firstError = new Throwable[1];
        List<Future<Outcome>> outcomes = new ArrayList<>();
        try {
            for (int i = 0; i < settings.requests(); i++) {
                SegmentedStock stock = stocks.get(i % stocks.size());
                outcomes.add(pools.get(i % stocks.size()).submit(() -> {
                    go.await();
                    try {
                        return stock.deduct(sku).deducted() ? Outcome.SOLD : Outcome.SOLD_OUT;
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
            StockLevel level = stocks.get(0).level(sku);
            synchronized (firstError) {
                return new Row(segments, settings.requests(), level.sold(), counts[Outcome.SOLD_OUT.ordinal()],
                        counts[Outcome.REJECTED.ordinal()], counts[Outcome.ERROR.ordinal()], level.stock(),
                        level.sold() + level.stock() - settings.stock(), elapsed, firstError[0]);
            }
        }
        catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while running the hot-item demo", e);
        }
        catch (ExecutionException e) {
            throw new IllegalStateException("A hot-item request failed", e.getCause());
        }
        finally {
            for (ExecutorService pool : pools) {
                pool.shutdownNow();
            }
            for (ExecutorService pool : pools) {
                try {
                    pool.awaitTermination(10, TimeUnit.SECONDS);
                }
                catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

}
