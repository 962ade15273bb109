package io.github.distlock.autoconfigure;

import java.time.Duration;
import java.util.Locale;

import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.InitializingBean;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.NestedConfigurationProperty;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.context.annotation.AdviceMode;
import org.springframework.core.Ordered;

import io.github.distlock.DistributedLock.FailureAction;
import io.github.distlock.LockDurations;
import io.github.distlock.LockKeys;

/**
 * Settings of the distributed lock starter, under {@code distributed-lock.*}. Every value
 * is checked at startup by {@link #validate()}; a bad one fails the startup with a
 * message naming the property.
 */
@ConfigurationProperties(prefix = DistributedLockProperties.PREFIX)
public class DistributedLockProperties implements InitializingBean {

    /** The configuration prefix. */
    public static final String PREFIX = "distributed-lock";

    /**
     * The default aspect order: just outside {@code @Transactional} (whose default order
     * is {@link Ordered#LOWEST_PRECEDENCE}), so the lock is released only after the
     * commit.
     */
    public static final int DEFAULT_ASPECT_ORDER = Ordered.LOWEST_PRECEDENCE - 100;

    /**
     * Whether to auto-configure the lock service and the @DistributedLock interceptor.
     * false turns the whole starter off (no LockService bean, and @DistributedLock
     * methods run without a lock); only true or false are accepted, any other value fails
     * the startup.
     */
    private boolean enabled = true;

    /**
     * Prefix of every lock key in Redis: with the default, the key order:42 is stored as
     * lock:{order:42}. Give each application its own prefix (such as billing:lock:) when
     * several share a Redis and their lock names could clash. Not empty (release messages
     * go to the channel named prefix + "released", and ACL key patterns such as ~lock:*
     * need a prefix to match), and without braces, which are the Redis Cluster hash tag
     * around the key.
     */
    private String keyPrefix = "lock:";

    /**
     * Name of the backend that keeps the locks that name none (an empty backend
     * in @DistributedLock, a LockRequest without withBackend): redis, redlock, etcd,
     * zookeeper (each when configured) or a NamedLockBackend bean's name. Empty (the
     * default): redlock when distributed-lock.redlock.nodes is set, otherwise redis (or
     * the name of the application's own LockBackend bean: default, in-memory for an
     * InMemoryLockBackend).
     */
    private String backend = "";

    /**
     * Longest lock key accepted, in characters of the key as the application gives it
     * (before key-prefix), at least 1. A longer key, from a @DistributedLock key
     * expression or a LockService call, fails with InvalidLockKeyException (a 400 problem
     * detail in web applications) before anything is sent to Redis, so a key built from
     * unchecked input cannot store megabytes per lock. Lock on an id or a hash of a long
     * value.
     */
    // A literal (LockKeys.DEFAULT_MAX_LENGTH), so that the configuration processor
    // records it as the default.
    private int maxKeyLength = 1024;

    /**
     * Lease length of a lock that does not name one (an empty ttl in @DistributedLock, a
     * null ttl in LockService), from 1ms to 36500d: a duration such as 30s, 500ms, 5m or
     * PT30S, and a bare number means milliseconds. With the watchdog on, the lease is
     * renewed until release, so this only bounds how long a crashed holder blocks the
     * others; with it off, the lock expires after this long even while the work goes on.
     */
    private Duration defaultTtl = Duration.ofSeconds(30);

    /**
     * How long a caller waits for the current holder when its lock does not say (an empty
     * waitTime in @DistributedLock, a null waitTime in LockService), from 0s to 36500d: a
     * duration such as 3s or 500ms, and a bare number means milliseconds. 0s tries once
     * and gives up at once if the lock is taken.
     */
    private Duration defaultWaitTime = Duration.ofSeconds(3);

    /**
     * Upper bound on every single lock command (acquire, renew, release), independent of
     * the Redis client's own command timeout (60 s by default in Lettuce), so that a hung
     * Redis fails guarded calls quickly with LockBackendException instead of blocking
     * them. A positive duration such as 2s or 500ms, at most 36500d; a bare number means
     * milliseconds.
     */
    private Duration operationTimeout = Duration.ofSeconds(2);

