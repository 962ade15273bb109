package io.github.distlock.shedlock;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

import io.github.distlock.LockHandle;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A ShedLock lock over one {@link LockHandle}. ShedLock's contract: once unlocked or
 * extended, this object is spent (both throw {@link IllegalStateException} after that);
 * an extension returns a new one over the same handle.
 */
final class ServiceLock implements SimpleLock {

    private static final Logger logger = LoggerFactory.getLogger(ServiceLock.class);

    private final LockHandle handle;

    private final Instant heldAtLeastUntil;

    private final Duration lockAtMostFor;

    private final AtomicBoolean spent = new AtomicBoolean();

    ServiceLock(LockHandle handle, Instant heldAtLeastUntil, Duration lockAtMostFor) {
        this.handle = handle;
        this.heldAtLeastUntil = heldAtLeastUntil;
        this.lockAtMostFor = lockAtMostFor;
        ShedLockHandles.push(handle);
    }

    @Override
    public void unlock() {
        spend();
        try {
            Duration minimumLeft = Duration.between(ClockProvider.now(), this.heldAtLeastUntil);
            // A minimum hold of the request that ends later still holds: the handle keeps
            // it. A lock that had run out mid-task was reported lost when it did (the
            // request asks for that), or is now, by the release that finds it gone.
            if (!this.handle.releaseAfter(minimumLeft)) {
                logger.debug("ShedLock lock '{}' had run out before its task finished (lockAtMostFor {})",
                        this.handle.key(), this.lockAtMostFor);
            }
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
            return Optional.of(new ServiceLock(this.handle, now.plus(lockAtLeastFor), lockAtMostFor));
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
