package io.github.distlock.redlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/**
 * The delayed-restart rule of one node, fed the outcomes of {@code INFO server} checks as
 * {@link LettuceRedlockNodes} reads them: above all, that a changed {@code run_id} is a
 * restart whatever the uptime says (issue 27, violation 3).
 */
@ExtendWith(OutputCaptureExtension.class)
class NodeRestartGuardTest {

    private final AtomicLong longestLeaseMillis = new AtomicLong(60_000);

    private NodeRestartGuard guard(boolean durable) {
        return new NodeRestartGuard("lock-1:6379", durable, longestLeaseMillis::get);
    }

    @Test
    void aNodeUpLongerThanTheLongestLeaseVotesAsSoonAsItIsChecked() {
        NodeRestartGuard guard = guard(false);
        assertThat(guard.votes()).as("before the first check").isFalse();

        guard.verified(guard.epoch(), "a1", 3_600);

        assertThat(guard.votes()).isTrue();
    }

    @Test
    void aChangedRunIdWithALongUptimeIsHeldBackForTheLongestLeaseFromWhenTheChangeWasSeen() {
        NodeRestartGuard guard = guard(false);
        guard.verified(guard.epoch(), "a1", 3_600);

        // Another server, up for an hour, now answers at the node's address.
        guard.verified(guard.epoch(), "b2", 3_600);
        assertThat(guard.votes()).isFalse();
        // Its next checks report an even longer uptime: the hold-back runs from the
        // change all the same.
        guard.verified(guard.epoch(), "b2", 7_200);
        assertThat(guard.votes()).isFalse();

        // It ends one longest lease after the change was seen (shortened here, so the
        // test does not wait a minute).
        longestLeaseMillis.set(300);
        await().atMost(Duration.ofSeconds(5)).until(guard::votes);
    }

    @Test
    void theHoldBackOfAChangedRunIdIsLoggedNamingTheNodeBothRunIdsAndHowLong(CapturedOutput output) {
        NodeRestartGuard guard = guard(false);
        guard.verified(guard.epoch(), "0a0a0a", 3_600);

        guard.verified(guard.epoch(), "1b1b1b", 3_600);
        guard.verified(guard.epoch(), "1b1b1b", 3_601);

        assertThat(output).contains("WARN")
            .contains("Redlock node lock-1:6379 changed its run_id from 0a0a0a to 1b1b1b")
            .contains("longest lease (PT1M) from now")
            .contains("distributed-lock.redlock.durable-nodes");
        assertThat(output.toString().split("changed its run_id", -1)).as("logged once per change").hasSize(2);
    }

    @Test
    void aDurableNodeIsTrustedAfterARunIdChangeAsItKeepsItsLocksAcrossARestart() {
        NodeRestartGuard guard = guard(true);
        guard.verified(guard.epoch(), "a1", 3_600);

        guard.verified(guard.epoch(), "b2", 3_600);

        assertThat(guard.votes()).isTrue();
    }

    /**
     * A node's clock that jumped forward may have let its leases go early: a durable node
     * is held back too, from the reply that showed the jump, and the WARN names the node
     * and the jump.
     */
    @Test
    void aForwardJumpOfTheNodesClockHoldsEvenADurableNodeBackForTheLongestLease(CapturedOutput output) {
        NodeRestartGuard guard = guard(true);
        guard.verified(guard.epoch(), "a1", 3_600);
        long start = System.nanoTime();
        long clockMicros = 1_800_000_000_000_000L;
        guard.serverTime("a1", start, start, clockMicros);
        assertThat(guard.votes()).isTrue();

        // A second later by this JVM's clock, the node's clock reads 30 s later.
        long later = start + 1_000_000_000L;
        guard.serverTime(later, later, clockMicros + 31_000_000L);

        assertThat(guard.votes()).isFalse();
        assertThat(output).contains("Redlock node lock-1:6379's clock jumped forward by at least 29")
            .contains("Keep the nodes' clocks slewed");
        longestLeaseMillis.set(300);
        await().atMost(Duration.ofSeconds(5)).until(guard::votes);
    }

    /**
     * Another server at the node's address has a clock of its own: that is a changed
     * {@code run_id}, held back as such, and no clock jump.
     */
    @Test
    void anotherServersClockIsNotAJump(CapturedOutput output) {
        NodeRestartGuard guard = guard(false);
        long start = System.nanoTime();
        guard.serverTime("a1", start, start, 1_800_000_000_000_000L);
        guard.verified(guard.epoch(), "a1", 3_600);

        guard.serverTime("b2", start + 1_000_000, start + 1_000_000, 1_800_000_090_000_000L);
        guard.verified(guard.epoch(), "b2", 3_600);

        assertThat(output).doesNotContain("clock jumped");
        assertThat(output).contains("changed its run_id from a1 to b2");
    }

}
