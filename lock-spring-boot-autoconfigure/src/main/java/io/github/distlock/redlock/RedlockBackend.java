package io.github.distlock.redlock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

import org.springframework.context.SmartLifecycle;

import io.github.distlock.LockBackendException;
import io.github.distlock.core.LockBackend;
import io.github.distlock.core.LockKey;
import io.github.distlock.redis.RedisKeyNaming;

/**
 * Redlock: one lock over N independent Redis masters, held while a majority of them holds it.
 *
 * <p>Each node is a single-Redis {@link LockBackend} of its own (in practice a
 * {@link io.github.distlock.redis.RedisLockBackend} on its own client), so every node runs the same
 * commands and scripts as a single Redis does, with the same wire format. On top of them:
 * <ul>
 * <li><b>Acquire</b> asks every node at once ({@code SET NX PX GET}), each bounded by the node
 * timeout. It succeeds only if at least N/2+1 nodes granted it and the lock is still valid:
 * validity = ttl − time the vote took − (ttl × drift factor + 2 ms), on the monotonic clock.
 * Otherwise it releases on every node, those that did not answer included (a no-show may have set
 * the key after all), and reports the lock taken; the lock service retries after a random delay
 * within the wait time.</li>
 * <li><b>Renew</b> extends the lease on every node at once. A lease stays held only while a
 * majority renewed it within the round's validity; once so many nodes answered "not ours" that no
 * majority is left, it is lost.</li>
 * <li><b>Release</b> runs on every node at once, and reports released when a majority released.</li>
 * </ul>
 *
 * <p>Fewer than a majority answering at all is not "taken" but a backend failure:
 * {@link RedlockQuorumException}, naming how many nodes answered, so a caller can tell an outage
 * from contention.
 *
 * <p>No wait queue and no fencing tokens: a waiter polls ({@code retry-delay}), and a fencing token
 * over a changing quorum needs a design of its own.
 *
 * <pre>{@code
 * List<LockBackend> nodes = ...;   // one RedisLockBackend per independent master
 * RedlockBackend redlock = new RedlockBackend(nodes, List.of("lock-1:6379", ...), "lock:",
 *         Duration.ofMillis(50), 0.01, null);
 * // or, on Lettuce clients of its own: LettuceRedlockNodes.connect(uris, timeout, "lock:").redlock(0.01)
 * }</pre>
 */
public final class RedlockBackend implements LockBackend, SmartLifecycle, AutoCloseable {

    /** The fixed part of the drift allowance: clocks tick in milliseconds. */
    private static final long DRIFT_FLOOR_MILLIS = 2;

    private final List<LockBackend> nodes;
    private final List<String> nodeNames;
    private final String keyPrefix;
    private final long nodeTimeoutNanos;
    private final double driftFactor;
    private final int quorum;
    private final ExecutorService fanOut;
    /** Closed last: what the nodes run on (their clients), or nothing. */
    private final AutoCloseable resources;
    private volatile boolean running = true;

    /**
     * @param nodes one backend per independent master, each bounding its calls by the node timeout
     * @param nodeNames the nodes' names for messages, in the same order (their URIs without passwords)
     * @param keyPrefix prefix of every lock's key, for example {@code lock:}
     * @param nodeTimeout the bound each node's calls have; a vote waits for the slowest node this long
     * @param driftFactor the share of the ttl allowed for clock drift between the nodes
     * @param resources closed after the nodes, when this backend closes (their clients); may be
     *        {@code null}
     */
    public RedlockBackend(List<? extends LockBackend> nodes, List<String> nodeNames, String keyPrefix,
            Duration nodeTimeout, double driftFactor, AutoCloseable resources) {
        if (nodes.size() < 3) {
            throw new IllegalArgumentException("Redlock needs at least 3 nodes, got " + nodes.size());
        }
        if (nodeNames.size() != nodes.size()) {
            throw new IllegalArgumentException("One name per node: " + nodeNames.size() + " names, " + nodes.size()
                    + " nodes");
        }
        this.nodes = List.copyOf(nodes);
        this.nodeNames = List.copyOf(nodeNames);
        this.keyPrefix = Objects.requireNonNull(keyPrefix, "keyPrefix");
        this.nodeTimeoutNanos = nodeTimeout.toNanos();
        this.driftFactor = driftFactor;
        this.quorum = nodes.size() / 2 + 1;
        this.fanOut = Executors.newCachedThreadPool(daemonThreads());
        this.resources = resources;
    }

