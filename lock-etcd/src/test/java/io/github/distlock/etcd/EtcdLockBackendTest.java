package io.github.distlock.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.LeaseOption;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import io.github.distlock.LockHandle;
import io.github.distlock.core.InspectableLockBackend.LockState;
import io.github.distlock.core.InspectableLockBackend.Reachability;
import io.github.distlock.core.LockKey;
import io.github.distlock.testsupport.EtcdTestCluster;

/**
 * What an operator and the Actuator see of the etcd backend, on a real 3-member cluster:
 * readable keys in create order, and inspection and ping answers.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class EtcdLockBackendTest {

    private EtcdTestCluster etcd;

    private EtcdFaultTest.Client locks;

    private Client raw;

    private final ExecutorService threads = Executors.newCachedThreadPool();

    @BeforeAll
    void start() {
        etcd = EtcdTestCluster.start();
        locks = new EtcdFaultTest.Client(EtcdLockBackend.connect(EtcdSettings.of(etcd.endpoints())));
        raw = Client.builder().endpoints(etcd.endpoints().toArray(String[]::new)).build();
    }

    @AfterAll
    void stop() {
        threads.shutdownNow();
        raw.close();
        locks.close();
        etcd.close();
    }

    @Test
    void anOperatorFindsTheHolderAndItsWaitersUnderTheReadableLockNameInCreateOrder() throws Exception {
        LockHandle holder = locks.locks.lock("tenant/7:report", Duration.ofSeconds(10), Duration.ZERO);
        Future<LockHandle> waiter = threads
            .submit(() -> locks.locks.lock("tenant/7:report", Duration.ofSeconds(10), Duration.ofSeconds(60)));
        LockKey key = locks.backend.lockKey("tenant/7:report");
        await().atMost(Duration.ofSeconds(30)).until(() -> locks.backend.inspect(key).queueLength() == 1);

        List<KeyValue> keys = raw.getKVClient()
            .get(bytes("distlock/lock/tenant%2F7:report/"),
                    GetOption.builder()
                        .isPrefix(true)
                        .withSortField(GetOption.SortTarget.CREATE)
                        .withSortOrder(GetOption.SortOrder.ASCEND)
                        .build())
            .get(10, TimeUnit.SECONDS)
            .getKvs();

        assertThat(keys).hasSize(2);
        assertThat(keys.get(0).getKey().toString(StandardCharsets.UTF_8))
            .matches("distlock/lock/tenant%2F7:report/[0-9a-f]{32}");
        assertThat(keys.get(0).getCreateRevision()).as("the holder's key is first, its revision the token")
            .isEqualTo(holder.fencingToken());
        assertThat(keys.get(0).getValue().toString(StandardCharsets.UTF_8)).as("who wrote it").contains("@");
        holder.release();
        LockHandle next = waiter.get(30, TimeUnit.SECONDS);
        assertThat(next.fencingToken()).isEqualTo(keys.get(1).getCreateRevision());
        next.release();
    }

    @Test
    void inspectionShowsTheHolderTheLeaseLeftTheQueueAndTheFencingToken() throws Exception {
        LockKey key = locks.backend.lockKey("inspected");
        assertThat(locks.backend.inspect(key)).isEqualTo(LockState.free(0, 0));
        LockHandle holder = locks.locks.lock("inspected", Duration.ofMillis(4_500), Duration.ZERO);
        Future<LockHandle> waiter = threads
            .submit(() -> locks.locks.lock("inspected", Duration.ofSeconds(10), Duration.ofSeconds(60)));
        await().atMost(Duration.ofSeconds(30)).until(() -> locks.backend.inspect(key).queueLength() == 1);

        LockState held = locks.backend.inspect(key);

        assertThat(held.held()).isTrue();
        assertThat(held.leaseLeftMillis()).as("a lease of ceil(4.5 s) = 5 s").isPositive().isLessThanOrEqualTo(5_000);
        assertThat(held.queueLength()).isEqualTo(1);
        assertThat(held.lastFencingToken()).isEqualTo(holder.fencingToken());
        holder.release();
        waiter.get(30, TimeUnit.SECONDS).release();
        assertThat(locks.backend.inspect(key).held()).isFalse();
    }

    @Test
    void aWaitersWatchIsConfirmedByEtcdBeforeItCountsAsDeliveringAndStopsWithTheLastLockOfTheDirectory()
            throws Exception {
        LockKey key = locks.backend.lockKey("watched");
        assertThat(locks.backend.isDelivering(key)).as("no watch before anyone waits").isFalse();
        LockHandle holder = locks.locks.lock("watched", Duration.ofSeconds(10), Duration.ZERO);
        Future<LockHandle> waiter = threads
            .submit(() -> locks.locks.lock("watched", Duration.ofSeconds(10), Duration.ofSeconds(60)));

        await().atMost(Duration.ofSeconds(30)).until(() -> locks.backend.isDelivering(key));
        holder.release();
        waiter.get(30, TimeUnit.SECONDS).release();
        assertThat(locks.backend.isDelivering(key)).as("stopped once none of ours is left there").isFalse();
    }

    /**
     * Granting and revoking a lease are Raft writes: the lease of a released lock serves
     * the next lock of the same lease length, kept alive first, so it lasts the whole ttl
     * again; it never carries two keys at once.
     */
    @Test
    void aReleasedLocksLeaseServesTheNextLockWithItsWholeLengthAhead() throws Exception {
        LockHandle first = locks.locks.lock("reused:1", Duration.ofSeconds(20), Duration.ZERO);
        long firstLease = leaseOf("reused:1");
        Thread.sleep(1_500);
        assertThat(first.release()).isTrue();

        LockHandle second = locks.locks.lock("reused:2", Duration.ofSeconds(20), Duration.ZERO);
        LockHandle third = locks.locks.lock("reused:3", Duration.ofSeconds(20), Duration.ZERO);

        assertThat(leaseOf("reused:2")).as("the released lock's lease").isEqualTo(firstLease);
        assertThat(leaseOf("reused:3")).as("a lease of its own while the other is in use").isNotEqualTo(firstLease);
        long ttl = raw.getLeaseClient().timeToLive(firstLease, LeaseOption.DEFAULT).get(10, TimeUnit.SECONDS).getTTL();
        assertThat(ttl).as("kept alive before its new key was put on it").isGreaterThan(18);
        LockHandle otherLength = locks.locks.lock("reused:4", Duration.ofSeconds(40), Duration.ZERO);
        assertThat(leaseOf("reused:4")).as("another length, another lease").isNotEqualTo(firstLease);
        second.release();
        third.release();
        otherLength.release();
    }

    /**
     * A release that finds its key gone (deleted by an operator here; a lease that ran
     * out alike) keeps nothing: that lease is revoked, not handed to the next lock.
     */
    @Test
    void aLeaseWhoseKeyWasGoneAtReleaseIsRevokedNotReused() throws Exception {
        LockHandle held = locks.locks.lock("deleted:1", Duration.ofSeconds(20), Duration.ZERO);
        long lease = leaseOf("deleted:1");
        raw.getKVClient()
            .delete(bytes("distlock/lock/deleted:1/"), DeleteOption.builder().isPrefix(true).build())
            .get(10, TimeUnit.SECONDS);

        assertThat(held.release()).isFalse();

        await().atMost(Duration.ofSeconds(10))
            .until(() -> raw.getLeaseClient()
                .timeToLive(lease, LeaseOption.DEFAULT)
                .get(10, TimeUnit.SECONDS)
                .getTTL() == -1);
        LockHandle next = locks.locks.lock("deleted:2", Duration.ofSeconds(20), Duration.ZERO);
        assertThat(leaseOf("deleted:2")).isNotEqualTo(lease);
        next.release();
    }

    /**
     * A spare lease that is gone by the time it is reused (revoked behind the backend's
     * back here; one that ran out alike): the put on it fails, or the keep-alive sent
     * with it finds nothing, and the acquisition starts over on a new lease, unnoticed by
     * the caller.
     */
    @Test
    void aSpareLeaseThatIsGoneWhenReusedGivesWayToANewOne() throws Exception {
        LockHandle first = locks.locks.lock("gone:1", Duration.ofSeconds(25), Duration.ZERO);
        long lease = leaseOf("gone:1");
        assertThat(first.release()).isTrue();
        raw.getLeaseClient().revoke(lease).get(10, TimeUnit.SECONDS);

        LockHandle next = locks.locks.lock("gone:2", Duration.ofSeconds(25), Duration.ZERO);

        assertThat(next.isHeld()).isTrue();
        long newLease = leaseOf("gone:2");
        assertThat(newLease).isNotEqualTo(lease);
        assertThat(raw.getLeaseClient().timeToLive(newLease, LeaseOption.DEFAULT).get(10, TimeUnit.SECONDS).getTTL())
            .isGreaterThan(20);
        assertThat(next.release()).isTrue();
    }

    private long leaseOf(String name) throws Exception {
        List<KeyValue> keys = raw.getKVClient()
            .get(bytes("distlock/lock/" + name + "/"), GetOption.builder().isPrefix(true).build())
            .get(10, TimeUnit.SECONDS)
            .getKvs();
        assertThat(keys).as("the keys of " + name).hasSize(1);
        return keys.get(0).getLease();
    }

    @Test
    void pingReportsEveryMemberAndAMajorityQuorum() {
        Reachability reachability = locks.backend.ping();

        assertThat(reachability.nodes()).hasSize(3);
        assertThat(reachability.quorum()).isEqualTo(2);
        assertThat(reachability.reachableNodes()).isEqualTo(3);
        assertThat(reachability.nodes()).allSatisfy(node -> assertThat(node.error()).isNull());
    }

    private static ByteSequence bytes(String text) {
        return ByteSequence.from(text, StandardCharsets.UTF_8);
    }

}
