package io.github.distlock.core;

/**
 * The faults of the sweep, each aimed at one operation's command
 * ({@link SweepCase#onTarget()}). Both kinds start just before the operation sends that
 * command ({@link SweepCase#beforeTarget()}): per-command faults are armed then and hit
 * the next matching command; outages begin then (or after the timing's offset).
 */
enum SweepFault {

    DROP_REPLY_AND_CLOSE("its reply dropped and the connection closed") {
        @Override
        void arm(SweepCase sweepCase) {
            sweepCase.useRule(sweepCase.onTarget().dropReplyAndClose());
        }
    },
    DROP_REPLY_AND_HANG_THEN_HEAL("its reply dropped and the connection hung until healed") {
        @Override
        void arm(SweepCase sweepCase) {
            sweepCase.useRule(sweepCase.onTarget().dropReplyAndHang());
            sweepCase.whenTriggered(() -> sweepCase.healAfter(sweepCase.timing.outage()));
        }
    },
    CLOSE_AFTER_FORWARDING("the connection closed once it was forwarded") {
        @Override
        void arm(SweepCase sweepCase) {
            sweepCase.useRule(sweepCase.onTarget().closeAfterForwarding());
        }
    },
    DELAY_PAST_THE_TIMEOUT("its reply delayed past the operation timeout") {
        @Override
        void arm(SweepCase sweepCase) {
            sweepCase.useRule(sweepCase.onTarget().delayReply(sweepCase.timing.longDelay()));
        }
    },
    DELAY_WITHIN_THE_TIMEOUT("its reply delayed within the operation timeout") {
        @Override
        void arm(SweepCase sweepCase) {
            sweepCase.useRule(sweepCase.onTarget().delayReply(sweepCase.timing.shortDelay()));
        }
    },
    BLACKHOLE_THEN_HEAL("Redis blackholed around it, then healed") {
        @Override
        void beforeTarget(SweepCase sweepCase) {
            sweepCase.outage("blackhole", () -> sweepCase.services.proxy.blackhole());
        }
    },
    RESET_CONNECTIONS("every connection reset while its reply was on the way") {
        @Override
        void arm(SweepCase sweepCase) {
            // The reply is held back a moment, so the reset surely comes after Redis ran
            // the command.
            sweepCase.useRule(sweepCase.onTarget().delayReply(sweepCase.timing.resetProbeDelay()));
            sweepCase.whenTriggered(() -> {
                sweepCase.log("reset every connection");
                sweepCase.services.proxy.resetConnections();
            });
        }
    },
    REDIS_PAUSED_THEN_RESUMED("the Redis process paused around it, then resumed") {
        @Override
        void beforeTarget(SweepCase sweepCase) {
            sweepCase.outage("pause Redis", () -> sweepCase.services.redis.pause());
        }
    };

    private final String description;

    SweepFault(String description) {
        this.description = description;
    }

    /** Registers the fault's proxy rules, just before the target command goes out. */
    void arm(SweepCase sweepCase) {
    }

    /** Called by the operation just before it sends its target command. */
    void beforeTarget(SweepCase sweepCase) {
    }

    @Override
    public String toString() {
        return description;
    }

}
