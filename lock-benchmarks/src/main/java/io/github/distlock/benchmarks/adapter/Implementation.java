package io.github.distlock.benchmarks.adapter;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

import org.springframework.boot.data.redis.autoconfigure.DataRedisProperties.ClientType;
import org.springframework.integration.redis.util.RedisLockRegistry.RedisLockType;

/**
 * The implementations compared, and how to open one client of each. The enum constant
 * names are what the command line, the JMH {@code @Param} and the JSON results use.
 */
public enum Implementation {

    /** Ours through {@code LockService}, watchdog on (the default). */
    OURS_SERVICE("ours: LockService", Role.OURS, true) {
        @Override
        public LockAdapter open(RedisTarget target) {
            return new OursLockServiceAdapter(target, null, ClientType.LETTUCE, false);
        }

        @Override
        public LeaseHolder openLeaseHolder(RedisTarget target, Duration ttl) {
            return new OursLockServiceAdapter(target, ttl, ClientType.LETTUCE, false);
        }
    },

    /**
     * Ours through {@code LockService} on Jedis
     * ({@code spring.data.redis.client-type=jedis}, pooled; see
     * {@link OurApplication#JEDIS_POOL_SIZE}): the auto-configuration then picks the
     * Spring Data backend instead of the native Lettuce one. Ours, so never a peer; not
     * part of the watchdog scenario.
     */
    OURS_SERVICE_JEDIS("ours: LockService, Jedis", Role.OURS, false) {
        @Override
        public LockAdapter open(RedisTarget target) {
            return new OursLockServiceAdapter(target, null, ClientType.JEDIS, false);
        }
    },

    /** Ours through {@code @DistributedLock} on a proxied bean. */
    OURS_ANNOTATION("ours: @DistributedLock", Role.OURS, false) {
        @Override
        public LockAdapter open(RedisTarget target) {
            return new OursAnnotationAdapter(target);
        }
    },

    /**
     * {@link #OURS_SERVICE} in an application with Micrometer, wired by Boot's own
     * Actuator auto-configuration: a {@code SimpleMeterRegistry}, and Boot's
     * {@code ObservationRegistry} whose only handler is its
     * {@code DefaultMeterObservationHandler}, so every lock is timed (timers, long-task
     * timers) and counted, by whichever listeners our auto-configuration picks for that
     * application. Its ratio to {@link #OURS_SERVICE} is the cost of the instrumentation.
     */
    OURS_SERVICE_MICROMETER("ours: LockService + Micrometer", Role.OURS, false) {
        @Override
        public LockAdapter open(RedisTarget target) {
            return new OursLockServiceAdapter(target, null, ClientType.LETTUCE, true);
        }
    },

    /** Redisson {@code RLock}, watchdog on. */
    REDISSON_RLOCK("Redisson RLock", Role.PEER, true) {
        @Override
        public LockAdapter open(RedisTarget target) {
            return new RedissonAdapter(target, false, null);
        }

        @Override
        public LeaseHolder openLeaseHolder(RedisTarget target, Duration ttl) {
            return new RedissonAdapter(target, false, ttl);
        }
    },

    /** Redisson {@code RFencedLock}, watchdog on. */
    REDISSON_FENCED("Redisson RFencedLock", Role.PEER, true) {
        @Override
        public LockAdapter open(RedisTarget target) {
            return new RedissonAdapter(target, true, null);
        }

        @Override
        public LeaseHolder openLeaseHolder(RedisTarget target, Duration ttl) {
            return new RedissonAdapter(target, true, ttl);
        }
    },

    /** Spring Integration {@code RedisLockRegistry}, {@code PUB_SUB_LOCK}. */
    SI_PUB_SUB("Spring Integration PUB_SUB_LOCK", Role.PEER, true) {
        @Override
        public LockAdapter open(RedisTarget target) {
            return new SpringIntegrationAdapter(target, RedisLockType.PUB_SUB_LOCK, null);
        }

        @Override
        public LeaseHolder openLeaseHolder(RedisTarget target, Duration ttl) {
            return new SpringIntegrationAdapter(target, RedisLockType.PUB_SUB_LOCK, ttl);
        }
    },

    /**
     * Spring Integration {@code RedisLockRegistry}, {@code SPIN_LOCK}. Renewal works the
     * same in both modes, so the watchdog scenario measures only {@link #SI_PUB_SUB}.
     */
    SI_SPIN("Spring Integration SPIN_LOCK", Role.PEER, false) {
        @Override
        public LockAdapter open(RedisTarget target) {
            return new SpringIntegrationAdapter(target, RedisLockType.SPIN_LOCK, null);
        }
    },

    /** Raw Lettuce {@code SET NX PX} + {@code EVALSHA} compare-and-delete. */
    FLOOR("floor: Lettuce SET NX PX + EVALSHA", Role.FLOOR, false) {
        @Override
        public LockAdapter open(RedisTarget target) {
            return new LettuceFloorAdapter(target);
        }
    },

    /**
     * Ours through {@code LockService} as a Redlock over {@link #REDLOCK_NODES}
     * independent masters, configured only through {@code distributed-lock.redlock.*}
     * properties (see {@link OurApplication}). Measured only by the Redlock part of the
     * suite.
     */
    OURS_REDLOCK("ours: Redlock, 5 nodes", Role.OURS, false, Implementation.REDLOCK_NODES) {
        @Override
        public LockAdapter open(RedisTarget target) {
            return new OursLockServiceAdapter(target, null, ClientType.LETTUCE, false);
        }
    },

