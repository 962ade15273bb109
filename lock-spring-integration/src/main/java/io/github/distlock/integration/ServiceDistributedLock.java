package io.github.distlock.integration;

import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

import io.github.distlock.LockAcquisitionException;
import io.github.distlock.LockBackendException;
import io.github.distlock.LockDurations;
import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.LockService;
import org.jspecify.annotations.Nullable;

import org.springframework.integration.support.locks.DistributedLock;

/**
 * One key's lock in a {@link LockServiceLockRegistry}: a local reentrant lock for this
 * JVM's threads, and under it the lock service's handle, taken by a thread's first hold
 * and released by its last unlock.
 */
final class ServiceDistributedLock implements DistributedLock {

    private final LockService lockService;

    private final String key;

    private final Duration ttl;

    private final ReentrantLock local = new ReentrantLock();

    /**
     * Written by the thread holding {@link #local} only; read by others through
     * {@link #heldHandle()}.
     */
    private volatile @Nullable LockHandle handle;

    private volatile long lastObtainedNanos = System.nanoTime();

    ServiceDistributedLock(LockService lockService, String key, Duration ttl) {
        this.lockService = lockService;
        this.key = key;
        this.ttl = ttl;
    }

    @Override
    public void lock() {
        lock(this.ttl);
    }

    @Override
    public void lock(Duration ttl) {
        this.local.lock();
        boolean acquired = false;
        try {
            while (!acquired) {
                acquired = acquireUninterruptibly(ttl, LockDurations.MAX_WAIT_TIME);
            }
        }
        finally {
            if (!acquired) {
                this.local.unlock();
            }
        }
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        this.local.lockInterruptibly();
        boolean acquired = false;
        try {
            while (!acquired) {
                acquired = acquire(this.ttl, LockDurations.MAX_WAIT_TIME);
            }
        }
        finally {
            if (!acquired) {
                this.local.unlock();
            }
        }
    }

    @Override
    public boolean tryLock() {
        if (!this.local.tryLock()) {
            return false;
        }
        boolean acquired = false;
        try {
            acquired = acquireUninterruptibly(this.ttl, Duration.ZERO);
            return acquired;
        }
        finally {
            if (!acquired) {
                this.local.unlock();
            }
        }
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        return tryLock(Duration.ofNanos(unit.toNanos(time)), this.ttl);
    }

    @Override
    public boolean tryLock(Duration waitTime, Duration ttl) throws InterruptedException {
        long deadline = System.nanoTime() + Math.max(0, waitTime.toNanos());
        if (!this.local.tryLock(Math.max(0, waitTime.toNanos()), TimeUnit.NANOSECONDS)) {
            return false;
        }
        boolean acquired = false;
        try {
            acquired = acquire(ttl, Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
            return acquired;
        }
        finally {
            if (!acquired) {
                this.local.unlock();
            }
        }
    }

    @Override
    public void unlock() {
        if (!this.local.isHeldByCurrentThread()) {
            throw new IllegalStateException("Lock '" + this.key + "' is not held by the calling thread ("
                    + Thread.currentThread().getName() + "); only the thread that locked it may unlock it");
        }
        if (this.local.getHoldCount() > 1) {
            this.local.unlock();
            return;
        }
        LockHandle held = this.handle;
        this.handle = null;
        try {
            if (held != null && !held.release()) {
                throw new ConcurrentModificationException("Lock '" + this.key + "' was no longer ours in the store "
                        + "when unlocked: its lease ran out or it was removed, and another owner may have held it "
                        + "meanwhile. The integrity of what it protects may have been compromised.");
            }
        }
        finally {
            this.local.unlock();
        }
    }

    /** Distributed locks have no conditions. */
    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("Lock '" + this.key + "' is a distributed lock: it has no conditions");
    }

    void renew(Duration ttl) {
        LockHandle held = this.local.isHeldByCurrentThread() ? this.handle : null;
        if (held == null) {
            throw new IllegalStateException("Lock '" + this.key + "' cannot be renewed: the calling thread ("
                    + Thread.currentThread().getName() + ") does not hold it");
        }
        if (!held.extend(ttl)) {
            throw new IllegalStateException("Lock '" + this.key + "' cannot be renewed: it is no longer ours in the "
                    + "store (its lease ran out, or it was removed)");
        }
    }

    /** The handle while some thread of this JVM holds the lock. */
    Optional<LockHandle> heldHandle() {
        return this.local.isLocked() ? Optional.ofNullable(this.handle) : Optional.empty();
    }

    void obtained() {
        this.lastObtainedNanos = System.nanoTime();
    }

    boolean isUnusedFor(long nowNanos, long ageNanos) {
        return !this.local.isLocked() && !this.local.hasQueuedThreads() && nowNanos - this.lastObtainedNanos > ageNanos;
    }

    /**
     * Takes the lock service's lock under the local one the calling thread now holds. A
     * reentrant hold keeps the handle it has if that still holds the lock, and otherwise
     * tries for a new one: a lost lease is noticed here.
     * @return whether the calling thread holds the distributed lock
     */
    private boolean acquire(Duration ttl, Duration waitTime) throws InterruptedException {
        LockHandle current = this.handle;
        if (current != null && current.isHeld()) {
            return true;
        }
        LockHandle fresh;
        try {
            // unlock() ends every use of a Lock: a fixed lease (the watchdog turned off)
            // that runs out first is reported lost.
            fresh = this.lockService
                .tryLock(LockRequest.of(this.key).withTtl(ttl).withWaitTime(waitTime).withExpiryReported(true))
                .orElse(null);
        }
        catch (LockAcquisitionException ex) {
            if (ex.getCause() instanceof InterruptedException && !(ex instanceof LockBackendException)) {
                // The lock service leaves the flag set; the Lock contract clears it when
                // it throws.
                Thread.interrupted();
                InterruptedException interrupted = new InterruptedException(
                        "Interrupted while acquiring lock '" + this.key + "'");
                interrupted.initCause(ex);
                throw interrupted;
            }
            throw ex;
        }
        if (fresh == null) {
            return false;
        }
        this.handle = fresh;
        if (current != null) {
            // The lost one: nothing left in the store, but its bookkeeping ends.
            try {
                current.release();
            }
            catch (LockBackendException ex) {
                // Its lease was lost already; the background retry of the release is
                // harmless.
            }
        }
        return true;
    }

    private boolean acquireUninterruptibly(Duration ttl, Duration waitTime) {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return acquire(ttl, waitTime);
                }
                catch (InterruptedException ex) {
                    interrupted = true;
                }
            }
        }
        finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public String toString() {
        return "LockServiceLock[" + this.key + (this.local.isLocked() ? ", locked" : ", unlocked") + "]";
    }

}