    /**
     * How many replicas must confirm each lock write (acquire, hand-over and renewal)
     * with Redis's WAIT before it counts; 0 (the default) waits for none. Closes most of
     * the window in which a master fails over before a lock reached a replica, at the
     * cost of one more round trip per acquisition. Too few confirmations within
     * replica-ack-timeout fail the acquisition with ReplicaAcknowledgementException, and
     * the lock is released.
     */
    private int replicaAcks = 0;

    /**
     * How long one WAIT may wait for replica-acks replicas to confirm a lock write: a
     * duration such as 1s or 200ms, at least 1ms and at most operation-timeout; a bare
     * number means milliseconds. Only used when replica-acks is above 0.
     */
    private Duration replicaAckTimeout = Duration.ofSeconds(1);

    /**
     * Order of the @DistributedLock interceptor among the other advice on a method, any
     * int; lower runs further outside. The default, Ordered.LOWEST_PRECEDENCE - 100, runs
     * just outside @Transactional (whose order is Ordered.LOWEST_PRECEDENCE), so the lock
     * is taken before the transaction begins and released after it commits.
     */
    private int aspectOrder = DEFAULT_ASPECT_ORDER;

    /**
     * Whether a @DistributedLock method whose lease was lost while it ran throws
     * LockLostException after it returns, so the caller learns that another instance may
     * have run the same work meanwhile. Off, the call returns the method's result, and
     * only the LockLostEvent and a WARN log line tell.
     */
    private boolean throwOnLeaseLost = true;

    /**
     * What a @DistributedLock call does when another owner held its lock for the whole
     * wait time, if the annotation sets neither onBusy nor onFailure: throw (the default)
     * fails the call with LockTimeoutException; skip returns an empty value without
     * running the method, the usual choice for a scheduled job that one instance should
     * run.
     */
    private FailureAction onBusy = FailureAction.THROW;

    /**
     * What a @DistributedLock call does when the lock store could not be reached or
     * failed, if the annotation sets neither onUnavailable nor onFailure: throw (the
     * default) fails the call with LockBackendException; skip returns an empty value
     * without running the method and logs a WARN, at most one a minute per lock. With
     * skip, no instance runs the work while the store is down.
     */
    private FailureAction onUnavailable = FailureAction.THROW;

    /**
     * What to do with a @DistributedLock method that no Spring proxy can intercept, so
     * that every call would run without the lock: a private or static method, or a final
     * one on a class-based (CGLIB) proxy. Keep fail unless such a method is known and
     * harmless.
     */
    private UnguardedMethods unguardedMethods = UnguardedMethods.FAIL;

    /**
     * How @DistributedLock is applied. proxy (the default): a Spring AOP proxy around
     * each bean locks calls made through the bean, so a this.-call from inside the class
     * and a final method run without the lock. aspectj: an AspectJ aspect woven into the
     * classes at load time (the aspectjweaver agent with a META-INF/aop.xml naming
     * io.github.distlock.aop.AnnotationDistributedLockAspect) locks every execution; no
     * proxy is made for the lock.
     */
    private AdviceMode adviceMode = AdviceMode.PROXY;

    /**
     * How a release wakes waiters in a Redis Cluster, on Lettuce: auto (the default) uses
     * sharded pub/sub, SPUBLISH on a channel in the lock's own hash slot so that only the
     * shard owning the lock forwards the message, when every node runs Redis 7 or later.
     * global keeps the one global channel, which every node forwards to every other: for
     * a fleet in which some instances listen only there (Jedis, or a rolling upgrade from
     * a version without sharded pub/sub). Outside a Cluster, and on Jedis, the global
     * channel is used either way.
     */
    private ClusterNotifications clusterNotifications = ClusterNotifications.AUTO;

    /** Lease renewal while a lock is held. */
    private final Watchdog watchdog = new Watchdog();

    /**
     * The single Redis (standalone, Sentinel or Cluster) that locks use when no Redlock
     * nodes are set.
     */
    private final Redis redis = new Redis();

    /** How lock failures look in Spring MVC and WebFlux applications. */
    private final Web web = new Web();

