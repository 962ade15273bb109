package io.github.distlock.redlock;

import java.util.List;
import java.util.concurrent.TimeUnit;

import io.github.distlock.core.LockBackend.LeaseRenewal;
import io.github.distlock.core.LockBackend.RenewalOutcome;
import io.github.distlock.core.LockBackend.RenewalOutcomes;

/**
 * Renewal of a Redlock's leases: each batch goes to every node at once, and each lease
 * stays held only while a majority renewed it within the round's validity. Once so many
 * nodes answered "not ours" that no majority is left, it is lost.
 */
final class QuorumRenewal {

    private final QuorumCall calls;

    private final NodeHealth health;

    QuorumRenewal(QuorumCall calls, NodeHealth health) {
        this.calls = calls;
        this.health = health;
    }

    /**
     * As {@link io.github.distlock.core.LockBackend#renew}, over a majority of the nodes.
     */
    void renew(List<LeaseRenewal> renewals, RenewalOutcomes outcomes) {
        if (renewals.isEmpty()) {
            return;
        }
        long start = System.nanoTime();
        // Every answer is waited for: each lease needs its own majority. This runs on the
        // watchdog's thread, not a caller's.
        List<Vote<RenewalOutcome[]>> answers = calls.ask((index, node) -> {
            RenewalOutcome[] perLease = new RenewalOutcome[renewals.size()];
            node.renew(renewals, (lease, outcome) -> perLease[lease] = outcome);
            return perLease;
        }, votesSoFar -> false);
        List<Vote<RenewalOutcome[]>> votes = health.heldBack(answers);
        long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        int quorum = calls.quorum();
        for (int i = 0; i < renewals.size(); i++) {
            int renewed = 0;
            int lost = 0;
            for (int node = 0; node < votes.size(); node++) {
                if (votes.get(node) instanceof Vote.Answer<RenewalOutcome[]> answer
                        && answer.value()[i] == RenewalOutcome.RENEWED) {
                    renewed++;
                }
                // "Not ours" is true even from a node whose votes are held back: it
                // forgot the lock.
                if (answers.get(node) instanceof Vote.Answer<RenewalOutcome[]> answer
                        && answer.value()[i] == RenewalOutcome.LOST) {
                    lost++;
                }
            }
            long ttl = renewals.get(i).ttlMillis();
            if (renewed >= quorum && calls.validity(ttl, elapsedMillis) > 0) {
                outcomes.outcome(i, RenewalOutcome.RENEWED);
            }
            else if (lost > calls.size() - quorum) {
                // So many nodes say "not ours" that no majority can hold it any more.
                outcomes.outcome(i, RenewalOutcome.LOST);
            }
            else {
                outcomes.outcome(i, RenewalOutcome.FAILED);
            }
        }
    }

}