    private static ThreadFactory daemonThreads() {
        AtomicInteger count = new AtomicInteger();
        return task -> {
            Thread thread = new Thread(task, "distributed-lock-redlock-" + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }

    /** How many nodes must agree: N/2+1. */
    public int quorum() {
        return quorum;
    }

    /** The nodes' names, in order. */
    public List<String> nodeNames() {
        return nodeNames;
    }

    @Override
    public LockKey lockKey(String name) {
        return RedisKeyNaming.lockKey(keyPrefix, name);
    }

    @Override
    public AcquireResult tryAcquire(LockKey key, String token, long ttlMillis) {
        long start = System.nanoTime();
        List<Vote<AcquireResult>> votes = ask(node -> node.tryAcquire(key, token, ttlMillis));
        long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        int granted = 0;
        int answered = 0;
        for (Vote<AcquireResult> vote : votes) {
            if (vote.answered()) {
                answered++;
                if (vote.value().acquired()) {
                    granted++;
                }
            }
        }
        long validity = ttlMillis - elapsedMillis - drift(ttlMillis);
        if (granted >= quorum && validity > 0) {
            return AcquireResult.acquired(0, validity);
        }
        // Lost the vote, ran out of validity, or too few answered: give back whatever was set,
        // on the nodes that granted it and on those that did not answer, which may have set the key
        // all the same. Nodes that answered "taken" hold nothing of ours.
        boolean[] mayHoldOurs = new boolean[votes.size()];
        for (int i = 0; i < votes.size(); i++) {
            mayHoldOurs[i] = !votes.get(i).answered() || votes.get(i).value().acquired();
        }
        releaseOn(mayHoldOurs, key, token);
        if (answered < quorum) {
            throw new RedlockQuorumException(key, "acquire", answered, nodes.size(), quorum, failures(votes));
        }
        return AcquireResult.notAcquired(0, 0);
    }

    @Override
    public boolean release(LockKey key, String token) {
        List<Vote<Boolean>> votes = ask(node -> node.release(key, token));
        int released = 0;
        int answered = 0;
        for (Vote<Boolean> vote : votes) {
            if (vote.answered()) {
                answered++;
                if (vote.value()) {
                    released++;
                }
            }
        }
        if (released >= quorum) {
            return true;
        }
        if (answered < quorum) {
            // Unknown: a majority may still hold it. The lock service retries in the background.
            throw new RedlockQuorumException(key, "release", answered, nodes.size(), quorum, failures(votes));
        }
        return false;
    }

    private void releaseOn(boolean[] which, LockKey key, String token) {
        boolean any = false;
        for (boolean node : which) {
            any |= node;
        }
        if (any) {
            ask(which, node -> node.release(key, token));
        }
    }

    @Override
    public void renew(List<LeaseRenewal> renewals, RenewalOutcomes outcomes) {
        if (renewals.isEmpty()) {
            return;
        }
        long start = System.nanoTime();
        List<Vote<RenewalOutcome[]>> votes = ask(node -> {
            RenewalOutcome[] perLease = new RenewalOutcome[renewals.size()];
            node.renew(renewals, (index, outcome) -> perLease[index] = outcome);
            return perLease;
        });
        long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        for (int i = 0; i < renewals.size(); i++) {
            int renewed = 0;
            int lost = 0;
            for (Vote<RenewalOutcome[]> vote : votes) {
                RenewalOutcome outcome = vote.answered() ? vote.value()[i] : null;
                if (outcome == RenewalOutcome.RENEWED) {
                    renewed++;
                }
                else if (outcome == RenewalOutcome.LOST) {
                    lost++;
                }
            }
            long ttl = renewals.get(i).ttlMillis();
            if (renewed >= quorum && ttl - elapsedMillis - drift(ttl) > 0) {
                outcomes.outcome(i, RenewalOutcome.RENEWED);
            }
            else if (lost > nodes.size() - quorum) {
                // So many nodes say "not ours" that no majority can hold it any more.
                outcomes.outcome(i, RenewalOutcome.LOST);
            }
            else {
                outcomes.outcome(i, RenewalOutcome.FAILED);
            }
        }
    }

    /** A renewed lease is valid for its ttl less the drift allowance, from the round's start. */
    @Override
    public long renewedValidityMillis(long ttlMillis) {
        return Math.max(0, ttlMillis - drift(ttlMillis));
    }

    private long drift(long ttlMillis) {
        return (long) (ttlMillis * driftFactor) + DRIFT_FLOOR_MILLIS;
    }

    /** One node's answer, or why it gave none. */
    private record Vote<T>(T value, Throwable failure) {

        boolean answered() {
            return failure == null;
        }
    }

    /**
     * Asks every node at once and waits for all, at most the node timeout and a little slack for
     * the threads to be scheduled: each node call bounds itself by the node timeout, so this only
     * cuts off a node that is stuck beyond it. One node is asked on the calling thread, which saves
     * a thread hand-off on the hot path.
     */
    private <T> List<Vote<T>> ask(Function<LockBackend, T> call) {
        boolean[] all = new boolean[nodes.size()];
        Arrays.fill(all, true);
        return ask(all, call);
    }

    /** Asks the nodes marked in {@code which}; the others' votes are "no answer". */
    private <T> List<Vote<T>> ask(boolean[] which, Function<LockBackend, T> call) {
        int n = nodes.size();
        int last = n - 1;
        while (last >= 0 && !which[last]) {
            last--;
        }
        List<Future<T>> futures = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            LockBackend node = nodes.get(i);
            futures.add(i == last ? null : which[i] ? submit(() -> call.apply(node))
                    : CompletableFuture.failedFuture(new IllegalStateException("not asked")));
        }
        Vote<T> local;
        try {
            local = new Vote<>(call.apply(nodes.get(last)), null);
        }
        catch (RuntimeException ex) {
            local = new Vote<>(null, ex);
        }
        List<Vote<T>> votes = new ArrayList<>(n);
        long deadline = System.nanoTime() + nodeTimeoutNanos + TimeUnit.MILLISECONDS.toNanos(5);
        boolean interrupted = false;
        for (Future<T> future : futures) {
            if (future == null) {
                votes.add(local);
                continue;
            }
            while (true) {
                try {
                    votes.add(new Vote<>(future.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS),
                            null));
                    break;
                }
                catch (InterruptedException ex) {
                    // Node calls are not interruptible (LockBackend's contract); keep the flag for later.
                    interrupted = true;
                }
                catch (ExecutionException ex) {
                    votes.add(new Vote<>(null, ex.getCause()));
                    break;
                }
                catch (TimeoutException ex) {
                    future.cancel(false);
                    votes.add(new Vote<>(null, ex));
                    break;
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        return votes;
    }

    private <T> Future<T> submit(Callable<T> task) {
        try {
            return fanOut.submit(task);
        }
        catch (RejectedExecutionException ex) {
            return CompletableFuture.failedFuture(new LockBackendException("", "The Redlock backend is closed", ex));
        }
    }

    /** The nodes that did not answer, and why, for messages. */
    private <T> String failures(List<Vote<T>> votes) {
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < votes.size(); i++) {
            Vote<T> vote = votes.get(i);
            if (!vote.answered()) {
                if (!text.isEmpty()) {
                    text.append("; ");
                }
                Throwable failure = vote.failure();
                text.append(nodeNames.get(i)).append(": ").append(failure instanceof TimeoutException
                        ? "no answer within the node timeout" : String.valueOf(failure.getMessage()));
            }
        }
        return text.toString();
    }

    /** Closes every node, the fan-out threads and the nodes' resources; only the first call does. */
    @Override
    public void close() {
        synchronized (fanOut) {
            if (fanOut.isShutdown()) {
                return;
            }
            running = false;
            fanOut.shutdownNow();
        }
        List<AutoCloseable> closeables = new ArrayList<>();
        for (LockBackend node : nodes) {
            if (node instanceof AutoCloseable closeable) {
                closeables.add(closeable);
            }
        }
        if (resources != null) {
            closeables.add(resources);
        }
        for (AutoCloseable closeable : closeables) {
            try {
                closeable.close();
            }
            catch (Exception ex) {
                // Closing the rest matters more than one failure to close.
            }
        }
    }

    @Override
    public void start() {
        running = true;
    }

    @Override
    public void stop() {
        close();
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    /** Before the clients the nodes run on are shut down. */
    @Override
    public int getPhase() {
        return Integer.MAX_VALUE - 1;
    }
}
