package io.github.distlock.benchmarks.adapter;

import io.github.distlock.LockTimeoutException;
import io.github.distlock.benchmarks.adapter.OurApplication.LockedWork;

/**
 * Ours through {@code @DistributedLock} on a proxied bean ({@link LockedWork}), to show
 * what the interceptor, the SpEL key and the option resolution cost over calling
 * {@code LockService}.
 */
final class OursAnnotationAdapter implements LockAdapter {

    private final OurApplication application;

    private final LockedWork work;

    OursAnnotationAdapter(RedisTarget target) {
        this.application = OurApplication.start(target, null);
        this.work = application.bean(LockedWork.class);
        if (work.getClass() == LockedWork.class) {
            // Without a proxy the benchmark would silently measure an unlocked method
            // call.
            throw new IllegalStateException("@DistributedLock bean was not proxied: the annotation is not applied");
        }
    }

    @Override
    public void runLocked(String key, Runnable criticalSection) {
        try {
            work.run(key, criticalSection);
        }
        catch (LockTimeoutException ex) {
            throw new LockNotAcquiredException(key);
        }
    }

    @Override
    public void close() {
        application.close();
    }

}
