package io.github.distlock.benchmarks.adapter;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.lock.LockResponse;
import io.etcd.jetcd.support.CloseableClient;
import io.grpc.stub.StreamObserver;

/**
 * jetcd's own {@code Lock} API (etcd's server-side lock service, v3lock), used as a
 * competent user would, in one of two ways.
 * <ul>
 * <li><b>One lease per client</b> (the default): one lease granted when the client opens
 * and kept alive by jetcd's keep-alive stream, and every lock of the client attached to
 * it, as etcd's own Go {@code concurrency.Session} does. A cycle is then two RPCs, Lock
 * and Unlock. The price: losing that one lease loses every lock of the client at once,
 * and two threads of one client must not lock the same name (etcd sees one owner, the
 * lease), so the contended scenario gives each thread a client of its own.</li>
 * <li><b>One lease per lock</b>: a lease granted for each acquisition and revoked after
 * the unlock (not awaited), so one lock's loss is one lease's; what ours does. Four RPCs
 * per cycle, three awaited.</li>
 * </ul>
 * Leases are 30 s, our default ttl. A wait that runs out cancels the Lock call; etcd may
 * still grant it later, which only a lease's end undoes (jetcd has no way to withdraw a
 * queued Lock), so the contended scenario's 10 s wait is never meant to run out.
 */
final class JetcdLockAdapter implements LockAdapter {

    private static final long LEASE_SECONDS = 30;

    private final Client client;

    private final boolean leasePerLock;

    private final long clientLease;

    private final CloseableClient keepAlive;

    private final long waitMillis;

    JetcdLockAdapter(ConsensusTarget target, boolean leasePerLock) {
        this.client = Client.builder().endpoints(target.etcdEndpoints().toArray(String[]::new)).build();
        this.leasePerLock = leasePerLock;
        this.waitMillis = target.waitTime().toMillis();
        if (leasePerLock) {
            clientLease = 0;
            keepAlive = null;
        }
        else {
            clientLease = await(client.getLeaseClient().grant(LEASE_SECONDS), 10_000).getID();
            keepAlive = client.getLeaseClient().keepAlive(clientLease, new StreamObserver<LeaseKeepAliveResponse>() {
                @Override
                public void onNext(LeaseKeepAliveResponse response) {
                }

                @Override
                public void onError(Throwable failure) {
                }

                @Override
                public void onCompleted() {
                }
            });
        }
    }

    @Override
    public void runLocked(String key, Runnable criticalSection) {
        long lease = leasePerLock ? await(client.getLeaseClient().grant(LEASE_SECONDS), waitMillis).getID()
                : clientLease;
        try {
            CompletableFuture<LockResponse> locking = client.getLockClient()
                .lock(ByteSequence.from("bench/jetcd/" + key, StandardCharsets.UTF_8), lease);
            LockResponse locked;
            try {
                locked = locking.get(waitMillis, TimeUnit.MILLISECONDS);
            }
            catch (TimeoutException ex) {
                locking.cancel(true);
                throw new LockNotAcquiredException(key);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for a jetcd lock", ex);
            }
            catch (ExecutionException ex) {
                throw new IllegalStateException("jetcd lock of " + key + " failed", ex.getCause());
            }
            try {
                criticalSection.run();
            }
            finally {
                await(client.getLockClient().unlock(locked.getKey()), waitMillis);
            }
        }
        finally {
            if (leasePerLock) {
                // Not awaited, as ours does not await its own: the unlock already freed
                // the lock, and a lease that is not revoked runs out on its own.
                client.getLeaseClient().revoke(lease);
            }
        }
    }

    private static <T> T await(CompletableFuture<T> future, long millis) {
        try {
            return future.get(millis, TimeUnit.MILLISECONDS);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for etcd", ex);
        }
        catch (ExecutionException ex) {
            throw new IllegalStateException("etcd call failed", ex.getCause());
        }
        catch (TimeoutException ex) {
            throw new IllegalStateException("etcd did not answer within " + Duration.ofMillis(millis), ex);
        }
    }

    @Override
    public void close() {
        if (keepAlive != null) {
            keepAlive.close();
            try {
                await(client.getLeaseClient().revoke(clientLease), 5_000);
            }
            catch (IllegalStateException ex) {
                // The lease runs out on its own.
            }
        }
        client.close();
    }

}
