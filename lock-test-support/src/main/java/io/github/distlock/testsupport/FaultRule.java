package io.github.distlock.testsupport;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A fault that a {@link RedisFaultProxy} applies to the next command(s) matching a
 * {@link RedisCommandMatcher}, then forgets. Created with
 * {@link RedisFaultProxy#onNext(RedisCommandMatcher)}:
 *
 * <pre>{@code
 * FaultRule lostReply = proxy.onNext(RedisCommandMatcher.named("SET")).dropReplyAndClose();
 * proxy.onNext(RedisCommandMatcher.named("EVALSHA")).times(2).delayReply(Duration.ofMillis(300));
 * proxy.onNext(RedisCommandMatcher.named("SET")).delayCommand(Duration.ofSeconds(1));
 * proxy.onNext(RedisCommandMatcher.anyCommand()).onConnection(proxy.connections().get(0)).closeAfterForwarding();
 * ...
 * await().until(() -> lostReply.triggerCount() == 1);
 * }</pre>
 *
 * <p>
 * Each matching command uses up one shot. When several rules match a command, the oldest
 * one with shots left applies, alone. Reply faults apply only to commands that get a
 * reply of their own, so never to {@code (P|S)SUBSCRIBE} and {@code (P|S)UNSUBSCRIBE},
 * nor to anything on a RESP2 connection in pub/sub mode; such commands leave the rule's
 * shots for later commands. {@link Builder#closeAfterForwarding()} and
 * {@link Builder#delayCommand(Duration)} apply to any command.
 */
public final class FaultRule {

    /** What happens to a matching command. */
    enum Action {

        DROP_REPLY_AND_CLOSE(true), DROP_REPLY_AND_HANG(true), DELAY_REPLY(true), DELAY_COMMAND(false),
        CLOSE_AFTER_FORWARDING(false);

        final boolean concernsReply;

        Action(boolean concernsReply) {
            this.concernsReply = concernsReply;
        }

    }

    private final RedisCommandMatcher matcher;

    private final ProxiedConnection connection;

    private final Action action;

    private final Duration delay;

    private final AtomicInteger shotsLeft;

    private final AtomicInteger triggerCount = new AtomicInteger();

    private FaultRule(RedisCommandMatcher matcher, ProxiedConnection connection, int shots, Action action,
            Duration delay) {
        this.matcher = matcher;
        this.connection = connection;
        this.action = action;
        this.delay = delay;
        this.shotsLeft = new AtomicInteger(shots);
    }

    /**
     * How many commands this rule has been applied to so far.
     * @return between 0 and the number of shots
     */
    public int triggerCount() {
        return triggerCount.get();
    }

    /**
     * Whether every shot has been used, so the rule no longer applies.
     * @return true once {@link #triggerCount()} reached the number of shots
     */
    public boolean isUsedUp() {
        return shotsLeft.get() <= 0;
    }

    /**
     * The rule in words, for failure messages.
     * @return e.g. {@code DROP_REPLY_AND_CLOSE on SET, 0 of 1 used}
     */
    @Override
    public String toString() {
        boolean delayed = action == Action.DELAY_REPLY || action == Action.DELAY_COMMAND;
        return action + (delayed ? " " + delay : "") + " on " + matcher
                + (connection != null ? " on " + connection : "") + ", " + triggerCount() + " of "
                + (triggerCount() + Math.max(0, shotsLeft.get())) + " used";
    }

    Action action() {
        return action;
    }

    Duration delay() {
        return delay;
    }

    /**
     * Takes one shot if the rule applies to this command; at most one caller wins the
     * last shot.
     */
    boolean claim(RedisCommand command, ProxiedConnection from, boolean getsOwnReply) {
        if ((action.concernsReply && !getsOwnReply) || (connection != null && connection != from)
                || shotsLeft.get() <= 0 || !matcher.test(command)) {
            return false;
        }
        if (shotsLeft.getAndDecrement() <= 0) {
            return false;
        }
        triggerCount.incrementAndGet();
        return true;
    }

    /**
     * Configures a rule before choosing its fault, which registers it. Obtained from
     * {@link RedisFaultProxy#onNext(RedisCommandMatcher)}.
     *
     * <pre>{@code
     * proxy.onNext(RedisCommandMatcher.named("PEXPIRE")).times(3).dropReplyAndHang();
     * }</pre>
     */
    public static final class Builder {

        private final RedisFaultProxy proxy;

        private final RedisCommandMatcher matcher;

        private int shots = 1;

        private ProxiedConnection connection;

        Builder(RedisFaultProxy proxy, RedisCommandMatcher matcher) {
            this.proxy = proxy;
            this.matcher = Objects.requireNonNull(matcher, "matcher");
        }

        /**
         * Applies the fault to the next {@code count} matching commands instead of only
         * the next one.
         * @param count at least 1
         * @return this builder
         */
        public Builder times(int count) {
            if (count < 1) {
                throw new IllegalArgumentException("times(count) needs a count of at least 1, was " + count);
            }
            this.shots = count;
            return this;
        }

        /**
         * Applies the fault only to commands on this connection, e.g. one from
         * {@link RedisFaultProxy#connections()}.
         * @param connection a connection of the same proxy
         * @return this builder
         */
        public Builder onConnection(ProxiedConnection connection) {
            this.connection = Objects.requireNonNull(connection, "connection");
            return this;
        }

        /**
         * Forwards the command, drops its reply and closes the client connection: Redis
         * ran the command, the client never learns the outcome. A client library that
         * re-sends unanswered commands after reconnecting (Lettuce does by default) runs
         * it a second time. Commands pipelined behind it are forwarded until the close
         * and may run too; their replies are lost as well.
         * @return the registered rule
         */
        public FaultRule dropReplyAndClose() {
            return register(Action.DROP_REPLY_AND_CLOSE, Duration.ZERO);
        }

        /**
         * Forwards the command, drops its reply and hangs the connection: from that reply
         * on, nothing is sent to the client any more, and later commands are read and
         * counted but no longer forwarded, so the client times out.
         * {@link RedisFaultProxy#heal()} closes the connection.
         * @return the registered rule
         */
        public FaultRule dropReplyAndHang() {
            return register(Action.DROP_REPLY_AND_HANG, Duration.ZERO);
        }

        /**
         * Forwards the command, then closes the client connection (and the one to Redis)
         * once the command is written. Redis usually still runs it. Commands that arrived
         * in the same read behind it are dropped.
         * @return the registered rule
         */
        public FaultRule closeAfterForwarding() {
            return register(Action.CLOSE_AFTER_FORWARDING, Duration.ZERO);
        }

        /**
         * Delays the command's reply by {@code delay} from when Redis sent it. Replies
         * are ordered, so every later reply on that connection waits behind it.
         * @param delay how long, positive
         * @return the registered rule
         */
        public FaultRule delayReply(Duration delay) {
            if (delay.isNegative() || delay.isZero()) {
                throw new IllegalArgumentException("delayReply needs a positive delay, was " + delay);
            }
            return register(Action.DELAY_REPLY, delay);
        }

        /**
         * Holds the command back for {@code delay} before forwarding it to Redis, and
         * every later command of that connection behind it, so Redis still runs them in
         * order, only late. While it is held Redis has not seen it: a client that gives
         * up on it and sends something on another connection meanwhile gets there first,
         * as with a congested link or a stalled client socket. Commands still held when
         * the connection closes or hangs are dropped, never forwarded.
         * @param delay how long, positive
         * @return the registered rule
         */
        public FaultRule delayCommand(Duration delay) {
            if (delay.isNegative() || delay.isZero()) {
                throw new IllegalArgumentException("delayCommand needs a positive delay, was " + delay);
            }
            return register(Action.DELAY_COMMAND, delay);
        }

        private FaultRule register(Action action, Duration delay) {
            FaultRule rule = new FaultRule(matcher, connection, shots, action, delay);
            proxy.addRule(rule);
            return rule;
        }

    }

}
