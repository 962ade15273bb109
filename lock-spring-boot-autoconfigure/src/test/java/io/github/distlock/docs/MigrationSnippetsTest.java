package io.github.distlock.docs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Lazy;
import org.springframework.scheduling.annotation.Scheduled;

import io.github.distlock.DistributedLock;
import io.github.distlock.DistributedLock.FailureAction;
import io.github.distlock.DistributedLock.Watchdog;
import io.github.distlock.LockFailureHandler;
import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.LockService;
import io.github.distlock.LockTimeoutException;
import io.github.distlock.autoconfigure.BootAutoConfigurations;
import io.github.distlock.autoconfigure.DistributedLockAnnotationAutoConfiguration;
import io.github.distlock.autoconfigure.DistributedLockAutoConfiguration;
import io.github.distlock.testsupport.RedisServerExtension;

/**
 * The code of ours that the migration guides in {@code docs/migration} show, run against
 * a real Redis: each region between {@code // tag::name[]} and {@code // end::name[]} is
 * the block the guides mark {@code <!-- ours: name -->}, and
 * {@link #everyBlockOfOursInTheGuidesIsARegionOfThisTest()} fails when a guide's block
 * and the region differ, so a guide cannot show code that does not compile or does not do
 * what the guide says.
 */
class MigrationSnippetsTest {

    // @formatter:off: the tagged regions are the migration guides' code, quoted verbatim; the formatter must not
    // rewrap them (Checkstyle's line length skips this file for the same reason).

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension().resetBeforeEach();

    private static final Path SOURCE = Path.of("src/test/java/io/github/distlock/docs/MigrationSnippetsTest.java");

    private static final Pattern REGION = Pattern.compile("// tag::([a-z0-9-]+)\\[]\\n(.*?)\\n[ \\t]*// end::\\1\\[]",
            Pattern.DOTALL);

    /** A fenced Java block in a guide, with the marker line right above it. */
    private static final Pattern BLOCK = Pattern.compile("(?m)^([^\\n]*)\\n```java\\n(.*?)\\n```", Pattern.DOTALL);

    private static final Pattern OURS = Pattern.compile("<!-- ours: ([a-z0-9-]+) -->");

    /** What the guarded code did, with the lock keys that were in Redis at that moment. */
    private final Journal journal = new Journal();

    private final Orders orders = new Orders(journal);

    private final Reports reports = new Reports(journal);

    private final Ledger ledger = new Ledger(journal);

    private final Importer importer = new Importer(journal);

    private final ExecutorService executor = Executors.newSingleThreadExecutor();

