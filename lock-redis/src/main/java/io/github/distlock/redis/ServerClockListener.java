package io.github.distlock.redis;

/**
 * Told what a Redlock node's clock read in the reply of a vote or renewal: the clock the
 * node expires keys by, so that a forward jump, which may have expired leases there
 * early, is seen in the very reply it would otherwise be counted from.
 *
 * <p>
 * The node read its clock after the command was sent and before its reply arrived, so the
 * two {@link System#nanoTime} values bound when it did:
 *
 * <pre>{@code
 * NodeIncarnation incarnation = new NodeIncarnation(guard::connectionChanged, guard::serverTime);
 * }</pre>
 */
@FunctionalInterface
public interface ServerClockListener {

    /** Ignores what the node's clock says. */
    ServerClockListener NONE = (sentNanos, receivedNanos, serverMicros) -> {
    };

    /**
     * Called on a client I/O thread or the caller's, before the reply is counted; must
     * not block.
     * @param sentNanos {@link System#nanoTime} before the command was sent
     * @param receivedNanos {@link System#nanoTime} when its reply arrived
     * @param serverMicros the node's clock, microseconds since the epoch
     */
    void serverTime(long sentNanos, long receivedNanos, long serverMicros);

}