    /**
     * Redisson's {@code RedissonRedLock} (marked {@code @Deprecated} in the Redisson 4.7
     * we measure) over one {@code RLock} per node, each node on a client of its own, with
     * Redisson's defaults. Measured only by the Redlock part of the suite.
     */
    REDISSON_REDLOCK("Redisson RedLock, 5 nodes", Role.PEER, false, Implementation.REDLOCK_NODES) {
        @Override
        public LockAdapter open(RedisTarget target) {
            return new RedissonRedLockAdapter(target);
        }
    },

    /**
     * The Redlock floor: raw Lettuce, {@code SET NX PX} and a compare-and-delete sent to
     * every node at once, each done at the third of five answers
     * ({@link LettuceRedlockFloorAdapter}). What waiting for a majority of
     * {@link #REDLOCK_NODES} nodes costs on this machine, whatever the library. Measured
     * only by the Redlock part of the suite.
     */
    REDLOCK_FLOOR("Redlock floor: Lettuce SET NX PX to 5 nodes, majority", Role.FLOOR, false,
            Implementation.REDLOCK_NODES) {
        @Override
        public LockAdapter open(RedisTarget target) {
            return new LettuceRedlockFloorAdapter(target);
        }
    };

    /** How many independent masters the Redlock implementations lock over. */
    public static final int REDLOCK_NODES = 5;

    /** What an implementation is compared as. */
    public enum Role {

        /** This project. */
        OURS,
        /** A library users would pick instead; the "best peer" is the best of these. */
        PEER,
        /** The lower bound on cost, not a usable lock. */
        FLOOR

    }

    private final String label;

    private final Role role;

    private final boolean renewsLeases;

    private final int nodes;

    Implementation(String label, Role role, boolean renewsLeases) {
        this(label, role, renewsLeases, 1);
    }

    Implementation(String label, Role role, boolean renewsLeases, int nodes) {
        this.label = label;
        this.role = role;
        this.renewsLeases = renewsLeases;
        this.nodes = nodes;
    }

    /**
     * Opens one client, with its own connection(s).
     * @param target the Redis and the wait time
     * @return a new adapter; close it when done
     */
    public abstract LockAdapter open(RedisTarget target);

    /**
     * Opens one client that holds many leases with renewal on.
     * @param target the Redis
     * @param ttl the lease length
     * @return a new holder; close it when done
     * @throws UnsupportedOperationException if {@link #renewsLeases()} is false
     */
    public LeaseHolder openLeaseHolder(RedisTarget target, Duration ttl) {
        throw new UnsupportedOperationException(label + " is not part of the watchdog scenario");
    }

    /**
     * How many independent redis-servers it runs against: 1, or {@link #REDLOCK_NODES}
     * for a Redlock.
     */
    public int nodes() {
        return nodes;
    }

    /**
     * Whether it locks over several independent masters, and so belongs to the Redlock
     * part of the suite.
     */
    public boolean isRedlock() {
        return nodes > 1;
    }

    /** The implementations on one Redis: what {@code all} means. */
    public static List<Implementation> singleNode() {
        return Arrays.stream(values()).filter(implementation -> !implementation.isRedlock()).toList();
    }

    /** Whether the watchdog scenario measures it. */
    public boolean renewsLeases() {
        return renewsLeases;
    }

    /** A name short enough for a chart axis. */
    public String shortLabel() {
        return switch (this) {
            case OURS_SERVICE -> "ours (service)";
            case OURS_SERVICE_JEDIS -> "ours (Jedis)";
            case OURS_ANNOTATION -> "ours (annotation)";
            case OURS_SERVICE_MICROMETER -> "ours (Micrometer)";
            case REDISSON_RLOCK -> "Redisson RLock";
            case REDISSON_FENCED -> "Redisson fenced";
            case SI_PUB_SUB -> "SI pub-sub";
            case SI_SPIN -> "SI spin";
            case FLOOR -> "floor";
            case OURS_REDLOCK -> "ours (Redlock, 5)";
            case REDISSON_REDLOCK -> "Redisson RedLock (5)";
            case REDLOCK_FLOOR -> "Redlock floor (5)";
        };
    }

    /** How the report names it. */
    public String label() {
        return label;
    }

    /** Whether it is ours, a peer or the floor. */
    public Role role() {
        return role;
    }

    /**
     * Parses a comma-separated list of constant names, case-insensitive; {@code all} or
     * blank means every implementation on one Redis ({@link #singleNode()}); the Redlock
     * ones run only when named.
     * @param csv e.g. {@code "OURS_SERVICE,REDISSON_RLOCK"}
     * @return the implementations in declaration order of the list
     */
    public static List<Implementation> parseList(String csv) {
        if (csv == null || csv.isBlank() || csv.equalsIgnoreCase("all")) {
            return singleNode();
        }
        return Arrays.stream(csv.split(","))
            .map(String::trim)
            .filter(name -> !name.isEmpty())
            .map(name -> valueOf(name.toUpperCase(Locale.ROOT)))
            .toList();
    }

}
