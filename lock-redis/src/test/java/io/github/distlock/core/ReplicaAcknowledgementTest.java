package io.github.distlock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.ReplicaAcknowledgementException;
import io.github.distlock.redis.ReplicaAcks;
import io.github.distlock.testsupport.RedisTestServer;
import io.github.distlock.testsupport.ReplicaFailover;

/**
 * {@code distributed-lock.replica-acks} against real processes: a master, a replica, and
 * a failover that loses exactly the writes the test chooses ({@link ReplicaFailover}).
 * Without acknowledgements the lost write makes two holders; with one, the acquisition
 * fails instead, and a hand-over that no replica has is not taken.
 */
class ReplicaAcknowledgementTest {

    private static final String NAME = "order-42";

    private static final String KEY = "lock:{" + NAME + "}";

    private static final ReplicaAcks ONE_REPLICA = new ReplicaAcks(1, Duration.ofSeconds(1));

    private RedisTestServer master;

    private RedisTestServer replica;

    private final List<LockServiceConnection> connections = new ArrayList<>();

    /** The driver under test; a subclass runs this same contract on another one. */
    LockServiceConnection.Driver driver() {
        return LockServiceConnection.Driver.LETTUCE;
    }

    @BeforeEach
    void startMasterAndReplica() {
        master = RedisTestServer.start();
        replica = RedisTestServer.startReplicaOf(master);
        // The replica's link is up; WAIT counts it only once the master, too, lists it as
        // online.
        await().atMost(Duration.ofSeconds(10))
            .until(() -> master.info("replication").contains("port=" + replica.port() + ",state=online"));
    }

    @AfterEach
    void stop() throws Exception {
        for (LockServiceConnection connection : connections) {
            connection.close();
        }
        replica.close();
        master.close();
    }

    /** A separate application instance, on its own connection to {@code server}. */
    private LockServiceConnection connect(RedisTestServer server, ReplicaAcks acks) {
        LockServiceConnection connection = new LockServiceConnection(driver(), server.host(), server.port(),
                Duration.ofSeconds(5), true, backend -> backend, acks);
        connections.add(connection);
        return connection;
    }

    private static LockRequest request() {
        return LockRequest.of(NAME).withTtl(Duration.ofSeconds(30)).withWaitTime(Duration.ZERO);
    }

    @Test
    void withoutReplicaAcksALockTheFailoverLostIsTakenBySecondClientWhileTheFirstStillHoldsIt() {
        ReplicaFailover failover = ReplicaFailover.of(master, replica);
        LockServiceConnection first = connect(master, ReplicaAcks.NONE);
        failover.cutReplication();

        LockHandle firstHandle = first.service.tryLock(request()).orElseThrow();
        failover.killMasterAndPromoteReplica();
        LockServiceConnection second = connect(replica, ReplicaAcks.NONE);
        Optional<LockHandle> secondHandle = second.service.tryLock(request());

        // The unsafe window: both believe they hold the lock.
        assertThat(firstHandle.isHeld()).isTrue();
        assertThat(secondHandle).hasValueSatisfying(handle -> assertThat(handle.isHeld()).isTrue());
    }

    @Test
    void withOneReplicaAckTheAcquisitionFailsWhenNoReplicaConfirmsItAndTheLockIsReleased() {
        ReplicaFailover failover = ReplicaFailover.of(master, replica);
        LockServiceConnection first = connect(master, ONE_REPLICA);
        failover.cutReplication();

        assertThatThrownBy(() -> first.service.tryLock(request()))
            .isInstanceOfSatisfying(ReplicaAcknowledgementException.class, ex -> {
                assertThat(ex.getKey()).isEqualTo(NAME);
                assertThat(ex.getRequestedAcks()).isEqualTo(1);
                assertThat(ex.getReceivedAcks()).isZero();
                assertThat(ex.getTimeout()).isEqualTo(Duration.ofSeconds(1));
            })
            .hasMessageContaining("'order-42'")
            .hasMessageContaining("only 0 of the 1 replica(s)")
            .hasMessageContaining("distributed-lock.replica-acks=1")
            .hasMessageContaining("distributed-lock.replica-ack-timeout=1s")
            .hasMessageContaining("lower replica-acks");
        // Undone before the exception reached the caller, not in the background.
        assertThat(master.get(KEY)).isNull();

        failover.killMasterAndPromoteReplica();
        LockServiceConnection second = connect(replica, ReplicaAcks.NONE);
        assertThat(second.service.tryLock(request()))
            .hasValueSatisfying(handle -> assertThat(handle.isHeld()).isTrue());
        // The first client never held it: no two holders.
    }

