package io.github.distlock.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * A Sentinel-managed group of real processes: one master, one replica (or more) and three
 * Sentinels monitoring the master under one name with a quorum of 2, tuned so that a
 * failover completes in a couple of seconds.
 *
 * <pre>{@code
 * try (RedisTestSentinelGroup group = RedisTestSentinelGroup.start()) {
 *     // spring.data.redis.sentinel.master = group.masterName()
 *     // spring.data.redis.sentinel.nodes  = String.join(",", group.sentinelHostAndPorts())
 *     group.master().set("k", "v");
 *     RedisTestServer promoted = group.failover();   // SENTINEL FAILOVER, then wait until everything agrees
 * }
 * }</pre>
 *
 * <p>
 * Why real Sentinels: a lock client must find the master through them, follow a failover,
 * and lose what the old master never replicated; only real Sentinels show how long that
 * takes and what a client sees meanwhile.
 *
 * <p>
 * Each data node and each Sentinel is a {@link RedisTestServer} on its own free port with
 * its own temporary directory, so the usual fault injection applies ({@code kill},
 * {@code pause}, {@code restart}). A Sentinel keeps the config file it rewrote across
 * {@link RedisTestServer#restart()}, like a real one. A restarted data node comes back
 * empty and as a master; the Sentinels turn it into a replica of the current master a
 * second or two later, ten to twenty on Redis 6.2 ({@link #awaitSettled(Duration)} waits
 * for that).
 *
 * <p>
 * Timings: {@code down-after-milliseconds} {@value #DOWN_AFTER_MILLIS},
 * {@code failover-timeout} {@value #FAILOVER_TIMEOUT_MILLIS}, {@code parallel-syncs} 1.
 * On Redis 7 the Sentinels' internal periods are shortened with {@code SENTINEL DEBUG}
 * too (INFO every 500 ms, hello every 250 ms): with the defaults a Sentinel waits four
 * hello periods (8 s) before it turns an old master that is still running into a replica,
 * and polls a replica's role only every 10 s. Redis 6.2 has no {@code SENTINEL DEBUG};
 * there {@link #failover()} does that last step itself, with the commands a Sentinel
 * would send, and still takes 10 to 15 s, as it waits for every Sentinel to have polled
 * the old master in its new role.
 */
public final class RedisTestSentinelGroup implements AutoCloseable {

    /**
     * The name the Sentinels monitor the master under unless
     * {@link Builder#masterName(String)} says otherwise.
     */
    public static final String DEFAULT_MASTER_NAME = "mymaster";

    /** How many Sentinels must agree that the master is down before a failover starts. */
    public static final int QUORUM = 2;

    /**
     * {@code sentinel down-after-milliseconds}: how long a master may not answer before a
     * Sentinel calls it down. Not shorter, because on a busy shared build machine a
     * process can stall for a second, and a failover nobody asked for would break the
     * test that runs meanwhile.
     */
    public static final int DOWN_AFTER_MILLIS = 2_000;

    /**
     * {@code sentinel failover-timeout}: bounds each failover step, and a Sentinel that
     * failed to fail over waits twice as long before it tries again.
     */
    public static final int FAILOVER_TIMEOUT_MILLIS = 5_000;

    private static final int SENTINEL_COUNT = 3;

    /** Generous for Redis 6.2, whose Sentinels poll a replica only every 10 s. */
    private static final Duration SETTLE_TIMEOUT = Duration.ofSeconds(40);

    private static final Duration FAILOVER_WAIT = Duration.ofSeconds(20);

    private final String masterName;

    private final Path binary;

    private final List<RedisTestServer> servers = new ArrayList<>();

    private final List<RedisTestServer> sentinels = new ArrayList<>();

    /** Whether the Sentinels accepted {@code SENTINEL DEBUG}; false on Redis 6.2. */
    private volatile boolean sentinelTimingsTuned = true;

    private boolean closed;

    private RedisTestSentinelGroup(String masterName, Path binary) {
        this.masterName = masterName;
        this.binary = binary;
    }

    /**
     * Starts a master, one replica and three Sentinels, and waits until the Sentinels
     * know each other and the replica ({@link #awaitSettled(Duration)}).
     *
     * <pre>{@code
     * try (RedisTestSentinelGroup group = RedisTestSentinelGroup.start()) { ... }
     * }</pre>
     * @return the running group; close it when done
     * @throws RedisStartupException when a process does not start
     * @throws IllegalStateException when the group does not settle in time
     */
    public static RedisTestSentinelGroup start() {
        return builder().start();
    }

    /**
     * A builder for a group with another master name, more replicas or another
     * {@code redis-server}.
     *
     * <pre>{@code
     * RedisTestSentinelGroup group = RedisTestSentinelGroup.builder().masterName("orders").replicas(2).start();
     * }</pre>
     * @return a new builder with default settings
     */
    public static Builder builder() {
        return new Builder();
    }

    private void launch(int replicaCount) {
        RedisTestServer.Builder dataNodes = RedisTestServer.builder();
        if (binary != null) {
            dataNodes.binary(binary);
        }
        servers.addAll(dataNodes.startMany(1 + replicaCount));
        RedisTestServer master = servers.get(0);
        for (RedisTestServer replica : servers.subList(1, servers.size())) {
            // Made a replica at runtime, not with --replicaof, so that a restart brings
            // it back as a plain master,
            // the same as the first master after a failover; the Sentinels then
            // reconfigure either one.
            replica.command("REPLICAOF", master.host(), Integer.toString(master.port()));
            replica.awaitMasterLinkUp(SETTLE_TIMEOUT);
        }
        RedisTestServer.Builder sentinelNodes = RedisTestServer.builder()
            .sentinel(
                    List.of("sentinel monitor " + masterName + " " + master.host() + " " + master.port() + " " + QUORUM,
                            "sentinel down-after-milliseconds " + masterName + " " + DOWN_AFTER_MILLIS,
                            "sentinel failover-timeout " + masterName + " " + FAILOVER_TIMEOUT_MILLIS,
                            "sentinel parallel-syncs " + masterName + " 1"))
            .afterStart(this::tuneSentinelTimings);
        if (binary != null) {
            sentinelNodes.binary(binary);
        }
        sentinels.addAll(sentinelNodes.startMany(SENTINEL_COUNT));
        awaitSettled(SETTLE_TIMEOUT);
    }

    /**
     * Runs after every Sentinel start, restarts included: the settings live in memory
     * only.
     */
    private void tuneSentinelTimings(RedisTestServer sentinel) {
        try {
            sentinel.command("SENTINEL", "DEBUG", "INFO-PERIOD", "500", "PUBLISH-PERIOD", "250");
        }
        catch (RedisErrorReplyException e) {
            sentinelTimingsTuned = false; // Redis 6.2: the defaults stay, and failover()
                                          // demotes the old master
        }
    }

    // ------------------------------------------------------------------------------------------------
    // addressing

    /**
     * The name the Sentinels monitor the master under, for
     * {@code spring.data.redis.sentinel.master}.
     *
     * <pre>{@code
     * registry.add("spring.data.redis.sentinel.master", group::masterName);
     * }</pre>
     * @return e.g. {@value #DEFAULT_MASTER_NAME}
     */
    public String masterName() {
        return masterName;
    }

    /**
     * The three Sentinel processes, in start order, e.g. to pause or kill one.
     *
     * <pre>{@code
     * group.sentinels().get(0).kill();    // two of three still reach the quorum
     * }</pre>
     * @return an unmodifiable list
     */
    public List<RedisTestServer> sentinels() {
        return List.copyOf(sentinels);
    }

    /**
     * {@code host:port} of every Sentinel, for {@code spring.data.redis.sentinel.nodes}
     * or Lettuce's {@code RedisURI.Builder.sentinel(...)}.
     *
     * <pre>{@code
     * registry.add("spring.data.redis.sentinel.nodes", () -> String.join(",", group.sentinelHostAndPorts()));
     * }</pre>
     * @return one {@code 127.0.0.1:PORT} per Sentinel
     */
    public List<String> sentinelHostAndPorts() {
        return sentinels.stream().map(s -> s.host() + ":" + s.port()).collect(Collectors.toList());
    }

    /**
     * The data nodes (master and replicas), in start order; the first was the master at
     * start. Roles change with failovers, {@link #master()} and {@link #replicas()} tell
     * the current ones.
     *
     * <pre>{@code
     * group.servers().forEach(node -> assertThat(node.get("k")).isEqualTo("v"));
     * }</pre>
     * @return an unmodifiable list
     */
    public List<RedisTestServer> servers() {
        return List.copyOf(servers);
    }

    /**
     * The data node a Sentinel currently names as master
     * ({@code SENTINEL GET-MASTER-ADDR-BY-NAME}), asking the first Sentinel that runs and
     * is not paused. During a failover Sentinels may disagree for a moment;
     * {@link #awaitMasterChange} and {@link #awaitSettled} wait for agreement.
     *
     * <pre>{@code
     * group.master().set("lock:{order-42}", "token-a");
     * }</pre>
     * @return the master
     * @throws IllegalStateException when no Sentinel answers or the address is not one of
     * the group's nodes
     */
    public RedisTestServer master() {
        return serverAt(masterAddressAccordingTo(firstResponsiveSentinel()));
    }

    /**
     * {@code host:port} of the master as a Sentinel reports it
     * ({@code SENTINEL GET-MASTER-ADDR-BY-NAME}).
     *
     * <pre>{@code
     * assertThat(group.masterHostAndPort()).isEqualTo("127.0.0.1:" + promoted.port());
     * }</pre>
     * @return e.g. {@code 127.0.0.1:41234}
     * @throws IllegalStateException when no Sentinel answers
     */
    public String masterHostAndPort() {
        return masterAddressAccordingTo(firstResponsiveSentinel());
    }

    /**
     * The data nodes other than {@link #master()}, in start order, including any a test
     * has killed.
     *
     * <pre>{@code
     * RedisTestServer replica = group.replicas().get(0);
     * replica.awaitCaughtUpWith(group.master(), Duration.ofSeconds(5));
     * }</pre>
     * @return the replicas
     */
    public List<RedisTestServer> replicas() {
        RedisTestServer master = master();
        return servers.stream().filter(node -> node != master).collect(Collectors.toList());
    }

    // ------------------------------------------------------------------------------------------------
    // failover

    /**
     * Fails over on purpose: waits until the replicas have applied every write made so
     * far ({@link #awaitSettled}), sends {@code SENTINEL FAILOVER <name>} (no agreement
     * needed, the old master stays up), then waits until every Sentinel reports the new
     * master, the old master has become its replica with its link up, and the Sentinels
     * see every running replica again. Writes acknowledged before the call are therefore
     * on the new master; Sentinel itself does not wait for that, and a write made during
     * the call may be lost. Clients connected to the old master are disconnected in the
     * process (Sentinel sends {@code CLIENT KILL TYPE normal}), so a Sentinel-aware
     * client reconnects to the new master. Until then, for about a second after the
     * switch, the old master still accepts writes from clients connected to it, and drops
     * them when it becomes a replica: the window a lock's {@code WAIT} does not close.
     *
     * <pre>{@code
     * RedisTestServer before = group.master();
     * RedisTestServer after = group.failover();
     * assertThat(after).isNotSameAs(before);
     * }</pre>
     * @return the new master
     * @throws IllegalStateException when the failover does not complete in time
     */
    public RedisTestServer failover() {
        awaitSettled(SETTLE_TIMEOUT); // Sentinel refuses (NOGOODSLAVE) until it has fresh
                                      // news of a healthy replica
        RedisTestServer previous = master();
        requestFailover();
        RedisTestServer next = awaitMasterChange(previous, FAILOVER_WAIT);
        if (!sentinelTimingsTuned) {
            demoteToReplicaOf(previous, next);
        }
        awaitSettled(SETTLE_TIMEOUT);
        return next;
    }

    private void requestFailover() {
        long deadline = System.nanoTime() + FAILOVER_WAIT.toNanos();
        while (true) {
            try {
                firstResponsiveSentinel().command("SENTINEL", "FAILOVER", masterName);
                return;
            }
            catch (RedisErrorReplyException e) {
                // NOGOODSLAVE: no Sentinel view of a replica is fresh enough yet; it will
                // be within an INFO period.
                if (!String.valueOf(e.getMessage()).startsWith("NOGOODSLAVE") || System.nanoTime() > deadline) {
                    throw new IllegalStateException("SENTINEL FAILOVER " + masterName + " failed on " + this, e);
                }
            }
            RedisTestServer.sleepMillis(50);
        }
    }

    /**
     * The step a Sentinel takes, with the commands it sends, when an instance it lists as
     * a replica still claims to be a master; done here only where Redis 6.2 would
     * otherwise make {@link #failover()} wait about ten seconds.
     */
    private static void demoteToReplicaOf(RedisTestServer node, RedisTestServer master) {
        if (!node.isRunning() || node.isPaused()) {
            return;
        }
        try (RespConnection connection = node.openConnection()) {
            connection.command("MULTI");
            connection.command("REPLICAOF", master.host(), Integer.toString(master.port()));
            connection.command("CONFIG", "REWRITE");
            connection.command("CLIENT", "KILL", "TYPE", "normal");
            connection.command("CLIENT", "KILL", "TYPE", "pubsub");
            connection.command("EXEC");
        }
        catch (IOException e) {
            throw new UncheckedIOException("could not turn " + node + " into a replica of " + master, e);
        }
    }

    /**
     * Waits until every running Sentinel names the same master, other than
     * {@code previous}: after a test killed or paused the master, or asked for a failover
     * some other way. {@code previous} is explicit because by the time a test calls this
     * the switch may already have happened.
     *
     * <pre>{@code
     * RedisTestServer old = group.master();
     * old.kill();
     * RedisTestServer promoted = group.awaitMasterChange(old, Duration.ofSeconds(10));
     * }</pre>
     * @param previous the master before the change
     * @param timeout how long to wait at most
     * @return the new master
     * @throws IllegalStateException when the Sentinels do not agree on a new master in
     * time
     */
    public RedisTestServer awaitMasterChange(RedisTestServer previous, Duration timeout) {
        String previousAddress = previous.host() + ":" + previous.port();
        long deadline = System.nanoTime() + timeout.toNanos();
        String views = "";
        while (System.nanoTime() < deadline) {
            Set<String> addresses = new HashSet<>();
            StringBuilder viewsNow = new StringBuilder();
            for (RedisTestServer sentinel : responsiveSentinels()) {
                String address;
                try {
                    address = masterAddressAccordingTo(sentinel);
                }
                catch (UncheckedIOException | RedisErrorReplyException e) {
                    address = e.toString();
                }
                addresses.add(address);
                viewsNow.append(sentinel.port()).append("->").append(address).append(' ');
            }
            views = viewsNow.toString();
            if (addresses.size() == 1 && !addresses.contains(previousAddress)) {
                return serverAt(addresses.iterator().next());
            }
            RedisTestServer.sleepMillis(20);
        }
        throw new IllegalStateException("the Sentinels of " + this + " did not agree on a master other than "
                + previousAddress + " within " + timeout + " (sentinel->master: " + views + ")");
    }

    /**
     * Waits until the group is quiet: every running Sentinel names the same running
     * master, knows the other Sentinels and sees every running replica as healthy, and
     * every running replica replicates from that master with its link up and has applied
     * everything the master wrote so far. Paused and killed processes are left out.
     * Useful after restarting a node, or between tests that share a group.
     *
     * <pre>{@code
     * group.replicas().get(0).restart();
     * group.awaitSettled(Duration.ofSeconds(10));
     * }</pre>
     * @param timeout how long to wait at most
     * @throws IllegalStateException with the last thing that was not yet right, when the
     * group does not settle
     */
    public void awaitSettled(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        String notSettled;
        while ((notSettled = whatIsNotSettled()) != null) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(this + " did not settle within " + timeout + ": " + notSettled);
            }
            RedisTestServer.sleepMillis(20);
        }
    }

    /**
     * @return why the group is not settled, or null when it is
     */
    private String whatIsNotSettled() {
        try {
            List<RedisTestServer> liveSentinels = responsiveSentinels();
            if (liveSentinels.isEmpty()) {
                return "no Sentinel is running";
            }
            String masterAddress = null;
            for (RedisTestServer sentinel : liveSentinels) {
                String address = masterAddressAccordingTo(sentinel);
                if (masterAddress == null) {
                    masterAddress = address;
                }
                else if (!masterAddress.equals(address)) {
                    return "Sentinels disagree on the master: " + masterAddress + " and " + address;
                }
            }
            RedisTestServer master = serverAt(masterAddress);
            if (!master.isRunning() || master.isPaused()) {
                return "the Sentinels name " + master + " as master, which is not running";
            }
            if (!"master".equals(master.infoValue("replication", "role"))) {
                return master + " is named master by the Sentinels but is not one yet";
            }
            List<RedisTestServer> liveReplicas = servers.stream()
                .filter(node -> node != master && node.isRunning() && !node.isPaused())
                .collect(Collectors.toList());
            for (RedisTestServer replica : liveReplicas) {
                String masterPort = replica.infoValue("replication", "master_port");
                String link = replica.infoValue("replication", "master_link_status");
                if (!Integer.toString(master.port()).equals(masterPort) || !"up".equals(link)) {
                    return replica + " is not yet a linked replica of " + master + " (master_port:" + masterPort
                            + ", master_link_status:" + link + ")";
                }
                // The link reports up as soon as a full sync is loaded, but the master
                // streams the writes made
                // since only after the replica's first acknowledgement, up to a second
                // later: a failover in between
                // would lose them.
                long written = master.replicationOffset();
                long applied = replica.replicationOffset();
                if (applied < written) {
                    return replica + " has applied replication offset " + applied + " of " + written;
                }
            }
            for (RedisTestServer sentinel : liveSentinels) {
                Map<String, String> state = pairs(sentinel.command("SENTINEL", "MASTER", masterName));
                if (!"master".equals(state.get("flags"))) {
                    return "Sentinel " + sentinel.port() + " flags the master " + state.get("flags");
                }
                if (Integer.parseInt(state.get("num-other-sentinels")) < liveSentinels.size() - 1) {
                    return "Sentinel " + sentinel.port() + " knows " + state.get("num-other-sentinels")
                            + " other Sentinels, not yet " + (liveSentinels.size() - 1);
                }
                // A Sentinel that has not itself seen a node report the replica role
                // keeps an older role change on
                // record; if that node is promoted next, the Sentinel takes it for a
                // master that should not be one
                // and turns it straight back into a replica. So every Sentinel must have
                // seen every replica as such.
                Set<Integer> healthy = new HashSet<>();
                for (Object entry : (List<?>) sentinel.command("SENTINEL", "REPLICAS", masterName)) {
                    Map<String, String> fields = pairs(entry);
                    if ("slave".equals(fields.get("flags")) && "slave".equals(fields.get("role-reported"))
                            && Integer.toString(master.port()).equals(fields.get("master-port"))
                            && "ok".equals(fields.get("master-link-status"))) {
                        healthy.add(Integer.parseInt(fields.get("port")));
                    }
                }
                for (RedisTestServer replica : liveReplicas) {
                    if (!healthy.contains(replica.port())) {
                        return "Sentinel " + sentinel.port() + " has not yet seen " + replica
                                + " as a linked replica of " + master;
                    }
                }
            }
            return null;
        }
        catch (UncheckedIOException | RedisErrorReplyException | IllegalStateException e) {
            return e.getMessage(); // a node restarting or a failover under way: ask again
        }
    }

    // ------------------------------------------------------------------------------------------------
    // internals

    private List<RedisTestServer> responsiveSentinels() {
        return sentinels.stream().filter(s -> s.isRunning() && !s.isPaused()).collect(Collectors.toList());
    }

    private RedisTestServer firstResponsiveSentinel() {
        return responsiveSentinels().stream()
            .findFirst()
            .orElseThrow(() -> new IllegalStateException("no Sentinel of " + this + " is running and not paused"));
    }

    private String masterAddressAccordingTo(RedisTestServer sentinel) {
        List<?> reply = (List<?>) sentinel.command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", masterName);
        if (reply == null) {
            throw new IllegalStateException("Sentinel " + sentinel.port() + " does not monitor " + masterName);
        }
        return reply.get(0) + ":" + reply.get(1);
    }

    private RedisTestServer serverAt(String hostAndPort) {
        for (RedisTestServer node : servers) {
            if ((node.host() + ":" + node.port()).equals(hostAndPort)) {
                return node;
            }
        }
        throw new IllegalStateException(
                "the Sentinels name " + hostAndPort + " as master of " + masterName + ", which is none of " + this);
    }

    /**
     * Sentinel answers {@code SENTINEL MASTER} and each {@code SENTINEL REPLICAS} entry
     * as a flat key/value list.
     */
    private static Map<String, String> pairs(Object flatList) {
        List<?> list = (List<?>) flatList;
        Map<String, String> map = new LinkedHashMap<>();
        for (int i = 0; i + 1 < list.size(); i += 2) {
            map.put(String.valueOf(list.get(i)), String.valueOf(list.get(i + 1)));
        }
        return map;
    }

    /**
     * Closes the Sentinels first, so that none reacts to the data nodes going away, then
     * the data nodes.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        sentinels.forEach(RedisTestServer::close);
        servers.forEach(RedisTestServer::close);
    }

    /**
     * The master name and ports, for assertion messages and logs.
     * @return e.g.
     * {@code RedisTestSentinelGroup[mymaster, nodes [41234, 41235], sentinels [41236, ...]]}
     */
    @Override
    public String toString() {
        return "RedisTestSentinelGroup[" + masterName + ", nodes "
                + servers.stream().map(RedisTestServer::port).collect(Collectors.toList()) + ", sentinels "
                + sentinels.stream().map(RedisTestServer::port).collect(Collectors.toList()) + "]";
    }

    // ------------------------------------------------------------------------------------------------
    // builder

    /** Configures and starts a {@link RedisTestSentinelGroup}. */
    public static final class Builder {

        private String masterName = DEFAULT_MASTER_NAME;

        private int replicas = 1;

        private Path binary;

        private Builder() {
        }

        /**
         * The name the Sentinels monitor the master under;
         * {@value RedisTestSentinelGroup#DEFAULT_MASTER_NAME} by default.
         *
         * <pre>{@code
         * RedisTestSentinelGroup.builder().masterName("orders").start();
         * }</pre>
         * @param name letters, digits, {@code .}, {@code _} or {@code -}
         * @return this builder
         * @throws IllegalArgumentException for other characters, which Sentinel's config
         * file cannot hold
         */
        public Builder masterName(String name) {
            if (name == null || !name.matches("[A-Za-z0-9._-]+")) {
                throw new IllegalArgumentException("masterName must consist of letters, digits, '.', '_' or '-', "
                        + "was " + (name == null ? null : "'" + name + "'"));
            }
            this.masterName = name;
            return this;
        }

        /**
         * How many replicas to start besides the master; 1 by default.
         *
         * <pre>{@code
         * RedisTestSentinelGroup.builder().replicas(2).start();   // Sentinel picks one, the other follows it
         * }</pre>
         * @param count at least 1, because Sentinel cannot fail over without a replica
         * @return this builder
         */
        public Builder replicas(int count) {
            if (count < 1) {
                throw new IllegalArgumentException("replicas must be at least 1 for a failover, was " + count);
            }
            this.replicas = count;
            return this;
        }

        /**
         * Runs this {@code redis-server} for data nodes and Sentinels instead of the one
         * {@link RedisServerBinary#resolve()} picks, e.g.
         * {@link RedisServerBinary#bundled()} for Redis 6.2.
         *
         * <pre>{@code
         * RedisTestSentinelGroup.builder().binary(RedisServerBinary.bundled()).start();
         * }</pre>
         * @param redisServer path of a {@code redis-server} executable
         * @return this builder
         */
        public Builder binary(Path redisServer) {
            this.binary = Objects.requireNonNull(redisServer, "redisServer");
            return this;
        }

        /**
         * Starts the group and waits until it is settled
         * ({@link RedisTestSentinelGroup#awaitSettled}). If anything fails, what was
         * already started is closed.
         * @return the running group; close it when done
         * @throws RedisStartupException when a process does not start
         * @throws IllegalStateException when the group does not settle in time
         */
        public RedisTestSentinelGroup start() {
            RedisTestSentinelGroup group = new RedisTestSentinelGroup(masterName, binary);
            try {
                group.launch(replicas);
                return group;
            }
            catch (RuntimeException e) {
                group.close();
                throw e;
            }
        }

    }

}