    /**
     * Metrics and traces of every lock, through Micrometer, when the application has it.
     */
    private final Observation observation = new Observation();

    /**
     * Redlock over independent Redis masters instead of the single Redis of
     * spring.data.redis.*.
     */
    @NestedConfigurationProperty
    private final RedlockProperties redlock = new RedlockProperties();

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public String getBackend() {
        return backend;
    }

    public void setBackend(@Nullable String backend) {
        this.backend = (backend != null ? backend.trim() : "");
    }

    public String getKeyPrefix() {
        return keyPrefix;
    }

    public void setKeyPrefix(String keyPrefix) {
        this.keyPrefix = keyPrefix;
    }

    public int getMaxKeyLength() {
        return maxKeyLength;
    }

    public void setMaxKeyLength(int maxKeyLength) {
        this.maxKeyLength = maxKeyLength;
    }

    public Duration getDefaultTtl() {
        return defaultTtl;
    }

    public void setDefaultTtl(Duration defaultTtl) {
        this.defaultTtl = defaultTtl;
    }

    public Duration getDefaultWaitTime() {
        return defaultWaitTime;
    }

    public void setDefaultWaitTime(Duration defaultWaitTime) {
        this.defaultWaitTime = defaultWaitTime;
    }

    public Duration getOperationTimeout() {
        return operationTimeout;
    }

    public void setOperationTimeout(Duration operationTimeout) {
        this.operationTimeout = operationTimeout;
    }

    public int getReplicaAcks() {
        return replicaAcks;
    }

    public void setReplicaAcks(int replicaAcks) {
        this.replicaAcks = replicaAcks;
    }

    public Duration getReplicaAckTimeout() {
        return replicaAckTimeout;
    }

    public void setReplicaAckTimeout(Duration replicaAckTimeout) {
        this.replicaAckTimeout = replicaAckTimeout;
    }

    public int getAspectOrder() {
        return aspectOrder;
    }

    public void setAspectOrder(int aspectOrder) {
        this.aspectOrder = aspectOrder;
    }

    public boolean isThrowOnLeaseLost() {
        return throwOnLeaseLost;
    }

    public void setThrowOnLeaseLost(boolean throwOnLeaseLost) {
        this.throwOnLeaseLost = throwOnLeaseLost;
    }

    public AdviceMode getAdviceMode() {
        return adviceMode;
    }

    public void setAdviceMode(AdviceMode adviceMode) {
        this.adviceMode = adviceMode;
    }

    public UnguardedMethods getUnguardedMethods() {
        return unguardedMethods;
    }

    public void setUnguardedMethods(UnguardedMethods unguardedMethods) {
        this.unguardedMethods = unguardedMethods;
    }

    public FailureAction getOnBusy() {
        return onBusy;
    }

    public void setOnBusy(FailureAction onBusy) {
        this.onBusy = onBusy;
    }

    public FailureAction getOnUnavailable() {
        return onUnavailable;
    }

    public void setOnUnavailable(FailureAction onUnavailable) {
        this.onUnavailable = onUnavailable;
    }

    public ClusterNotifications getClusterNotifications() {
        return clusterNotifications;
    }

    public void setClusterNotifications(ClusterNotifications clusterNotifications) {
        this.clusterNotifications = clusterNotifications;
    }

    public Observation getObservation() {
        return observation;
    }

    public Web getWeb() {
        return web;
    }

    public Watchdog getWatchdog() {
        return watchdog;
    }

    public Redis getRedis() {
        return redis;
    }

    public RedlockProperties getRedlock() {
        return redlock;
    }

    /** Runs {@link #validate()} right after binding, so bad settings fail the startup. */
    @Override
    public void afterPropertiesSet() {
        validate();
    }

