package io.github.distlock.shedlock;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

import io.github.distlock.LockHandle;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;

/**
 * A ShedLock lock over one {@link LockHandle}. ShedLock's contract: once unlocked or
 * extended, this object is spent (both throw {@link IllegalStateException} after that);
 * an extension returns a new one over the same handle.
 */
final class ServiceLock implements SimpleLock {

    private final LockHandle handle;

    private final Instant heldAtLeastUntil;

    private final AtomicBoolean spent = new AtomicBoolean();

    ServiceLock(LockHandle handle, Instant heldAtLeastUntil) {
        this.handle = handle;
        this.heldAtLeastUntil = heldAtLeastUntil;
        ShedLockHandles.push(handle);
    }

    @Override
    public void unlock() {
        spend();
        try {
            Duration minimumLeft = Duration.between(ClockProvider.now(), this.heldAtLeastUntil);
            // A minimum hold of the request that ends later still holds (the handle keeps
            // it).
            this.handle.releaseAfter(minimumLeft);
        }
        finally {
            ShedLockHandles.remove(this.handle);
        }
    }

    @Override
    public Optional<SimpleLock> extend(Duration lockAtMostFor, Duration lockAtLeastFor) {
        spend();
        ShedLockHandles.remove(this.handle);
        Instant now = ClockProvider.now();
        if (this.handle.extend(LockServiceLockProvider.lease(lockAtMostFor))) {
            return Optional.of(new ServiceLock(this.handle, now.plus(lockAtLeastFor)));
        }
        // No longer ours: the lease ran out (or an operator took the lock). Nothing is
        // left to
        // delete, but the handle's own bookkeeping ends here.
        this.handle.release();
        return Optional.empty();
    }

    LockHandle handle() {
        return this.handle;
    }

    private void spend() {
        if (!this.spent.compareAndSet(false, true)) {
            throw new IllegalStateException("The ShedLock lock '" + this.handle.key()
                    + "' was unlocked or extended already; use the lock that extend returned");
        }
    }

}
