package io.github.distlock.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.autoconfigure.task.TaskExecutionAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.task.AsyncTaskExecutor;

import io.github.distlock.DistributedLock;
import io.github.distlock.testsupport.RedisServerExtension;

import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordingFile;

/**
 * An application on virtual threads ({@code spring.threads.virtual.enabled=true}): 10,000
 * virtual threads from Spring Boot's own task executor call one {@code @DistributedLock}
 * method over 100 keys, all at once. Each key admits one caller at a time (an in-section
 * counter per key never exceeds 1, and a read-then-write counter per key loses no
 * update), every lock is gone from Redis afterwards, and a JFR recording of
 * {@code jdk.VirtualThreadPinned} with no threshold holds no event that the library
 * caused: a waiting caller parks its virtual thread instead of blocking its carrier. Pins
 * inside the JDK or the drivers (a class that Netty loads on first use) are printed, not
 * failed on.
 *
 * <p>
 * Needs Java 21 or later (virtual threads); on Java 17 it is skipped with a message. CI
 * runs it in the Java 25 leg.
 */
class VirtualThreadContentionTest {

    private static final int THREADS = 10_000;

    private static final int KEYS = 100;

    private static final String LIBRARY_PACKAGE = "io.github.distlock.";

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    @Test
    void tenThousandVirtualThreadsOverOneHundredKeysExcludeEachOtherLeaveNothingLockedAndPinNoCarrier(
            @TempDir Path recordingDirectory) throws Exception {
        assumeTrue(Runtime.version().feature() >= 21, () -> "Virtual threads need Java 21 or later; this JVM is Java "
                + Runtime.version() + ". CI runs this test in its Java 25 leg (.ci/run).");

        new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(BootAutoConfigurations.REDIS, AopAutoConfiguration.class,
                    TaskExecutionAutoConfiguration.class, DistributedLockAutoConfiguration.class,
                    DistributedLockAnnotationAutoConfiguration.class))
            .withBean(KeyedCounters.class)
            .withPropertyValues("spring.threads.virtual.enabled=true", "spring.data.redis.host=" + redis.host(),
                    "spring.data.redis.port=" + redis.port(),
                    // Generous: 10,000 threads on a loaded CI machine must not turn a
                    // slow reply into a failure;
                    // what this test checks is exclusion and pinning, not latency.
                    "distributed-lock.operation-timeout=30s", "spring.data.redis.connect-timeout=30s",
                    "spring.data.redis.timeout=30s")
            .run(context -> {
                assertThat(context).hasNotFailed();
                KeyedCounters counters = context.getBean(KeyedCounters.class);
                AsyncTaskExecutor executor = context.getBean("applicationTaskExecutor", AsyncTaskExecutor.class);
                counters.increment(0); // connects and loads the scripts, outside the
                                       // measured run
                counters.reset();

                AtomicInteger platformThreads = new AtomicInteger();
                CountDownLatch start = new CountDownLatch(1);
                List<Future<?>> calls = new ArrayList<>(THREADS);
                Path recordingFile = recordingDirectory.resolve("pinned.jfr");
                long startedNanos;
                try (Recording recording = new Recording()) {
                    recording.enable("jdk.VirtualThreadPinned").withThreshold(Duration.ZERO).withStackTrace();
                    recording.start();
                    for (int i = 0; i < THREADS; i++) {
                        int key = i % KEYS;
                        calls.add(executor.submit(() -> {
                            if (!isVirtual(Thread.currentThread())) {
                                platformThreads.incrementAndGet();
                            }
                            awaitUninterruptibly(start);
                            counters.increment(key);
                        }));
                    }
                    startedNanos = System.nanoTime();
                    start.countDown();
                    for (Future<?> call : calls) {
                        // A bound only so that a hang fails the build instead of stalling
                        // it; nothing is timed.
                        call.get(10, TimeUnit.MINUTES);
                    }
                    recording.stop();
                    recording.dump(recordingFile);
                }
                Duration elapsed = Duration.ofNanos(System.nanoTime() - startedNanos);

                List<RecordedEvent> pinned = RecordingFile.readAllEvents(recordingFile)
                    .stream()
                    .filter(event -> event.getEventType().getName().equals("jdk.VirtualThreadPinned"))
                    .toList();
                List<String> pinnedInLibrary = pinned.stream()
                    .filter(VirtualThreadContentionTest::pinnedByLibrary)
                    .map(VirtualThreadContentionTest::describe)
                    .toList();
                System.out.printf(
                        "virtual-thread contention: %d calls over %d keys in %d ms on Java %s; "
                                + "jdk.VirtualThreadPinned events: %d in all, %d by %s; callers of the others: %s%n",
                        THREADS, KEYS, elapsed.toMillis(), Runtime.version(), pinned.size(), pinnedInLibrary.size(),
                        LIBRARY_PACKAGE,
                        pinned.stream()
                            .filter(event -> !pinnedByLibrary(event))
                            .map(VirtualThreadContentionTest::innermostFrameOutsideTheJdk)
                            .distinct()
                            .toList());

                assertThat(platformThreads).as("calls that ran on a platform thread").hasValue(0);
                for (int key = 0; key < KEYS; key++) {
                    assertThat(counters.mostInside(key)).as("most callers inside the section of key %d at once", key)
                        .isEqualTo(1);
                    assertThat(counters.count(key)).as("increments of key %d (fewer: lost updates)", key)
                        .isEqualTo(THREADS / KEYS);
                }
                // The fencing counters (lock:{k}:fence) outlive their locks on purpose:
                // tokens must keep
                // increasing. Anything else under the prefix, a lock or a waiter's entry,
                // is left behind.
                assertThat(redis.server().scan("lock:*")).as("keys left under the lock prefix")
                    .allMatch(key -> key.endsWith("}:fence"));
                assertThat(pinnedInLibrary).as("virtual threads pinned inside %s", LIBRARY_PACKAGE).isEmpty();
            });
    }

    /**
     * Whether the library pinned the thread: whether the innermost frame outside the JDK
     * is the library's own (not this test's, nor its bean's proxy's). A pin inside the
     * JDK is charged to the code that called into it. The library's frames lower on the
     * stack do not count: on Java 24 and later a monitor no longer pins, so what pins is
     * the JDK itself (a class being loaded by another thread, a native frame), and a
     * lazily loaded class of Netty or Lettuce, first used from inside a lock call, is
     * theirs and the JDK's, not ours.
     */
    private static boolean pinnedByLibrary(RecordedEvent event) {
        String caller = innermostFrameOutsideTheJdk(event);
        return caller.startsWith(LIBRARY_PACKAGE) && !caller.startsWith(VirtualThreadContentionTest.class.getName());
    }

    private static String innermostFrameOutsideTheJdk(RecordedEvent event) {
        if (event.getStackTrace() == null) {
            return "(no stack trace)";
        }
        for (RecordedFrame frame : event.getStackTrace().getFrames()) {
            String type = frame.getMethod().getType().getName();
            if (!type.startsWith("java.") && !type.startsWith("jdk.") && !type.startsWith("sun.")) {
                return type + "." + frame.getMethod().getName();
            }
        }
        return "(only JDK frames)";
    }

    private static String describe(RecordedEvent event) {
        return event.getDuration().toNanos() + " ns pinned at\n"
                + event.getStackTrace()
                    .getFrames()
                    .stream()
                    .map(frame -> "    " + frame.getMethod().getType().getName() + "." + frame.getMethod().getName()
                            + ":" + frame.getLineNumber())
                    .collect(Collectors.joining("\n"));
    }

    // Thread.isVirtual() is Java 21 API, and the tests compile for Java 17.
    private static boolean isVirtual(Thread thread) {
        try {
            return (Boolean) Thread.class.getMethod("isVirtual").invoke(thread);
        }
        catch (ReflectiveOperationException ex) {
            throw new IllegalStateException("Thread.isVirtual() is missing on Java " + Runtime.version(), ex);
        }
    }

    private static void awaitUninterruptibly(CountDownLatch latch) {
        try {
            latch.await();
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted before the start signal", ex);
        }
    }

    /**
     * One counter per key, incremented under that key's lock with a read, a yield and a
     * write, so two callers inside the same section at once would lose an update; and how
     * many callers were inside each section at once.
     */
    static class KeyedCounters {

        private final AtomicIntegerArray counts = new AtomicIntegerArray(KEYS);

        private final AtomicIntegerArray inside = new AtomicIntegerArray(KEYS);

        private final AtomicIntegerArray mostInside = new AtomicIntegerArray(KEYS);

        @DistributedLock(key = "'vt:' + #key", ttl = "30s", waitTime = "5m")
        public void increment(int key) {
            int now = inside.incrementAndGet(key);
            mostInside.accumulateAndGet(key, now, Math::max);
            int seen = counts.get(key);
            // Gives any other caller inside this section (there must be none) the chance
            // to interleave.
            Thread.yield();
            counts.set(key, seen + 1);
            inside.decrementAndGet(key);
        }

        public void reset() {
            for (int key = 0; key < KEYS; key++) {
                counts.set(key, 0);
                mostInside.set(key, 0);
            }
        }

        public int count(int key) {
            return counts.get(key);
        }

        public int mostInside(int key) {
            return mostInside.get(key);
        }

    }

}