    /**
     * Checks every value, so that a typo fails the startup rather than the first guarded
     * call.
     * @throws InvalidConfigurationPropertyValueException naming the property, the value
     * and the fix
     */
    public void validate() {
        if (keyPrefix == null || keyPrefix.isBlank()) {
            throw new InvalidConfigurationPropertyValueException(PREFIX + ".key-prefix", keyPrefix,
                    "The prefix may not be empty: release messages go to the channel <prefix>released, which would "
                            + "be the bare 'released', and ACL key patterns such as ~lock:* need a prefix to match. "
                            + "Remove the property for the default 'lock:', or use something like 'myapp:lock:'.");
        }
        if (keyPrefix.indexOf('{') >= 0 || keyPrefix.indexOf('}') >= 0) {
            throw new InvalidConfigurationPropertyValueException(PREFIX + ".key-prefix", keyPrefix,
                    "The prefix may not contain '{' or '}': the lock key is <prefix>{<key>} and the braces "
                            + "are the Redis Cluster hash tag. Use something like 'lock:' or 'myapp:lock:'.");
        }
        if (maxKeyLength < 1) {
            throw new InvalidConfigurationPropertyValueException(PREFIX + ".max-key-length", maxKeyLength,
                    "The longest lock key must be at least 1 character; no key could be locked. Remove the property "
                            + "for the default " + LockKeys.DEFAULT_MAX_LENGTH + ", or give a positive number of "
                            + "characters such as 256.");
        }
        String ttlProblem = LockDurations.ttlProblem(defaultTtl);
        if (ttlProblem != null) {
            throw new InvalidConfigurationPropertyValueException(PREFIX + ".default-ttl", describe(defaultTtl),
                    "The ttl " + ttlProblem + " Use a duration from 1ms to 36500d, such as 30s.");
        }
        String waitProblem = LockDurations.waitTimeProblem(defaultWaitTime);
        if (waitProblem != null) {
            throw new InvalidConfigurationPropertyValueException(PREFIX + ".default-wait-time",
                    describe(defaultWaitTime), "The wait time " + waitProblem + " Use 0s to try once, or a duration "
                            + "such as 3s (at most 36500d).");
        }
        requirePositive("operation-timeout", operationTimeout, "Use a positive duration such as 2s.");
        validateReplicaAcks();
        double ratio = watchdog.renewalRatio;
        if (!(ratio > 0 && ratio < 1)) {
            throw new InvalidConfigurationPropertyValueException(PREFIX + ".watchdog.renewal-ratio", ratio,
                    "The ratio must be between 0 and 1 (exclusive); 0.333 renews every third of the ttl.");
        }
        requireNotNegative("web.problem-details.busy-retry-after", web.problemDetails.busyRetryAfter);
        requireNotNegative("web.problem-details.unavailable-retry-after", web.problemDetails.unavailableRetryAfter);
        if (unguardedMethods == null) {
            throw new InvalidConfigurationPropertyValueException(PREFIX + ".unguarded-methods", null,
                    "Use fail (the default) or warn.");
        }
        requireThrowOrSkip("on-busy", onBusy);
        requireThrowOrSkip("on-unavailable", onUnavailable);
        if (clusterNotifications == null) {
            throw new InvalidConfigurationPropertyValueException(PREFIX + ".cluster-notifications", null,
                    "Use auto (the default) or global.");
        }
        if (redlock.hasNodes()) {
            redlock.validate();
            if (replicaAcks > 0) {
                // Silently ignored, the setting would promise a safety the Redlock
                // backend does not give.
                throw new InvalidConfigurationPropertyValueException(PREFIX + ".replica-acks", replicaAcks,
                        "Replica acknowledgements apply to the single-Redis backend; with " + RedlockProperties.PREFIX
                                + ".nodes set, locks are Redlocks over independent "
                                + "masters, which do not wait for replicas. "
                                + "Remove replica-acks, or the Redlock nodes.");
            }
        }
    }

