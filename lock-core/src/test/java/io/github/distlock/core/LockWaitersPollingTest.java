package io.github.distlock.core;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * How release hints wake the threads polling for a lock (a backend without a wait queue,
 * such as Redlock): the longest waiter first, one per release however many nodes announce
 * it, and a wake-up its waiter did not use goes to the next. No Redis and no clock: each
 * waiter's state is read with a zero-length wait.
 */
class LockWaitersPollingTest {

    private static final LockKey KEY = new LockKey("order:1", "lock:{order:1}");

    private final LockWaiters waiters = new LockWaiters();

    @Test
    void aReleaseHintWakesTheLongestWaiterOnly() {
        LockWaiters.Poller first = waiters.enterPolling(KEY);
        LockWaiters.Poller second = waiters.enterPolling(KEY);

        waiters.releaseHinted(KEY.storeKey(), "release-1");

        assertThat(first.await(0)).isTrue();
        assertThat(second.await(0)).isFalse();
    }

    @Test
    void theSameReleaseAnnouncedByEveryNodeWakesOneWaiter() {
        LockWaiters.Poller first = waiters.enterPolling(KEY);
        LockWaiters.Poller second = waiters.enterPolling(KEY);
        waiters.releaseHinted(KEY.storeKey(), "release-1");
        first.attempting();
        first.acquired = true;
        waiters.leavePolling(KEY, first);

        // The other nodes' announcements of the release the first waiter already
        // answered.
        waiters.releaseHinted(KEY.storeKey(), "release-1");
        waiters.releaseHinted(KEY.storeKey(), "release-1");
        assertThat(second.await(0)).as("woken by a release already answered").isFalse();

        waiters.releaseHinted(KEY.storeKey(), "release-2");
        assertThat(second.await(0)).as("woken by the next release").isTrue();
    }

    @Test
    void aWakeUpItsWaiterDidNotUseGoesToTheNextInLine() {
        LockWaiters.Poller first = waiters.enterPolling(KEY);
        LockWaiters.Poller second = waiters.enterPolling(KEY);
        waiters.releaseHinted(KEY.storeKey(), "release-1");

        waiters.leavePolling(KEY, first); // timed out before it could try

        assertThat(second.await(0)).isTrue();
    }

    @Test
    void aWaiterThatTriedAgainIsNotWokenByTheReleaseItAnswered() {
        LockWaiters.Poller only = waiters.enterPolling(KEY);
        waiters.releaseHinted(KEY.storeKey(), "release-1");

        only.attempting(); // and lost it to another instance

        assertThat(only.await(0)).isFalse();
        assertThat(waiters.wakePending(KEY)).isFalse();
    }

    @Test
    void untilTheWokenWaiterTriesNewCallersQueueBehindIt() {
        assertThat(waiters.wakePending(KEY)).as("nobody waits").isFalse();
        LockWaiters.Poller first = waiters.enterPolling(KEY);
        assertThat(waiters.wakePending(KEY)).as("a waiter, not woken").isFalse();

        // Released here; its announcement is on its way to the first waiter.
        waiters.releasedHere(KEY, true);
        assertThat(waiters.wakePending(KEY)).isTrue();
        assertThat(first.await(0)).as("woken by the announcement, not by the release itself").isFalse();

        first.attempting();
        assertThat(waiters.wakePending(KEY)).isFalse();
    }

    @Test
    void withoutAnnouncementsAReleaseHereWakesTheLongestWaiterAtOnce() {
        LockWaiters.Poller first = waiters.enterPolling(KEY);

        waiters.releasedHere(KEY, false);

        assertThat(first.await(0)).isTrue();
    }

    @Test
    void pollersCountAsWaitingAndTheKeyIsForgottenWithTheLastOfThem() {
        LockWaiters.Poller first = waiters.enterPolling(KEY);
        LockWaiters.Poller second = waiters.enterPolling(KEY);
        assertThat(waiters.waiting()).isEqualTo(2);

        waiters.leavePolling(KEY, first);
        waiters.leavePolling(KEY, second);

        assertThat(waiters.waiting()).isZero();
        // A hint for a key nobody waits for is dropped, and creates nothing.
        waiters.releaseHinted(KEY.storeKey(), "release-1");
        assertThat(waiters.waiting()).isZero();
        assertThat(waiters.wakePending(KEY)).isFalse();
    }

}
