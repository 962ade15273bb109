package io.github.distlock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.testsupport.FaultRule;
import io.github.distlock.testsupport.RedisFaultProxy;
import io.github.distlock.testsupport.RedisServerExtension;
import io.github.distlock.testsupport.RedisTestServer;

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

    private RedisTestServer redis;
    private RedisFaultProxy proxy;
    private LockServiceConnection proxied;
    private LockServiceConnection direct;

    @BeforeEach
    void connect() {
        redis = redisExtension.server();
        proxy = RedisFaultProxy.start(redis);
        proxied = new LockServiceConnection(proxy.host(), proxy.port(), OPERATION_TIMEOUT, false, backend -> backend);
        direct = new LockServiceConnection(redis, OPERATION_TIMEOUT, false);
        // Connected, and every script cached in Redis: no EVALSHA falls back to EVAL, which would reorder commands.
        proxied.service.lock(LockRequest.of("warm-up").withWaitTime(Duration.ZERO).withFencingToken()).release();
        direct.service.lock("warm-up", Duration.ofSeconds(5), Duration.ZERO).release();
    }

    @AfterEach
    void disconnect() throws Exception {
        proxy.heal();
        proxied.close();
        direct.close();
        proxy.close();
    }

    /**
     * The bare SET's reply comes after the 800 ms lease it granted, so the acquisition undoes it; that release's
     * reply is lost (the connection hangs), so PendingReleases retries it 50 ms later in the background. Meanwhile
     * the acquisition goes on waiting with the same token, and its next attempt, re-sent on the reconnected
     * connection, takes the lock. The background retry then releases it: the handle reports the lock held while
     * Redis has deleted it, and a second instance acquires it too.
     */
    @Test
    void aPendingUndoOfAnExpiredAcquisitionDoesNotReleaseTheLockTheSameCallTakesNext() throws Exception {
        proxy.onNext(LockCommand.BARE_ACQUIRE.on(LOCK)).delayReply(TTL.plusMillis(200));
        FaultRule lostRelease = proxy.onNext(LockCommand.RELEASE_SCRIPT.on(LOCK)).dropReplyAndHang();
        CompletableFuture<Optional<LockHandle>> call = CompletableFuture.supplyAsync(() -> proxied.service
                .tryLock(LockRequest.of(KEY).withTtl(TTL).withWaitTime(Duration.ofSeconds(10)).withWatchdog(false)));

        // The undo's release timed out, and the next attempt now sits on the hung connection.
        await().atMost(Duration.ofSeconds(5)).until(lostRelease::isUsedUp);
        long scriptsBefore = proxy.commandCount("EVALSHA");
        await().atMost(Duration.ofSeconds(5)).until(() -> proxy.commandCount("EVALSHA") > scriptsBefore);
        proxy.heal();

        LockHandle handle = call.get(10, TimeUnit.SECONDS).orElseThrow();
        // A second instance that waits a little must not get the lock while the first handle reports it held.
        Optional<LockHandle> second = direct.service.tryLock(KEY, TTL, TTL.dividedBy(2));
        boolean firstStillHeld = handle.isHeld();
        assertThat(second.isPresent() && firstStillHeld)
                .as("both handles report %s held; Redis holds %s, the first handle's token is %s", LOCK,
                        redis.get(LOCK), ((DefaultLockHandle) handle).token())
                .isFalse();
    }
}
