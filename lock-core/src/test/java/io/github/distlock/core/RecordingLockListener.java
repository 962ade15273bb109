package io.github.distlock.core;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Writes down every {@link LockListener} call as {@code "event key detail"}, for tests to
 * read.
 */
final class RecordingLockListener implements LockListener {

    final List<String> events = new CopyOnWriteArrayList<>();

    final List<LockContext> contexts = new CopyOnWriteArrayList<>();

    private final List<String> lostLeases;

    RecordingLockListener(List<String> lostLeases) {
        this.lostLeases = lostLeases;
    }

    /** The events of {@code key}, in order. */
    List<String> of(String key) {
        return events.stream().filter(event -> event.split(" ")[1].equals(key)).toList();
    }

    @Override
    public void acquiring(LockContext lock) {
        contexts.add(lock);
        events.add("acquiring " + lock.key() + " " + lock.name());
    }

    @Override
    public void waiting(LockContext lock) {
        events.add("waiting " + lock.key());
    }

    @Override
    public void acquired(LockContext lock) {
        events.add("acquired " + lock.key() + (lock.waited() ? " waited" : " at-once")
                + (lock.handedOver() ? " handed-over" : ""));
    }

    @Override
    public void notAcquired(LockContext lock, AcquireOutcome outcome, Throwable cause) {
        events.add("not-acquired " + lock.key() + " " + outcome.tagValue());
    }

    @Override
    public void renewed(LockContext lock, boolean renewed) {
        events.add("renewed " + lock.key() + " " + renewed);
    }

    @Override
    public void leaseLost(LockContext lock, LeaseLossReason reason, String description) {
        // The description first: a test that awaits the event then reads the description.
        lostLeases.add(lock.key() + ": " + description);
        events.add("lost " + lock.key() + " " + reason.tagValue());
    }

    @Override
    public void released(LockContext lock, ReleaseOutcome outcome) {
        events.add("released " + lock.key() + " " + outcome.tagValue());
    }

}
