package io.github.distlock.sample.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * The failover demo's claims, from its own master and replica: lost without acks, refused
 * with them.
 */
class FailoverDemoTest {

    @Test
    void lockIsLostWithoutReplicaAcksAndRefusedWithThem() {
        List<FailoverDemo.Row> rows = FailoverDemo.run();

        FailoverDemo.Row withoutAcks = rows.get(0);
        assertThat(withoutAcks.replicaAcks()).isZero();
        assertThat(withoutAcks.linkCut()).isTrue();
        assertThat(withoutAcks.acquiredA()).as("A got the lock on the master").isTrue();
        assertThat(withoutAcks.onReplica()).as("the replica never received it").isFalse();
        assertThat(withoutAcks.acquiredB()).as("B took it on the promoted replica").isTrue();
        assertThat(withoutAcks.holders()).isEqualTo(2);

        FailoverDemo.Row refused = rows.get(1);
        assertThat(refused.replicaAcks()).isEqualTo(1);
        assertThat(refused.linkCut()).isTrue();
        assertThat(refused.acquiredA()).isFalse();
        assertThat(refused.refusalA())
            .isEqualTo("0 of 1 replica acks in " + FailoverDemo.ACK_TIMEOUT.toMillis() + " ms");
        assertThat(refused.acquiredB()).isTrue();
        assertThat(refused.holders()).isEqualTo(1);

        FailoverDemo.Row confirmed = rows.get(2);
        assertThat(confirmed.linkCut()).isFalse();
        assertThat(confirmed.acquiredA()).isTrue();
        assertThat(confirmed.onReplica()).as("the acknowledged lock survived the failover").isTrue();
        assertThat(confirmed.acquiredB()).isFalse();
        assertThat(confirmed.holders()).isEqualTo(1);

        String table = FailoverDemo.table(rows).toString();
        System.out.println(table);
        assertThat(table).contains("| 2: lock lost |", "refused: 0 of 1 replica acks");
    }

}