    @AfterEach
    void stopExecutor() throws InterruptedException {
        executor.shutdownNow();
        assertThat(executor.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }

    private ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(BootAutoConfigurations.REDIS,
                        DistributedLockAutoConfiguration.class, DistributedLockAnnotationAutoConfiguration.class))
                .withPropertyValues("spring.data.redis.host=" + redis.server().host(),
                        "spring.data.redis.port=" + redis.server().port(),
                        // Generous, so that a loaded machine does not fail the first connection; nothing here times it.
                        "distributed-lock.operation-timeout=10s")
                .withBean(Journal.class, () -> journal)
                .withBean(Orders.class, () -> orders)
                .withBean(Reports.class, () -> reports)
                .withBean(OrderService.class)
                .withBean(NightlyJobs.class)
                .withUserConfiguration(FailureHandlers.class);
    }

    // ---------------------------------------------------------------- LockService, the programmatic API

    @Test
    void lockAndReleaseWithTryWithResources() {
        runner().run(context -> {
            LockService lockService = context.getBean(LockService.class);
            // tag::lock-unlock[]
            try (LockHandle lock = lockService.lock("order:42", null, null)) {
                orders.ship("42");
            }
            // end::lock-unlock[]
            assertThat(journal.entries()).containsExactly("ship 42 under [lock:{order:42}]");
            assertThat(heldLocks()).isEmpty();
        });
    }

    @Test
    void tryLockWithAWaitAndALeaseReturnsEmptyWhileAnotherOwnerHoldsTheLock() {
        runner().run(context -> {
            LockService lockService = context.getBean(LockService.class);
            // tag::try-lock[]
            Optional<LockHandle> acquired = lockService.tryLock("order:42", Duration.ofSeconds(10), Duration.ofSeconds(2));
            if (acquired.isPresent()) {
                try (LockHandle lock = acquired.get()) {
                    orders.ship("42");
                }
            }
            // end::try-lock[]
            assertThat(journal.entries()).containsExactly("ship 42 under [lock:{order:42}]");

            try (LockHandle elsewhere = lockService.lock("order:42", null, null)) {
                assertThat(lockService.tryLock("order:42", Duration.ofSeconds(10), Duration.ZERO)).isEmpty();
            }
        });
    }

    @Test
    void aFixedLeaseIsSetToItsTtl() {
        runner().run(context -> {
            LockService lockService = context.getBean(LockService.class);
            // tag::fixed-lease[]
            LockHandle lock = lockService.lock(LockRequest.of("order:42")
                    .withTtl(Duration.ofSeconds(10))
                    .withWatchdog(false));   // expires 10 s after it was taken, even if still working
            // end::fixed-lease[]
            long pttl = redis.server().pttl("lock:{order:42}");
            assertThat(pttl).isPositive().isLessThanOrEqualTo(10_000);
            assertThat(lock.release()).isTrue();
        });
    }

    @Test
    void theSameKeyTwiceIsTwoOwnersEvenOnOneThread() {
        runner().run(context -> {
            LockService lockService = context.getBean(LockService.class);
            // tag::not-reentrant[]
            LockHandle outer = lockService.lock("order:42", null, null);
            Optional<LockHandle> inner = lockService.tryLock("order:42", null, Duration.ZERO);   // empty
            // end::not-reentrant[]
            assertThat(inner).isEmpty();
            assertThat(outer.isHeld()).isTrue();
            assertThat(outer.release()).isTrue();
        });
    }

    @Test
    void aHandleCanBeReleasedByAnotherThread() {
        runner().run(context -> {
            LockService lockService = context.getBean(LockService.class);
            // tag::release-elsewhere[]
            LockHandle lock = lockService.lock("import:prices", null, null);
            CompletableFuture<Void> done = CompletableFuture
                    .runAsync(() -> importer.run("prices"), executor)   // another thread does the work...
                    .whenComplete((result, failure) -> lock.release());   // ...and lets go of the lock
            // end::release-elsewhere[]
            done.get(30, TimeUnit.SECONDS);
            assertThat(journal.entries()).containsExactly("import prices under [lock:{import:prices}]");
            assertThat(lock.isHeld()).isFalse();
            assertThat(heldLocks()).isEmpty();
        });
    }

    @Test
    void callLockedRunsTheActionUnderTheLockAndReturnsItsResult() throws Exception {
        runner().run(context -> {
            LockService lockService = context.getBean(LockService.class);
            // tag::call-locked[]
            String receipt = lockService.callLocked("order:42", null, Duration.ofSeconds(3), () -> orders.ship("42"));
            // end::call-locked[]
            assertThat(receipt).isEqualTo("shipped 42");
            assertThat(heldLocks()).isEmpty();
        });
    }

    @Test
    void theFencingTokenGrowsWithEveryAcquisition() {
        runner().run(context -> {
            LockService lockService = context.getBean(LockService.class);
            for (int run = 0; run < 2; run++) {
                // tag::fencing-token[]
                try (LockHandle lock = lockService.lock(LockRequest.of("ledger:7").withFencingToken())) {
                    ledger.post("7", 100, lock.fencingToken());   // the ledger rejects tokens older than its last
                }
                // end::fencing-token[]
            }
            assertThat(ledger.tokens()).hasSize(2);
            assertThat(ledger.tokens().get(1)).isGreaterThan(ledger.tokens().get(0));
        });
    }

    @Test
    void releaseSaysWhetherTheLockWasStillOurs() {
        runner().run(context -> {
            LockService lockService = context.getBean(LockService.class);
            // The lease runs out (here: the key is deleted) between the work and the release.
            orders.afterShipping(() -> redis.server().del("lock:{order:42}"));
            // tag::release-result[]
            LockHandle lock = lockService.lock(LockRequest.of("order:42").withTtl(Duration.ofSeconds(10)).withWatchdog(false));
            orders.ship("42");
            if (!lock.release()) {
                orders.flagForReview("42");   // the lease ran out first: another instance may have shipped it too
            }
            // end::release-result[]
            assertThat(journal.entries()).containsExactly("ship 42 under [lock:{order:42}]", "review 42 under []");
        });
    }

    @Test
    void aLostLeaseListenerIsCalledWhenTheWatchdogFindsTheLockGone() {
        runner().run(context -> {
            LockService lockService = context.getBean(LockService.class);
            List<String> stopped = new CopyOnWriteArrayList<>();
            // tag::on-lost[]
            LockHandle lock = lockService.lock("import:prices", Duration.ofSeconds(3), null);
            lock.onLost(lost -> importer.stop());   // runs on the watchdog's thread: flag, interrupt or cancel
            // end::on-lost[]
            importer.onStop(() -> stopped.add("stopped"));
            redis.server().del("lock:{import:prices}");
            // The watchdog renews after a third of the 3 s lease and finds the key gone.
            await().atMost(Duration.ofSeconds(20)).until(lock::isLost);
            assertThat(stopped).containsExactly("stopped");
            assertThat(lock.release()).isFalse();
        });
    }

    @Test
    void aFixedLeaseLeftUnreleasedKeepsTheKeyForItsWholeTtl() {
        runner().run(context -> {
            LockService lockService = context.getBean(LockService.class);
            // tag::hold-at-least[]
            Optional<LockHandle> acquired = lockService.tryLock(LockRequest.of("nightly-report")
                    .withTtl(Duration.ofMinutes(5))
                    .withWatchdog(false)
                    .withWaitTime(Duration.ZERO));
            if (acquired.isPresent()) {
                reports.generate();   // not released: the key stays until the 5 minutes are up
            }
            // end::hold-at-least[]
            assertThat(acquired).isPresent();
            assertThat(journal.entries()).containsExactly("report under [lock:{nightly-report}]");
            assertThat(redis.server().pttl("lock:{nightly-report}")).isGreaterThan(60_000);
            assertThat(lockService.tryLock("nightly-report", null, Duration.ZERO)).isEmpty();
            assertThat(acquired.get().release()).isTrue();
        });
    }

    @Test
    void aMinimumHoldKeepsTheKeyAfterTheReleaseUntilItEnds() {
        runner().run(context -> {
            LockService lockService = context.getBean(LockService.class);
            // tag::min-hold-lock-service[]
            lockService.tryLock(LockRequest.of("nightly-report")
                    .withTtl(Duration.ofMinutes(10))
                    .withMinHold(Duration.ofMinutes(1))
                    .withWaitTime(Duration.ZERO))
                .ifPresent(lock -> {
                    try (lock) {
                        reports.generate();   // released when done, but held for at least a minute from the start
                    }
                });
            // end::min-hold-lock-service[]
            assertThat(journal.entries()).containsExactly("report under [lock:{nightly-report}]");
            assertThat(redis.server().pttl("lock:{nightly-report}")).as("what is left of the minute")
                    .isBetween(30_000L, 60_000L);
            assertThat(lockService.tryLock("nightly-report", null, Duration.ZERO)).isEmpty();
        });
    }

    @Test
    void aScheduledJobWithAMinimumHoldRunsOncePerTickHoweverFastItIs() {
        runner().run(context -> {
            NightlyJobs jobs = context.getBean(NightlyJobs.class);
            jobs.nightlyReportOncePerTick();
            jobs.nightlyReportOncePerTick();   // the next instance's tick, a moment later: skipped
            assertThat(journal.entries()).containsExactly("report under [lock:{nightly-report}]");
            assertThat(redis.server().pttl("lock:{nightly-report}")).isBetween(30_000L, 60_000L);
        });
    }

    @Test
    void theTaskExecutorFormRunsTheTaskOnlyIfTheLockIsFree() {
        runner().run(context -> {
            LockService lockService = context.getBean(LockService.class);
            LockHandle elsewhere = lockService.lock("nightly-report", null, null);
            Runnable attempt = () -> {
                // tag::execute-if-free[]
                lockService.tryLock("nightly-report", Duration.ofMinutes(10), Duration.ZERO).ifPresent(lock -> {
                    try (lock) {
                        reports.generate();
                    }
                });
                // end::execute-if-free[]
            };
            attempt.run();
            assertThat(journal.entries()).isEmpty();
            elsewhere.release();
            attempt.run();
            assertThat(journal.entries()).containsExactly("report under [lock:{nightly-report}]");
        });
    }

    // ---------------------------------------------------------------- the annotation

    @Test
    void theAnnotationLocksTheKeyFromTheArguments() {
        runner().run(context -> {
            OrderService service = context.getBean(OrderService.class);
            service.pay(new Order("42", "alice"));
            service.rename(new Order("42", "alice"));
            service.transfer("a", "b", 100);
            service.rebuildIndex();
            assertThat(journal.entries()).containsExactly("ship 42 under [lock:{42}]",
                    "ship 42 under [lock:{42:alice}]", "ship a->b under [lock:{account:a}, lock:{account:b}]",
                    "ship index under [lock:{OrderService.rebuildIndex}]");
        });
    }

    @Test
    void aNestedCallOnTheSameKeyJoinsTheHoldOfItsThread() {
        runner().run(context -> {
            context.getBean(OrderService.class).shipAll("42");
            // reserve has waitTime 0s: had it not joined, it would have thrown LockTimeoutException.
            assertThat(journal.entries()).containsExactly("reserve 42 under [lock:{order:42}]",
                    "ship 42 under [lock:{order:42}]");
            assertThat(heldLocks()).isEmpty();
        });
    }

    @Test
    void aFailureHandlerBeanDecidesWhatABusyCallDoes() {
        runner().run(context -> {
            LockHandle elsewhere = context.getBean(LockService.class).lock("order:42", null, null);
            assertThatThrownBy(() -> context.getBean(OrderService.class).cancel("42"))
                    .isInstanceOf(OrderBusyException.class).hasMessageContaining("order:42")
                    .hasCauseInstanceOf(LockTimeoutException.class);
            elsewhere.release();
            assertThat(journal.entries()).isEmpty();
        });
    }

    @Test
    void aScheduledJobIsSkippedWhileAnotherInstanceRunsIt() {
        runner().run(context -> {
            NightlyJobs jobs = context.getBean(NightlyJobs.class);
            LockService lockService = context.getBean(LockService.class);

            try (LockHandle otherInstance = lockService.lock("nightly-report", null, null)) {
                jobs.nightlyReport();   // skipped: returns at once, the report does not run
                jobs.syncPrices();
                assertThat(journal.entries()).containsExactly("prices under [lock:{nightly-report}, lock:{sync-prices}]");
            }
            jobs.nightlyReport();
            assertThat(journal.entries()).containsExactly("prices under [lock:{nightly-report}, lock:{sync-prices}]",
                    "report under [lock:{nightly-report}]");
        });
    }

    @Test
    void theSkipRecipeRunsAShortJobAgainOnAnInstanceWhoseTickFiresAfterTheFirstRunEnded() {
        // Two instances; the second one's scheduler fires a moment after the first one's run returned.
        runner().run(first -> runner().run(second -> {
            first.getBean(NightlyJobs.class).nightlyReport();
            second.getBean(NightlyJobs.class).nightlyReport();

            assertThat(journal.entries()).as("the shedlock page's warning: both instances ran the job")
                    .containsExactly("report under [lock:{nightly-report}]", "report under [lock:{nightly-report}]");
        }));
    }

    @Test
    void theFixedLeaseRecipeRunsAShortJobOnceWhenTheOtherInstancesTickFiresAfterTheFirstRunEnded() {
        runner().run(first -> runner().run(second -> {
            for (LockService lockService : List.of(first.getBean(LockService.class),
                    second.getBean(LockService.class))) {
                Optional<LockHandle> acquired = lockService.tryLock(LockRequest.of("nightly-report")
                        .withTtl(Duration.ofMinutes(5)).withWatchdog(false).withWaitTime(Duration.ZERO));
                if (acquired.isPresent()) {
                    reports.generate();
                }
            }

            assertThat(journal.entries()).containsExactly("report under [lock:{nightly-report}]");
        }));
    }

    @Test
    void theFixedLeaseJobHoldsItsLockForItsTtl() {
        runner().run(context -> {
            reports.during(() -> journal.note("pttl " + (redis.server().pttl("lock:{sync-prices}") > 9 * 60_000)));
            context.getBean(NightlyJobs.class).syncPrices();
            assertThat(journal.entries()).containsExactly("pttl true", "prices under [lock:{sync-prices}]");
        });
    }

    @Test
    void aJobThatMustNotBeSkippedSilentlyThrowsWhenTheLockIsTaken() {
        runner().run(context -> {
            LockService lockService = context.getBean(LockService.class);
            try (LockHandle otherInstance = lockService.lock("month-end", null, null)) {
                assertThatThrownBy(() -> context.getBean(NightlyJobs.class).monthEnd())
                        .isInstanceOf(LockTimeoutException.class);
            }
            assertThat(journal.entries()).isEmpty();
        });
    }

    // ---------------------------------------------------------------- the guides show exactly this code

    @Test
    void everyBlockOfOursInTheGuidesIsARegionOfThisTest() throws IOException {
        Map<String, String> regions = regions();
        assertThat(regions).as("regions in " + SOURCE).hasSizeGreaterThan(15);
        List<Path> guides = guides();
        assertThat(guides).extracting(guide -> guide.getFileName().toString()).contains("redisson-migration.md",
                "lock4j-migration.md", "shedlock-migration.md", "spring-integration-migration.md");
        List<String> problems = new ArrayList<>();
        int checked = 0;
        for (Path guide : guides) {
            Matcher block = BLOCK.matcher(Files.readString(guide, StandardCharsets.UTF_8));
            while (block.find()) {
                String marker = block.group(1).strip();
                Matcher ours = OURS.matcher(marker);
                String where = guide.getFileName() + ", line " + (countLines(block, guide) + 1);
                if (ours.matches()) {
                    String region = regions.get(ours.group(1));
                    if (region == null) {
                        problems.add(where + ": no region '" + ours.group(1) + "' in " + SOURCE.getFileName());
                    }
                    else if (!region.equals(normalise(block.group(2)))) {
                        problems.add(where + ": differs from the region '" + ours.group(1) + "' in "
                                + SOURCE.getFileName() + ", which is:\n" + region);
                    }
                    checked++;
                }
                else if (!marker.equals("<!-- theirs -->")) {
                    problems.add(where + ": a Java block needs a marker line right above it, <!-- ours: region --> "
                            + "for our code (checked against " + SOURCE.getFileName() + ") or <!-- theirs --> for a "
                            + "peer's; found '" + marker + "'");
                }
            }
        }
        assertThat(problems).isEmpty();
        assertThat(checked).as("blocks of ours checked").isGreaterThanOrEqualTo(12);
    }

    private static long countLines(Matcher block, Path guide) throws IOException {
        return Files.readString(guide, StandardCharsets.UTF_8).substring(0, block.start()).lines().count();
    }

    /** The tagged regions of this file, de-indented. */
    private static Map<String, String> regions() throws IOException {
        Map<String, String> regions = new LinkedHashMap<>();
        Matcher region = REGION.matcher(Files.readString(SOURCE, StandardCharsets.UTF_8));
        while (region.find()) {
            regions.put(region.group(1), normalise(region.group(2)));
        }
        return regions;
    }

    /** Lines without their common indentation and trailing blanks. */
    private static String normalise(String code) {
        List<String> lines = code.lines().map(String::stripTrailing).toList();
        int indent = lines.stream().filter(line -> !line.isEmpty())
                .mapToInt(line -> line.length() - line.stripLeading().length()).min().orElse(0);
        return String.join("\n", lines.stream().map(line -> line.isEmpty() ? line : line.substring(indent)).toList());
    }

    private static List<Path> guides() throws IOException {
        try (Stream<Path> files = Files.list(ConfigurationReferenceTest.repositoryRoot().resolve("docs/migration"))) {
            return files.filter(file -> file.toString().endsWith(".md")).sorted().toList();
        }
    }

    private List<String> heldLocks() {
        return journal.heldLocks();
    }

    // ---------------------------------------------------------------- the beans the guides annotate

    /** Order operations as a migrated service declares them. */
    static class OrderService {

        private final Orders orders;

        @Autowired
        @Lazy
        private OrderService self;

        OrderService(Orders orders) {
            this.orders = orders;
        }

        // tag::annotation-key[]
        @DistributedLock(key = "#order.id", ttl = "60s", waitTime = "1s")
        public void pay(Order order) {
            orders.ship(order.id());
        }
        // end::annotation-key[]

        // tag::annotation-composite-key[]
        @DistributedLock(key = "#order.id + ':' + #order.customer")   // one lock named by both values
        public void rename(Order order) {
            orders.ship(order.id());
        }
        // end::annotation-composite-key[]

        // tag::annotation-several-keys[]
        @DistributedLock(keys = { "'account:' + #from", "'account:' + #to" })   // two locks, both or none
        public void transfer(String from, String to, long cents) {
            orders.ship(from + "->" + to);
        }
        // end::annotation-several-keys[]

        // tag::annotation-method-lock[]
        @DistributedLock   // no key: the lock is named OrderService.rebuildIndex
        public void rebuildIndex() {
            orders.ship("index");
        }
        // end::annotation-method-lock[]

        // tag::annotation-nested[]
        @DistributedLock(key = "'order:' + #id")
        public void shipAll(String id) {
            self.reserve(id);   // through the proxy: same key, same thread, so it joins this hold
            orders.ship(id);
        }

        @DistributedLock(key = "'order:' + #id", waitTime = "0s")
        public void reserve(String id) {
            orders.reserve(id);
        }
        // end::annotation-nested[]

        // tag::annotation-failure-handler[]
        @DistributedLock(key = "'order:' + #id", waitTime = "200ms", failureHandler = "orderBusy")
        public void cancel(String id) {
            orders.ship(id);
        }
        // end::annotation-failure-handler[]
    }

    /** Scheduled jobs that one instance at a time runs. */
    static class NightlyJobs {

        private final Reports reports;

        NightlyJobs(Reports reports) {
            this.reports = reports;
        }

        // tag::scheduled-skip[]
        @Scheduled(cron = "0 0 2 * * *")
        @DistributedLock(key = "'nightly-report'", ttl = "10m", waitTime = "0s", onFailure = FailureAction.SKIP)
        public void nightlyReport() {
            reports.generate();
        }
        // end::scheduled-skip[]

        // tag::scheduled-min-hold[]
        @Scheduled(cron = "0 0 2 * * *")
        @DistributedLock(key = "'nightly-report'", ttl = "10m", minHold = "1m", waitTime = "0s",
                onFailure = FailureAction.SKIP)
        public void nightlyReportOncePerTick() {
            reports.generate();
        }
        // end::scheduled-min-hold[]

        // tag::scheduled-fixed-lease[]
        @Scheduled(fixedDelay = 60_000)
        @DistributedLock(key = "'sync-prices'", ttl = "10m", waitTime = "0s", onFailure = FailureAction.SKIP,
                watchdog = Watchdog.DISABLED)
        public void syncPrices() {
            reports.syncPrices();
        }
        // end::scheduled-fixed-lease[]

        // tag::scheduled-throw[]
        @Scheduled(cron = "0 0 3 1 * *")
        @DistributedLock(key = "'month-end'", waitTime = "0s")   // taken elsewhere: LockTimeoutException
        public void monthEnd() {
            reports.generate();
        }
        // end::scheduled-throw[]
    }

    @Configuration(proxyBeanMethods = false)
    static class FailureHandlers {

        // tag::failure-handler-bean[]
        @Bean
        LockFailureHandler orderBusy() {
            return failure -> {
                throw new OrderBusyException(failure.key(), failure.cause());
            };
        }
        // end::failure-handler-bean[]
    }

    record Order(String id, String customer) {
    }

    static class OrderBusyException extends RuntimeException {

        OrderBusyException(String key, Throwable cause) {
            super("Order lock " + key + " is busy; try again", cause);
        }
    }

    // ---------------------------------------------------------------- stand-ins for the application's code

    /** Records each piece of guarded work with the lock keys held in Redis at the time. */
    static final class Journal {

        private final List<String> entries = new CopyOnWriteArrayList<>();

        void note(String what) {
            entries.add(what);
        }

        void record(String what) {
            entries.add(what + " under " + heldLocks());
        }

        List<String> entries() {
            return entries;
        }

        List<String> heldLocks() {
            return redis.server().scan("lock:*").stream().filter(key -> key.endsWith("}")).sorted().toList();
        }
    }

    static final class Orders {

        private final Journal journal;

        private volatile Runnable afterShipping = () -> { };

        Orders(Journal journal) {
            this.journal = journal;
        }

        String ship(String id) {
            journal.record("ship " + id);
            afterShipping.run();
            return "shipped " + id;
        }

        void reserve(String id) {
            journal.record("reserve " + id);
        }

        void flagForReview(String id) {
            journal.record("review " + id);
        }

        void afterShipping(Runnable action) {
            this.afterShipping = action;
        }
    }

    static final class Reports {

        private final Journal journal;

        private volatile Runnable during = () -> { };

        Reports(Journal journal) {
            this.journal = journal;
        }

        void generate() {
            during.run();
            journal.record("report");
        }

        void syncPrices() {
            during.run();
            journal.record("prices");
        }

        void during(Runnable action) {
            this.during = action;
        }
    }

    static final class Ledger {

        private final Journal journal;

        private final List<Long> tokens = new CopyOnWriteArrayList<>();

        Ledger(Journal journal) {
            this.journal = journal;
        }

        void post(String account, long cents, long fencingToken) {
            tokens.add(fencingToken);
            journal.record("post " + account);
        }

        List<Long> tokens() {
            return tokens;
        }
    }

    static final class Importer {

        private final Journal journal;

        private volatile Runnable onStop = () -> { };

        Importer(Journal journal) {
            this.journal = journal;
        }

        void run(String feed) {
            journal.record("import " + feed);
        }

        void stop() {
            onStop.run();
        }

        void onStop(Runnable action) {
            this.onStop = action;
        }
    }
    // @formatter:on

}
