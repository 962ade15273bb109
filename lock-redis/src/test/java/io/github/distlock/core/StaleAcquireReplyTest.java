package io.github.distlock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.LockTimeoutException;
import io.github.distlock.testsupport.FaultRule;
import io.github.distlock.testsupport.RedisFaultProxy;
import io.github.distlock.testsupport.RedisServerExtension;

/**
 * An acquire whose reply arrives after the lease it granted has run out: the acquisition
 * undoes it and, with wait time left, tries again. Whatever the undo leaves pending must
 * not hit the lock that the retry then takes.
 */
class StaleAcquireReplyTest {

    private static final String KEY = "stale";

    private static final String LOCK = "lock:{stale}";

    private static final Duration OPERATION_TIMEOUT = Duration.ofSeconds(2);

    /**
     * Shorter than the delay of the acquire's reply below, so the lease has run out when
     * the reply comes.
     */
    private static final Duration TTL = Duration.ofMillis(800);

    @RegisterExtension
    static final RedisServerExtension redisExtension = new RedisServerExtension().resetBeforeEach();

    private ProxiedLockServices services;

    private RedisFaultProxy proxy;

    @BeforeEach
    void connect() {
        services = ProxiedLockServices.start(redisExtension.server(), OPERATION_TIMEOUT);
        proxy = services.proxy;
    }

    @AfterEach
    void disconnect() throws Exception {
        services.close();
    }

    /**
     * The acquire's reply comes after the 800 ms lease it granted, so the acquisition
     * undoes it (DefaultLockService, Acquisition.held); that release's reply is lost (the
     * connection hangs), so PendingReleases retries it in the background. Had the
     * acquisition gone on with the same token (as it did before the fix), its next
     * attempt would have taken the lock and the background retry would then have released
     * it under the new handle: two holders. Now the acquisition ends without the lock,
     * and its token is never used again.
     */
    @ParameterizedTest(name = "first attempt: {0}")
    @EnumSource(value = LockCommand.class, names = { "BARE_ACQUIRE", "ACQUIRE_SCRIPT" })
    void aPendingUndoOfAnExpiredAcquisitionDoesNotReleaseTheLockTheSameCallTakesNext(LockCommand firstAttempt)
            throws Exception {
        proxy.onNext(firstAttempt.on(LOCK)).delayReply(TTL.plusMillis(200));
        FaultRule lostRelease = proxy.onNext(LockCommand.RELEASE_SCRIPT.on(LOCK)).dropReplyAndHang();
        LockRequest request = LockRequest.of(KEY).withTtl(TTL).withWaitTime(Duration.ofSeconds(10)).withWatchdog(false);
        LockRequest asked = firstAttempt == LockCommand.ACQUIRE_SCRIPT ? request.withFencingToken() : request;
        CompletableFuture<Optional<LockHandle>> call = CompletableFuture
            .supplyAsync(() -> services.proxied.service.tryLock(asked));

        // The undo's release timed out, and its background retry now sits on the hung
        // connection.
        await().atMost(Duration.ofSeconds(20)).until(lostRelease::isUsedUp);
        long scriptsBefore = proxy.commandCount("EVALSHA");
        await().atMost(Duration.ofSeconds(20)).until(() -> proxy.commandCount("EVALSHA") > scriptsBefore);
        proxy.heal();

        Optional<LockHandle> first = call.get(10, TimeUnit.SECONDS);
        // A second instance that waits a little must not get the lock while the first
        // handle reports it held.
        Optional<LockHandle> second = services.direct.service.tryLock(KEY, TTL, TTL.dividedBy(2));
        boolean firstStillHeld = first.map(LockHandle::isHeld).orElse(false);
        assertThat(second.isPresent() && firstStillHeld)
            .as("both handles report %s held; Redis holds %s", LOCK, services.lockValue(LOCK))
            .isFalse();
        assertThat(first).as("an acquisition whose lease ran out before it was returned ends without the lock")
            .isEmpty();
        second.ifPresent(LockHandle::release);
    }

    @Test
    void lockSaysTheLeaseRanOutBeforeTheReplyNotThatAnotherOwnerHoldsIt() {
        proxy.onNext(LockCommand.BARE_ACQUIRE.on(LOCK)).delayReply(TTL.plusMillis(200));
        LockRequest request = LockRequest.of(KEY).withTtl(TTL).withWaitTime(Duration.ofSeconds(10)).withWatchdog(false);

        assertThatThrownBy(() -> services.proxied.service.lock(request)).isInstanceOf(LockTimeoutException.class)
            .hasMessageContaining("was granted, but its lease of 800 ms had run out")
            .hasMessageContaining("no other owner held it")
            .hasMessageContaining("Raise the ttl")
            .hasMessageNotContaining("held by another owner");
        await().atMost(Duration.ofSeconds(20)).until(() -> services.lockValue(LOCK) == null);
    }

}
