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

}
