package io.github.distlock.aop;

/** How the last user's release of a hold ended, for the call that acquired it. */
enum ReleaseOutcome {

    /**
     * Released while still ours, or not ours to release (a joined hold): nothing to
     * report.
     */
    KEPT,

    /** The watchdog found the lease lost while the method ran. */
    LOST,

    /**
     * The lease had run out when the release came (a fixed lease, or a renewal that came
     * too late).
     */
    EXPIRED;

    /** The one to report for several keys: a loss the watchdog saw outranks an expiry. */
    ReleaseOutcome worse(ReleaseOutcome other) {
        return (this == LOST || other == LOST ? LOST : (this == EXPIRED || other == EXPIRED ? EXPIRED : KEPT));
    }

}
