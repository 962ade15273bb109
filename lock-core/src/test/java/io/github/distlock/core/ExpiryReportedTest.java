package io.github.distlock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.core.DefaultLockService.LockDefaults;
import io.github.distlock.memory.InMemoryLockBackend;

/**
 * {@link LockRequest#withExpiryReported}: a fixed lease that runs out before its release
 * is a lost lock, told to the handle and the listeners once, when it runs out; without
 * it, a fixed lease expires quietly, as a lock meant to expire rather than be released
 * does.
 */
class ExpiryReportedTest {

    private static final Duration PATIENCE = Duration.ofSeconds(10);

    private static final Duration LEASE = Duration.ofMillis(300);

    private final InMemoryLockBackend store = new InMemoryLockBackend();

    private final List<String> lostLeases = new CopyOnWriteArrayList<>();

    private final RecordingLockListener listener = new RecordingLockListener(lostLeases);

    private final LeaseWatchdog watchdog = new LeaseWatchdog(store, 1.0 / 3);

    private final DefaultLockService service = new DefaultLockService("in-memory", store, watchdog,
            new LockDefaults(Duration.ofSeconds(30), Duration.ZERO, true), new LockWaiters(), listener);

    @AfterEach
    void close() {
        service.close();
        watchdog.close();
    }

    private LockHandle fixed(String key, Boolean expiryReported) {
        return service.lock(LockRequest.of(key).withTtl(LEASE).withWatchdog(false).withExpiryReported(expiryReported));
    }

    @Test
    void aFixedLeaseThatRunsOutUnreleasedIsReportedLostOnceWhenItRunsOut() {
        LockHandle held = fixed("report", true);
        List<LockHandle> told = new CopyOnWriteArrayList<>();
        held.onLost(told::add);

        await().atMost(PATIENCE).until(() -> !told.isEmpty());
        assertThat(held.isLost()).isTrue();
        assertThat(held.isHeld()).isFalse();
        assertThat(listener.of("report")).contains("lost report expired");
        assertThat(lostLeases).singleElement().asString().contains("fixed lease of 300 ms").contains("ran out");

        assertThat(held.release()).as("nothing of ours left").isFalse();
        assertThat(listener.of("report")).as("the release adds no second loss")
            .containsSubsequence("lost report expired", "released report already-gone")
            .filteredOn((event) -> event.startsWith("lost"))
            .hasSize(1);
        assertThat(told).containsExactly(held);
        assertThat(watchdog.watchedLeases()).isZero();
    }

    @Test
    void withoutItAFixedLeaseExpiresQuietly() {
        LockHandle held = fixed("rate-limit", null);

        await().atMost(PATIENCE).until(() -> !held.isHeld());
        // Longer than the lease: a report would have come by now.
        await().during(LEASE).atMost(PATIENCE).until(() -> !held.isLost() && lostLeases.isEmpty());
        assertThat(held.release()).isFalse();
        assertThat(listener.of("rate-limit")).last().isEqualTo("released rate-limit already-gone");
        assertThat(listener.of("rate-limit")).noneMatch((event) -> event.startsWith("lost"));
    }

    @Test
    void aLeaseReleasedInTimeIsNeverReportedLostAfterwards() {
        LockHandle held = fixed("quick", true);
        assertThat(held.release()).isTrue();

        await().during(LEASE.multipliedBy(2)).atMost(PATIENCE).until(() -> !held.isLost() && lostLeases.isEmpty());
        assertThat(listener.of("quick")).last().isEqualTo("released quick released");
    }

    @Test
    void anExtensionMovesTheReportToTheNewEndOfTheLease() {
        LockHandle held = fixed("extended", true);
        assertThat(held.extend(Duration.ofSeconds(2))).isTrue();

        await().during(LEASE.multipliedBy(2)).atMost(PATIENCE).until(() -> !held.isLost() && held.isHeld());
        await().atMost(PATIENCE).until(held::isLost);
        assertThat(listener.of("extended")).contains("lost extended expired");
    }

    @Test
    void aReleaseThatFindsTheLockGoneBeforeItsLeaseEndedReportsItLost() {
        LockHandle held = service.lock(
                LockRequest.of("deleted").withTtl(Duration.ofSeconds(20)).withWatchdog(false).withExpiryReported(true));
        assertThat(store.forceRelease("deleted")).isTrue();

        assertThat(held.release()).isFalse();
        await().atMost(PATIENCE).until(held::isLost);
        await().atMost(PATIENCE).until(() -> listener.of("deleted").contains("lost deleted expired-or-taken"));
        assertThat(lostLeases).singleElement().asString().contains("the release found the key gone");
    }

    @Test
    void aRenewedLeaseIgnoresIt() {
        LockHandle held = service
            .lock(LockRequest.of("renewed").withTtl(LEASE).withWatchdog(true).withExpiryReported(true));

        await().during(LEASE.multipliedBy(3)).atMost(PATIENCE).until(() -> held.isHeld() && !held.isLost());
        assertThat(held.release()).isTrue();
        assertThat(lostLeases).isEmpty();
    }

}
