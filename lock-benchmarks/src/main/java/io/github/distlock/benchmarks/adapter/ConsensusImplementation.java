package io.github.distlock.benchmarks.adapter;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import io.github.distlock.benchmarks.adapter.Implementation.Role;
import io.github.distlock.etcd.EtcdLockBackend;
import io.github.distlock.zookeeper.ZooKeeperLockBackend;

/**
 * The implementations of the consensus part of the suite ({@code bench.only=consensus}):
 * ours and its peers on etcd and on ZooKeeper, and ours on Redis for scale, all against
 * the same servers of one run ({@link ConsensusTarget}). The constant names are what the
 * command line, the JMH {@code @Param} and the JSON results use.
 */
public enum ConsensusImplementation {

    /**
     * Ours through {@code LockService}, configured only through
     * {@code distributed-lock.etcd.endpoints}: a lease per acquisition.
     */
    OURS_ETCD("ours: LockService on etcd", Store.ETCD, Role.OURS) {
        @Override
        public LockAdapter open(ConsensusTarget target) {
            return new OursOnStoreAdapter(OurApplication.startOn(
                    Map.of("distributed-lock.etcd.endpoints", String.join(",", target.etcdEndpoints())),
                    EtcdLockBackend.class, target.waitTime()), target.waitTime());
        }
    },

    /**
     * jetcd's {@code Lock} API with one lease per client, kept alive: the raw client of
     * etcd, and what the etcd targets compare with ({@link JetcdLockAdapter}).
     */
    JETCD_LOCK("jetcd Lock, one lease per client", Store.ETCD, Role.FLOOR) {
        @Override
        public LockAdapter open(ConsensusTarget target) {
            return new JetcdLockAdapter(target, false);
        }
    },

    /**
     * jetcd's {@code Lock} API with a lease per lock, granted before and revoked after,
     * like ours ({@link JetcdLockAdapter}).
     */
    JETCD_LOCK_LEASE_PER_LOCK("jetcd Lock, one lease per lock", Store.ETCD, Role.PEER) {
        @Override
        public LockAdapter open(ConsensusTarget target) {
            return new JetcdLockAdapter(target, true);
        }
    },

    /**
     * Ours through {@code LockService}, configured only through
     * {@code distributed-lock.zookeeper.connect-string}.
     */
    OURS_ZOOKEEPER("ours: LockService on ZooKeeper", Store.ZOOKEEPER, Role.OURS) {
        @Override
        public LockAdapter open(ConsensusTarget target) {
            return new OursOnStoreAdapter(OurApplication.startOn(
                    Map.of("distributed-lock.zookeeper.connect-string", target.zooKeeperConnectString()),
                    ZooKeeperLockBackend.class, target.waitTime()), target.waitTime());
        }
    },

    /**
     * Curator's {@code InterProcessMutex}: the raw client of ZooKeeper, and what the
     * ZooKeeper targets compare with ({@link CuratorMutexAdapter}).
     */
    CURATOR_MUTEX("Curator InterProcessMutex", Store.ZOOKEEPER, Role.FLOOR) {
        @Override
        public LockAdapter open(ConsensusTarget target) {
            return new CuratorMutexAdapter(target);
        }
    },

    /**
     * Spring Integration's {@code ZookeeperLockRegistry}
     * ({@link ZooKeeperRegistryAdapter}).
     */
    SI_ZOOKEEPER("Spring Integration ZookeeperLockRegistry", Store.ZOOKEEPER, Role.PEER) {
        @Override
        public LockAdapter open(ConsensusTarget target) {
            return new ZooKeeperRegistryAdapter(target);
        }
    },

    /**
     * Ours through {@code LockService} on the run's single redis-server (Lettuce, the
     * starter's defaults): not compared with anything, it shows the scale.
     */
    OURS_REDIS("ours: LockService on Redis (single node, for scale)", Store.REDIS, Role.OURS) {
        @Override
        public LockAdapter open(ConsensusTarget target) {
            return Implementation.OURS_SERVICE.open(target.redis());
        }
    };

    /** The store an implementation locks in. */
    public enum Store {

        /** A 3-member etcd cluster. */
        ETCD("etcd"),
        /** A 3-member ZooKeeper ensemble. */
        ZOOKEEPER("ZooKeeper"),
        /** One redis-server. */
        REDIS("Redis");

        private final String label;

        Store(String label) {
            this.label = label;
        }

        /** How the report names it. */
        public String label() {
            return label;
        }

    }

    private final String label;

    private final Store store;

    private final Role role;

    ConsensusImplementation(String label, Store store, Role role) {
        this.label = label;
        this.store = store;
        this.role = role;
    }

    /**
     * Opens one client, with its own connections (for ours, its own application).
     * @param target the servers and the wait time
     * @return a new adapter; close it when done
     */
    public abstract LockAdapter open(ConsensusTarget target);

    /** How the report names it. */
    public String label() {
        return label;
    }

    /** The store it locks in. */
    public Store store() {
        return store;
    }

    /**
     * Ours, a peer, or the store's raw client ({@link Role#FLOOR}): the baseline of the
     * uncontended target, and also a lock users could pick, so it counts among the peers
     * of the contended target.
     */
    public Role role() {
        return role;
    }

    /**
     * Parses a comma-separated list of constant names, case-insensitive; {@code all} or
     * blank means every one.
     * @param csv e.g. {@code "OURS_ETCD,JETCD_LOCK"}
     * @return the implementations in the order of the list
     */
    public static List<ConsensusImplementation> parseList(String csv) {
        if (csv == null || csv.isBlank() || csv.equalsIgnoreCase("all")) {
            return List.of(values());
        }
        return Arrays.stream(csv.split(","))
            .map(String::trim)
            .filter(name -> !name.isEmpty())
            .map(name -> valueOf(name.toUpperCase(Locale.ROOT)))
            .toList();
    }

}