    @Test
    void withOneReplicaAckAHealthyReplicaConfirmsTheAcquisitionBeforeItReturns() {
        LockServiceConnection first = connect(master, ONE_REPLICA);
        long waitsBefore = master.commandCalls("wait");

        LockHandle handle = first.service.tryLock(request()).orElseThrow();

        assertThat(handle.isHeld()).isTrue();
        // WAIT returned 1, so the replica has applied the lock already: no waiting for it
        // here.
        assertThat(replica.get(KEY)).isNotNull().isEqualTo(master.get(KEY));
        assertThat(master.commandCalls("wait")).isEqualTo(waitsBefore + 1);
        assertThat(handle.release()).isTrue();
    }

    @Test
    void withOneReplicaAckAHandOverIsConfirmedByTheNewHolderBeforeItRuns() throws Exception {
        LockServiceConnection first = connect(master, ONE_REPLICA);
        LockServiceConnection second = connect(master, ONE_REPLICA);
        LockHandle firstHandle = first.service.tryLock(request()).orElseThrow();
        String firstToken = master.get(KEY);
        CompletableFuture<Optional<LockHandle>> waiting = CompletableFuture
            .supplyAsync(() -> second.service.tryLock(request().withWaitTime(Duration.ofSeconds(10))));
        await().atMost(Duration.ofSeconds(20)).until(() -> second.waiters.waiting() == 1 && queued());
        long waitsBefore = master.commandCalls("wait");

        assertThat(firstHandle.release()).isTrue();
        LockHandle secondHandle = waiting.get(10, TimeUnit.SECONDS).orElseThrow();

        assertThat(secondHandle.isHeld()).isTrue();
        assertThat(secondHandle.fencingToken()).isPositive();
        String secondToken = master.get(KEY);
        assertThat(secondToken).isNotNull().isNotEqualTo(firstToken);
        // Confirmed on the new holder's connection before tryLock returned: the replica
        // has the hand-over.
        assertThat(replica.get(KEY)).isEqualTo(secondToken);
        assertThat(master.commandCalls("wait")).isEqualTo(waitsBefore + 1);
        assertThat(secondHandle.release()).isTrue();
    }

    @Test
    void withOneReplicaAckAHandOverNoReplicaConfirmsIsNotTakenAndIsReleased() throws Exception {
        ReplicaFailover failover = ReplicaFailover.of(master, replica);
        LockServiceConnection first = connect(master, ONE_REPLICA);
        LockServiceConnection second = connect(master, ONE_REPLICA);
        LockHandle firstHandle = first.service.tryLock(request()).orElseThrow();
        CompletableFuture<Optional<LockHandle>> waiting = CompletableFuture
            .supplyAsync(() -> second.service.tryLock(request().withWaitTime(Duration.ofSeconds(10))));
        await().atMost(Duration.ofSeconds(20)).until(() -> second.waiters.waiting() == 1 && queued());
        failover.cutReplication();

        assertThat(firstHandle.release()).isTrue();

        assertThat(waiting).failsWithin(Duration.ofSeconds(10))
            .withThrowableOfType(Exception.class)
            .havingRootCause()
            .isInstanceOf(ReplicaAcknowledgementException.class)
            .withMessageContaining("only 0 of the 1 replica(s)");
        assertThat(master.get(KEY)).isNull();
    }

    @Test
    void withOneReplicaAckTheWatchdogRenewalsAreConfirmedAndTheReplicaKeepsTheLease() {
        LockServiceConnection first = connect(master, ONE_REPLICA);
        // Long enough that a loaded machine cannot stall the acquisition past the lease.
        LockHandle handle = first.service.tryLock(request().withTtl(Duration.ofMillis(1800))).orElseThrow();
        long waitsAfterAcquire = master.commandCalls("wait");

        // Renewed every 600 ms; each renewal round is confirmed with a WAIT of its own.
        await().atMost(Duration.ofSeconds(15)).until(() -> master.commandCalls("wait") >= waitsAfterAcquire + 4);

        assertThat(handle.isHeld()).isTrue();
        assertThat(first.lostLeases).isEmpty();
        assertThat(replica.pttl(KEY)).isPositive();
        assertThat(replica.get(KEY)).isEqualTo(master.get(KEY));
        assertThat(handle.release()).isTrue();
    }

    @Test
    void withOneReplicaAckARenewalNoReplicaConfirmsDoesNotExtendTheHandlesLease() {
        ReplicaFailover failover = ReplicaFailover.of(master, replica);
        LockServiceConnection first = connect(master, ONE_REPLICA);
        LockHandle handle = first.service.tryLock(request().withTtl(Duration.ofMillis(1500))).orElseThrow();
        failover.cutReplication();

        // Renewals run on the master but are not confirmed: the handle's lease is not
        // extended, and it ends.
        await().atMost(Duration.ofSeconds(10)).until(() -> !handle.isHeld());
        assertThat(master.commandCalls("wait")).isGreaterThanOrEqualTo(2);
        assertThat(master.pttl(KEY)).as("extended on the master, which the handle does not count").isPositive();
    }

    /** Whether the second client's attempt has queued it behind the holder. */
    private boolean queued() {
        Object size = master.command("ZCARD", KEY + ":queue");
        return size instanceof Long count && count == 1;
    }

}
