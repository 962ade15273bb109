package io.github.distlock.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Optional;
import java.util.function.Function;

import org.junit.jupiter.api.Test;

import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.LockService;
import io.github.distlock.testsupport.RedisTestServer;
import io.github.distlock.testsupport.RedisTestSentinelGroup;

/**
 * The contract on a Sentinel-managed master, found through three Sentinels, whatever the
 * client; and what only this topology has, a failover. A subclass supplies the client
 * ({@link #applicationProperties()}) and its capabilities.
 */
abstract class AbstractSentinelLockContractTest extends AbstractLockContractTest {

    private static final Duration TTL = Duration.ofSeconds(10);

    @Override
    protected ContractRedis startRedis() {
        return SentinelRedis.start();
    }

    /**
     * Not a promise of the contract (replication is asynchronous), but what a lock that
     * did reach the replica gets: the fixture's failover waits until the replica applied
     * every write, then promotes it.
     */
    @Test
    void aLockReplicatedBeforeAFailoverStillExcludesOthersAndItsHolderReleasesItOnTheNewMaster() {
        String name = name();
        String key = keyspace().lockKey(name);
        LockHandle held = firstInstance().lockService()
            .lock(LockRequest.of(name).withTtl(TTL).withWaitTime(Duration.ZERO).withWatchdog(true));
        RedisTestServer before = group().master();

        RedisTestServer after = group().failover();

        assertThat(after).isNotSameAs(before);
        assertThat(after.command("EXISTS", key)).as("the lock on the new master").isEqualTo(1L);
        Optional<LockHandle> other = afterReconnecting(secondInstance().lockService(),
                service -> service.tryLock(name, TTL, Duration.ZERO));
        assertThat(other).as("another instance, on the new master, is excluded").isEmpty();
        afterReconnecting(firstInstance().lockService(),
                service -> service.tryLock(name() + "-probe", TTL, Duration.ZERO).map(LockHandle::release));
        assertThat(held.isHeld()).isTrue();
        assertThat(held.release()).isTrue();
        assertThat(after.command("EXISTS", key)).as("released on the new master").isEqualTo(0L);
        Optional<LockHandle> next = secondInstance().lockService().tryLock(name, TTL, Duration.ZERO);
        assertThat(next).isPresent();
        assertThat(next.get().release()).isTrue();
    }

    private RedisTestSentinelGroup group() {
        return ((SentinelRedis) redis()).group();
    }

    /**
     * The first answer {@code call} gets once the instance reconnected to the new master.
     */
    private static <T> T afterReconnecting(LockService service, Function<LockService, T> call) {
        return await().atMost(PATIENCE).ignoreExceptions().until(() -> call.apply(service), answer -> true);
    }

}