    /**
     * No upper bound on replica-acks: Redis has none on replicas, and a number above the
     * replicas present fails the first acquisition with a message giving both counts. The
     * timeout is checked against operation-timeout only when acks are asked for, so that
     * a short operation-timeout alone never fails on a feature that is off.
     */
    private void validateReplicaAcks() {
        if (replicaAcks < 0) {
            throw new InvalidConfigurationPropertyValueException(PREFIX + ".replica-acks", replicaAcks,
                    "The number of replicas may not be negative. Use 0 to wait for no replica, or the number of "
                            + "replicas that must confirm each lock, such as 1.");
        }
        // WAIT with a timeout of 0 blocks for ever; a sub-millisecond timeout would be
        // sent as 0.
        if (replicaAckTimeout == null || replicaAckTimeout.toMillis() < 1) {
            throw new InvalidConfigurationPropertyValueException(PREFIX + ".replica-ack-timeout",
                    describe(replicaAckTimeout), "The timeout must be at least 1ms (Redis's WAIT counts whole "
                            + "milliseconds, and 0 would wait for ever). Use a duration such as 1s.");
        }
        if (replicaAcks > 0 && replicaAckTimeout.compareTo(operationTimeout) > 0) {
            throw new InvalidConfigurationPropertyValueException(PREFIX + ".replica-ack-timeout",
                    describe(replicaAckTimeout),
                    "With " + PREFIX + ".replica-acks=" + replicaAcks + " the wait for " + "replicas may be at most "
                            + PREFIX + ".operation-timeout (" + LockDurations.describe(operationTimeout)
                            + "): a lock write that takes longer to "
                            + "confirm than a command may take to answer is a Redis in trouble. Lower "
                            + "replica-ack-timeout or raise operation-timeout.");
        }
    }

    /**
     * {@code default} is an annotation value ("not set here"); a property is the last
     * word and must decide.
     * @param name the property below the prefix, {@code on-busy} or
     * {@code on-unavailable}
     * @param action its bound value
     * @return the value, {@code THROW} or {@code SKIP}
     * @throws InvalidConfigurationPropertyValueException naming the property, the value
     * and the fix otherwise
     */
    static FailureAction requireThrowOrSkip(String name, FailureAction action) {
        if (action == null || action == FailureAction.DEFAULT) {
            String attribute = name.equals("on-busy") ? "onBusy" : "onUnavailable";
            throw new InvalidConfigurationPropertyValueException(PREFIX + "." + name,
                    (action == null ? null : action.name().toLowerCase(Locale.ROOT)),
                    "The property is the last word " + "on what a call does when its annotation sets neither "
                            + attribute + " nor onFailure, "
                            + "so it must decide: use throw (the default: the call fails) or skip (the method does "
                            + "not run and the call returns an empty value), or remove the property. default is only "
                            + "meaningful on the annotation, where it means \"follow onFailure, then this property\".");
        }
        return action;
    }

    /**
     * A duration as written in a property ({@code 1ns}, {@code 30s}), followed by its ISO
     * form.
     */
    private static String describe(Duration value) {
        return (value == null ? null : LockDurations.describe(value) + " (" + value + ")");
    }

    private static void requirePositive(String name, Duration value, String fix) {
        if (value == null || value.isZero() || value.isNegative()) {
            throw new InvalidConfigurationPropertyValueException(PREFIX + "." + name, value,
                    "The duration must be positive. " + fix);
        }
        // Deadlines are kept in nanoseconds, which cannot span 292 years.
        if (value.compareTo(LockDurations.MAX_WAIT_TIME) > 0) {
            throw new InvalidConfigurationPropertyValueException(PREFIX + "." + name, value,
                    "The duration may be at most 36500d (100 years): deadlines are timed in nanoseconds. " + fix);
        }
    }

    /** What to do with a @DistributedLock method that no proxy can intercept. */
    public enum UnguardedMethods {

        /** Fail the startup, naming the method and the fix. */
        FAIL,

        /** Log a WARN and start; calls of the method run without the lock. */
        WARN

    }

    /** How a release wakes waiters in a Redis Cluster. */
    public enum ClusterNotifications {

        /**
         * Sharded pub/sub where every node runs Redis 7 or later, else the global
         * channel.
         */
        AUTO,

        /** Always the global channel, which every node forwards to every other. */
        GLOBAL

    }

    /** Which Redis connection the locks use. */
    public static class Redis {

        /**
         * Name of the RedisConnectionFactory bean that locks use, for an application with
         * several (a cache Redis and a session Redis, say), so that it need not mark
         * one @Primary for every other user. Empty (the default) uses the only
         * RedisConnectionFactory bean, or the @Primary one. A name that is no
         * RedisConnectionFactory bean fails the startup.
         */
        private String connectionFactory = "";

        public String getConnectionFactory() {
            return connectionFactory;
        }

