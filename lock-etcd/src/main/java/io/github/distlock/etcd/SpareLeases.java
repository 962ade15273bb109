package io.github.distlock.etcd;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongConsumer;

import org.jspecify.annotations.Nullable;

/**
 * The leases of released acquisitions, kept for the next acquisitions that ask for a
 * lease of the same length instead of being revoked. Granting a lease and revoking it are
 * each a Raft write, which every member fsyncs; the keep-alive that readies a spare lease
 * for its next key is answered by the leader alone. Each lease still carries one
 * acquisition's key at a time: a lease that runs out loses that lock and no other.
 *
 * <p>
 * Only a lease whose key was deleted by its release comes here (a key that was already
 * gone may mean the lease ran out). A spare is handed out at most half its length after
 * it came back, newest first, and the caller keeps it alive as it puts its key on it,
 * counting the lock held only once the keep-alive found the lease; older ones are
 * revoked. At most {@link #MAX_SPARES} are kept.
 *
 * <pre>{@code
 * Spare spare = spares.take(30, revoke);       // null: grant a new lease
 * ...                                           // keep it alive and put the key on it
 * spares.offer(leaseId, 30, revoke);            // after the release deleted the key
 * }</pre>
 */
final class SpareLeases {

    /** Enough for every thread of a busy application to find one. */
    static final int MAX_SPARES = 64;

    /** A lease with no key on it, and when it came back. */
    record Spare(long leaseId, long seconds, long returnedNanos) {
    }

    private final Map<Long, ConcurrentLinkedDeque<Spare>> bySeconds = new ConcurrentHashMap<>();

    private final AtomicInteger count = new AtomicInteger();

    /**
     * The newest spare lease of {@code seconds} that is still young enough, or
     * {@code null}; those found too old on the way are passed to {@code revoke}.
     */
    @Nullable Spare take(long seconds, LongConsumer revoke) {
        ConcurrentLinkedDeque<Spare> spares = bySeconds.get(seconds);
        if (spares == null) {
            return null;
        }
        long now = System.nanoTime();
        for (Spare spare = spares.pollFirst(); spare != null; spare = spares.pollFirst()) {
            count.decrementAndGet();
            if (now - spare.returnedNanos() <= TimeUnit.SECONDS.toNanos(seconds) / 2) {
                return spare;
            }
            revoke.accept(spare.leaseId());
        }
        return null;
    }

    /**
     * Keeps {@code leaseId}, of {@code seconds}, for a later acquisition; passes it to
     * {@code revoke} instead if {@link #MAX_SPARES} are kept already.
     */
    void offer(long leaseId, long seconds, LongConsumer revoke) {
        if (count.incrementAndGet() > MAX_SPARES) {
            count.decrementAndGet();
            revoke.accept(leaseId);
            return;
        }
        bySeconds.computeIfAbsent(seconds, length -> new ConcurrentLinkedDeque<>())
            .offerFirst(new Spare(leaseId, seconds, System.nanoTime()));
    }

    /** Every spare lease, taken out: on close, to revoke them. */
    List<Long> drain() {
        List<Long> drained = new ArrayList<>();
        bySeconds.values().forEach(spares -> {
            for (Spare spare = spares.pollFirst(); spare != null; spare = spares.pollFirst()) {
                count.decrementAndGet();
                drained.add(spare.leaseId());
            }
        });
        return drained;
    }

}
