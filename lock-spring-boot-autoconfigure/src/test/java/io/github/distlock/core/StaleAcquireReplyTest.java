package io.github.distlock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.testsupport.FaultRule;
import io.github.distlock.testsupport.RedisFaultProxy;
import io.github.distlock.testsupport.RedisServerExtension;

/**
 * An acquire whose reply arrives after the lease it granted has run out: the acquisition undoes it and, with wait
 * time left, tries again. Whatever the undo leaves pending must not hit the lock that the retry then takes.
 */
class StaleAcquireReplyTest {

    private static final String KEY = "stale";
    private static final String LOCK = "lock:{stale}";
    private static final Duration OPERATION_TIMEOUT = Duration.ofSeconds(2);
    /** Shorter than the delay of the acquire's reply below, so the lease has run out when the reply comes. */
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
     * The acquire's reply comes after the 800 ms lease it granted, so the acquisition undoes it (DefaultLockService,
     * Acquisition.held); that release's reply is lost (the connection hangs), so PendingReleases retries it 50 ms
     * later in the background. Meanwhile the acquisition goes on with the same token: after the bare SET it falls
     * through to waiting (Acquisition.run), after acquire.lua it loops (Acquisition.attemptAndWait, "continue"). Its
     * next attempt, re-sent on the reconnected connection, takes the lock. The background retry then releases it:
     * the handle reports the lock held while Redis has deleted it, and a second instance acquires it too.
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

        // The undo's release timed out, and the next attempt now sits on the hung connection.
        await().atMost(Duration.ofSeconds(5)).until(lostRelease::isUsedUp);
        long scriptsBefore = proxy.commandCount("EVALSHA");
        await().atMost(Duration.ofSeconds(5)).until(() -> proxy.commandCount("EVALSHA") > scriptsBefore);
        proxy.heal();

        LockHandle handle = call.get(10, TimeUnit.SECONDS).orElseThrow();
        // A second instance that waits a little must not get the lock while the first handle reports it held.
        Optional<LockHandle> second = services.direct.service.tryLock(KEY, TTL, TTL.dividedBy(2));
        boolean firstStillHeld = handle.isHeld();
        assertThat(second.isPresent() && firstStillHeld)
                .as("both handles report %s held; Redis holds %s, the first handle's token is %s", LOCK,
                        services.lockValue(LOCK), ((DefaultLockHandle) handle).token())
                .isFalse();
    }
}
