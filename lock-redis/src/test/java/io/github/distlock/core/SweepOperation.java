package io.github.distlock.core;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Future;

import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;

/**
 * The operations of the sweep. Each drives one lock operation of the proxied instance
 * whose target command the fault hits, with the direct instance contending where the
 * operation involves a second party. Calls go through {@link SweepCase#call}, which
 * bounds them and records their outcome; every handle returned is tracked, so the
 * invariants can be checked against Redis while and after the fault.
 */
enum SweepOperation {

    BARE_TRY_LOCK("a bare tryLock", LockCommand.BARE_ACQUIRE) {
        @Override
        void run(SweepCase c) {
            c.beforeTarget();
            c.track(c.call("proxied tryLock, no wait",
                    () -> c.proxied().tryLock(c.name, c.timing.ttl(), Duration.ZERO)));
        }
    },
    WAITING_TRY_LOCK("a tryLock with a wait, the lock free", LockCommand.BARE_ACQUIRE) {
        @Override
        void run(SweepCase c) {
            c.beforeTarget();
            c.track(c.call("proxied tryLock, waiting",
                    () -> c.proxied().tryLock(c.name, c.timing.ttl(), c.timing.waitTime())));
        }
    },
    QUEUED_TRY_LOCK("a queued tryLock with a fencing token, the holder releasing during the wait",
            LockCommand.ACQUIRE_SCRIPT) {
        @Override
        void run(SweepCase c) {
            LockHandle holder = c.setUp("direct lock", () -> c.direct().lock(c.name, c.timing.ttl(), Duration.ZERO));
            c.beforeTarget();
            Future<Optional<LockHandle>> waiter = c.start("proxied tryLock, waiting, with fencing token",
                    () -> c.proxied()
                        .tryLock(LockRequest.of(c.name)
                            .withTtl(c.timing.ttl())
                            .withWaitTime(c.timing.waitTime())
                            .withFencingToken()));
            c.awaitTargetSent();
            c.call("direct release, the holder", holder::release);
            c.track(c.join("proxied tryLock, waiting, with fencing token", waiter));
        }
    },
    QUEUED_LOCK("a queued lock, the holder releasing during the wait", LockCommand.ACQUIRE_SCRIPT) {
        @Override
        void run(SweepCase c) {
            LockHandle holder = c.setUp("direct lock", () -> c.direct().lock(c.name, c.timing.ttl(), Duration.ZERO));
            c.beforeTarget();
            Future<LockHandle> waiter = c.start("proxied lock, waiting",
                    () -> c.proxied().lock(c.name, c.timing.ttl(), c.timing.waitTime()));
            c.awaitTargetSent();
            c.call("direct release, the holder", holder::release);
            c.track(c.join("proxied lock, waiting", waiter));
        }
    },
    FENCING_TOKEN("fencingToken() on demand", LockCommand.FENCE_SCRIPT) {
        @Override
        void run(SweepCase c) {
            LockHandle handle = c.setUp("proxied lock", () -> c.proxied().lock(c.name, c.timing.ttl(), Duration.ZERO));
            c.beforeTarget();
            Long token = c.call("proxied fencingToken()", handle::fencingToken);
            if (token != null) {
                c.recordFencingToken("fencingToken()", token);
            }
        }
    },
    RELEASE("a release", LockCommand.RELEASE_SCRIPT) {
        @Override
        void run(SweepCase c) {
            LockHandle handle = c.setUp("proxied lock", () -> c.proxied().lock(c.name, c.timing.ttl(), Duration.ZERO));
            c.beforeTarget();
            c.call("proxied release", handle::release);
        }
    },
    RENEW("a renewal by the watchdog", LockCommand.RENEW_SCRIPT) {
        @Override
        void run(SweepCase c) {
            Duration lease = c.timing.renewedTtl();
            DefaultLockHandle handle = (DefaultLockHandle) c.setUp("proxied lock, renewed", () -> c.proxied()
                .lock(LockRequest.of(c.name).withTtl(lease).withWaitTime(Duration.ZERO).withWatchdog(true)));
            c.elapseUntil(handle.nextRenewalNanos() - Duration.ofMillis(20).toNanos());
            c.beforeTarget();
            // Three renewal periods: the faulted renewal, its retries and the renewals
            // after the fault healed.
            c.elapse(SweepTiming.renewalPeriod(lease).multipliedBy(3));
        }
    },
    HAND_OVER("a release that hands the lock over to a waiter", LockCommand.RELEASE_SCRIPT) {
        @Override
        void run(SweepCase c) {
            LockHandle handle = c.setUp("proxied lock", () -> c.proxied().lock(c.name, c.timing.ttl(), Duration.ZERO));
            Future<Optional<LockHandle>> waiter = c.start("direct tryLock, waiting", () -> c.direct()
                .tryLock(LockRequest.of(c.name).withTtl(c.timing.ttl()).withWaitTime(c.timing.waitTime())));
            c.awaitQueued();
            c.beforeTarget();
            c.call("proxied release, handing over", handle::release);
            c.track(c.join("direct tryLock, waiting", waiter));
        }
    },
    STOP_WAITING("a waiter giving up at its deadline", LockCommand.CANCEL_SCRIPT) {
        @Override
        void run(SweepCase c) {
            LockHandle holder = c.setUp("direct lock", () -> c.direct().lock(c.name, c.timing.ttl(), Duration.ZERO));
            long started = System.nanoTime();
            Future<Optional<LockHandle>> waiter = c.start("proxied tryLock, giving up", () -> c.proxied()
                .tryLock(LockRequest.of(c.name).withTtl(c.timing.ttl()).withWaitTime(c.timing.giveUpWaitTime())));
            c.elapseUntil(started + c.timing.giveUpWaitTime().toNanos() - Duration.ofMillis(20).toNanos());
            c.beforeTarget();
            c.track(c.join("proxied tryLock, giving up", waiter));
            // Had the waiter stayed queued, this release would hand the lock to nobody.
            c.call("direct release, the holder", holder::release);
        }
    };

    private final String description;

    final LockCommand target;

    SweepOperation(String description, LockCommand target) {
        this.description = description;
        this.target = target;
    }

    /** Drives the operation; returns once every call it made has returned. */
    abstract void run(SweepCase c);

    @Override
    public String toString() {
        return description;
    }

}
