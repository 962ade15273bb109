package io.github.distlock.autoconfigure;

import org.springframework.context.ApplicationEventPublisher;

import io.github.distlock.LockLostEvent;
import io.github.distlock.core.LockContext;
import io.github.distlock.core.LockListener;

/**
 * Turns every lost lease into a {@link LockLostEvent} for the application's
 * {@code @EventListener}s.
 */
final class LockLostEventPublisher implements LockListener {

    private final ApplicationEventPublisher publisher;

    LockLostEventPublisher(ApplicationEventPublisher publisher) {
        this.publisher = publisher;
    }

    @Override
    public void leaseLost(LockContext lock, LeaseLossReason reason, String description) {
        publisher.publishEvent(new LockLostEvent(lock.handle(), description));
    }

}
