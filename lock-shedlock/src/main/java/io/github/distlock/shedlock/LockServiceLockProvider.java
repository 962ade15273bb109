package io.github.distlock.shedlock;

import java.time.Duration;
import java.util.Optional;

import io.github.distlock.LockRequest;
import io.github.distlock.LockService;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;

/**
 * A ShedLock {@code LockProvider} that takes its locks from a {@link LockService}, so
 * that {@code @SchedulerLock} methods and {@code LockingTaskExecutor} code get this
 * starter's stores, fencing tokens, lost-lease signals and metrics without a change to
 * the code.
 *
 * <p>
 * ShedLock's terms map onto a lock request like this:
 * <ul>
 * <li>{@code lockAtMostFor} is the lease, fixed: the watchdog does not renew it, so a job
 * that runs longer than {@code lockAtMostFor} loses its lock, as with every ShedLock
 * provider. Unlike them, it is told: when the lease runs out mid-task, the lock is
 * reported lost as any lost lock is (the lost-lease WARN, a {@code LockLostEvent},
 * {@code distributed.lock.lost{reason="expired"}}), and so is a lock found gone at
 * unlock;</li>
 * <li>{@code lockAtLeastFor} is the minimum hold: an unlock before it has passed leaves
 * the lock held until it has (a compare-and-shorten on this lock's own token);</li>
 * <li>a lock held by another instance is not waited for: the task is skipped;</li>
 * <li>{@link SimpleLock#extend} sets the remaining lease to the new
 * {@code lockAtMostFor}, only if the lock is still ours.</li>
 * </ul>
 * A store that cannot be reached makes {@link #lock} throw the lock service's
 * {@code LockBackendException}, so the task does not run and the scheduler logs why.
 *
 * <p>
 * The Spring Boot auto-configuration declares one when ShedLock is on the classpath;
 * without Boot:
 *
 * <pre>{@code
 * &#64;Bean
 * LockProvider lockProvider(LockService lockService) {
 *     return new LockServiceLockProvider(lockService);
 * }
 * // and, unchanged:
 * &#64;Scheduled(cron = "0 0 * * * *")
 * &#64;SchedulerLock(name = "hourly-report", lockAtMostFor = "10m", lockAtLeastFor = "1m")
 * void hourlyReport() {
 *     long fence = ShedLockHandles.current().orElseThrow().fencingToken();
 *     reports.write(fence);
 * }
 * }</pre>
 */
public class LockServiceLockProvider implements ExtensibleLockProvider {

    private final LockService lockService;

    /**
     * @param lockService where the locks are taken, on its default backend
     */
    public LockServiceLockProvider(LockService lockService) {
        this.lockService = lockService;
    }

    @Override
    public Optional<SimpleLock> lock(LockConfiguration configuration) {
        LockRequest request = LockRequest.of(configuration.getName())
            .withTtl(lease(configuration.getLockAtMostFor()))
            .withWaitTime(Duration.ZERO)
            .withWatchdog(false)
            // ShedLock unlocks when the task ends: a lease that runs out first ran out
            // mid-task.
            .withExpiryReported(true);
        if (configuration.getLockAtLeastFor().toMillis() > 0) {
            request = request.withMinHold(configuration.getLockAtLeastFor());
        }
        return this.lockService.tryLock(request)
            .map((handle) -> new ServiceLock(handle, configuration.getLockAtLeastUntil(),
                    configuration.getLockAtMostFor()));
    }

    /**
     * {@code lockAtMostFor} as a lease, counted from when the store sets the lock; never
     * less than the shortest lease a store keeps (1 ms).
     */
    static Duration lease(Duration lockAtMostFor) {
        return (lockAtMostFor.toMillis() < 1) ? Duration.ofMillis(1) : lockAtMostFor;
    }

}