        public void setConnectionFactory(String connectionFactory) {
            this.connectionFactory = connectionFactory;
        }

    }

    /** Lease renewal settings. */
    public static class Watchdog {

        /**
         * Whether held locks are renewed until release: true or false. Off means every
         * lease is fixed and expires after its ttl even while the work goes on. Each lock
         * can override it (the watchdog attribute of @DistributedLock,
         * LockRequest.withWatchdog).
         */
        private boolean enabled = true;

        /**
         * Fraction of the ttl after which a lease is renewed, a number between 0 and 1
         * (both exclusive): 0.5 renews a 30s lease every 15s. The default, 1/3, leaves
         * two renewal attempts before the lease would run out.
         */
        private double renewalRatio = 1.0 / 3;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public double getRenewalRatio() {
            return renewalRatio;
        }

        public void setRenewalRatio(double renewalRatio) {
            this.renewalRatio = renewalRatio;
        }

    }

    private static void requireNotNegative(String name, Duration value) {
        if (value == null || value.isNegative()) {
            throw new InvalidConfigurationPropertyValueException(PREFIX + "." + name, value,
                    "The duration may not be negative. Use a duration such as 1s, or 0s to send no Retry-After.");
        }
    }

    /** Lock metrics and traces through Micrometer. */
    public static class Observation {

        /**
         * Whether acquisitions and holds are observed (timers, traces) and renewals, lost
         * leases, hand-overs and releases counted, when the application has a Micrometer
         * ObservationRegistry or MeterRegistry.
         */
        private boolean enabled = true;

        /**
         * Whether the acquire and hold timers are recorded directly on the MeterRegistry,
         * without observations, when those observations could become nothing but these
         * timers: the application's only observation handler is Micrometer's
         * DefaultMeterObservationHandler (no tracer), on Spring Boot's own
         * ObservationRegistry, with no observation convention, filter, predicate or
         * common key-value of its own. The same meters at a fraction of the cost. False
         * always observes.
         */
        private boolean directMeters = true;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public boolean isDirectMeters() {
            return directMeters;
        }

        public void setDirectMeters(boolean directMeters) {
            this.directMeters = directMeters;
        }

    }

    /** How lock failures look in Spring MVC and WebFlux applications. */
    public static class Web {

        /** Lock failures in web requests as RFC 9457 problem details. */
        private final ProblemDetails problemDetails = new ProblemDetails();

        public ProblemDetails getProblemDetails() {
            return problemDetails;
        }

        /** Lock failures in web requests as RFC 9457 problem-detail responses. */
        public static class ProblemDetails {

            /**
             * Whether a lock failure in a Spring MVC or WebFlux request is answered with
             * an RFC 9457 problem detail (409 when the lock is busy, 503 when the lock
             * store is unavailable, 500 when the lease was lost) instead of the generic
             * error response: true or false. Off, the exceptions reach your own handlers
             * unchanged.
             */
            private boolean enabled = true;

            /**
             * Retry-After of a 409 (another request held the lock for the whole wait
             * time): a duration such as 1s, rounded up to whole seconds, not negative; a
             * bare number means milliseconds. 0s sends no Retry-After.
             */
            private Duration busyRetryAfter = Duration.ofSeconds(1);

            /**
             * Retry-After of a 503 (the lock store could not be reached): a duration such
             * as 5s, rounded up to whole seconds, not negative; a bare number means
             * milliseconds. 0s sends no Retry-After.
             */
            private Duration unavailableRetryAfter = Duration.ofSeconds(5);

            public boolean isEnabled() {
                return enabled;
            }

            public void setEnabled(boolean enabled) {
                this.enabled = enabled;
            }

            public Duration getBusyRetryAfter() {
                return busyRetryAfter;
            }

            public void setBusyRetryAfter(Duration busyRetryAfter) {
                this.busyRetryAfter = busyRetryAfter;
            }

            public Duration getUnavailableRetryAfter() {
                return unavailableRetryAfter;
            }

            public void setUnavailableRetryAfter(Duration unavailableRetryAfter) {
                this.unavailableRetryAfter = unavailableRetryAfter;
            }

        }

    }

}
