package io.github.distlock.sample.demo;

import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;

import io.github.distlock.LockHandle;
import io.github.distlock.LockRequest;
import io.github.distlock.LockService;
import io.github.distlock.ReplicaAcknowledgementException;
import io.github.distlock.sample.redis.EmbeddedRedis;
import io.github.distlock.sample.redis.ReplicationLink;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.core.env.StandardEnvironment;

/**
 * A failover that loses a lock. Replication is asynchronous: a master confirms a lock
 * before its replica has it, and if the replica is promoted then, the lock is gone and a
 * second client takes it. {@code distributed-lock.replica-acks=1} makes the acquisition
 * wait ({@code WAIT 1 <timeout>}) until the replica confirms it, and refuse it
 * ({@code ReplicaAcknowledgementException}) when it does not.
 *
 * <p>
 * The demo starts a master and a replica (embedded redis-servers) whose replication goes
 * through a {@link ReplicationLink} it can cut. Per row: instance A takes the lock on the
 * master, the replica is promoted ({@code REPLICAOF NO ONE}, a manual failover, as
 * Sentinel would do), and instance B tries the same lock on the promoted replica.
 */
public final class FailoverDemo {

    /** The demo's name for {@code --demo=<name>}. */
    public static final String NAME = "failover";

    /**
     * How long the master waits for the replica's acknowledgement in the replica-acks
     * rows.
     */
    static final Duration ACK_TIMEOUT = Duration.ofMillis(200);

    private static final String KEY = "failover-demo:order-1";

    private static final Duration SYNC_TIMEOUT = Duration.ofSeconds(20);

    private FailoverDemo() {
    }

    /**
     * One row.
     *
     * @param replicaAcks {@code distributed-lock.replica-acks} of instance A
     * @param linkCut whether the replication link was cut before A took the lock
     * @param acquiredA whether A got the lock on the master
     * @param refusalA why A did not, or {@code null}
     * @param onReplica whether the promoted replica had A's lock
     * @param acquiredB whether B got the same lock on the promoted replica
     */
    public record Row(int replicaAcks, boolean linkCut, boolean acquiredA, String refusalA, boolean onReplica,
            boolean acquiredB) {

        /** How many clients believed they held the lock after the failover. */
        public int holders() {
            return (acquiredA ? 1 : 0) + (acquiredB ? 1 : 0);
        }
    }

    /** The rows as a table. */
    public static DemoTable table(List<Row> rows) {
        DemoTable table = new DemoTable().right("replica-acks")
            .left("replication")
            .left("A on the master")
            .left("lock on the replica at failover")
            .left("B on the promoted replica")
            .left("holders");
        for (Row row : rows) {
            table.row(row.replicaAcks(), row.linkCut() ? "cut" : "up",
                    row.acquiredA() ? "acquired" : "refused: " + row.refusalA(),
                    row.onReplica() ? "present" : "missing", row.acquiredB() ? "acquired" : "refused (busy)",
                    row.holders() + (row.holders() > 1 ? ": lock lost" : ""));
        }
        return table;
    }

    /** Runs the demo as a command; see {@link DemoCommand}. */
    static int runCommand(PrintStream out, StandardEnvironment given, String[] instanceArgs) {
        out.printf("A master and its replica (embedded redis-servers, replicating through a link the demo can cut). "
                + "Per row: instance A takes the lock '%s' on the master, the replica is promoted (REPLICAOF NO ONE), "
                + "and instance B tries the same lock there. With replica-acks=1, A's acquisition waits up to %d ms "
                + "for the replica to confirm it (WAIT).%n%n", KEY, ACK_TIMEOUT.toMillis());
        List<Row> rows = run(instanceArgs);
        out.print(table(rows));
        Row lost = rows.get(0);
        Row refused = rows.get(1);
        Row kept = rows.get(2);
        if (lost.holders() != 2 || refused.acquiredA() || refused.holders() != 1 || !kept.onReplica()
                || kept.holders() != 1) {
            out.println("\nVerdict: unexpected: see the rows above.");
            return 1;
        }
        out.println("\nVerdict: without replica acks the failover lost A's lock and B took it too (two holders); with "
                + "replica-acks=1 the acquisition the replica could not confirm was refused "
                + "(ReplicaAcknowledgementException), and a confirmed one survived the failover.");
        return 0;
    }

    /**
     * Starts the master, the replica and three instances (A without and with replica
     * acks, B), runs the three rows, and stops everything again.
     * @param userArgs the user's arguments; any Redis address among them is replaced by
     * the demo's own
     * @return without acks and link cut; with acks and link cut; with acks and link up
     */
    public static List<Row> run(String... userArgs) {
        List<String> args = Arrays.stream(userArgs).filter(arg -> !arg.startsWith("--spring.data.redis.")).toList();
        List<AutoCloseable> resources = new ArrayList<>();
        try {
            EmbeddedRedis master = EmbeddedRedis.start();
            resources.add(master);
            ReplicationLink link = ReplicationLink.to(master.port());
            resources.add(link);
            EmbeddedRedis replica = EmbeddedRedis.start("replicaof " + EmbeddedRedis.HOST + " " + link.port());
            resources.add(replica);

            ConfigurableApplicationContext plainA = instance(resources, "instance-a", master, args,
                    Map.of("distributed-lock.replica-acks", "0"));
            ConfigurableApplicationContext ackingA = instance(resources, "instance-a-acks", master, args,
                    Map.of("distributed-lock.replica-acks", "1", "distributed-lock.replica-ack-timeout",
                            ACK_TIMEOUT.toMillis() + "ms"));
            ConfigurableApplicationContext instanceB = instance(resources, "instance-b", replica, args, Map.of());

            Topology topology = new Topology(plainA.getBean(StringRedisTemplate.class),
                    instanceB.getBean(StringRedisTemplate.class), link,
                    plainA.getEnvironment().getProperty("distributed-lock.key-prefix", "lock:") + "{" + KEY + "}");
            LockService b = instanceB.getBean(LockService.class);
            List<Row> rows = new ArrayList<>();
            rows.add(runRow(0, true, plainA.getBean(LockService.class), b, topology));
            rows.add(runRow(1, true, ackingA.getBean(LockService.class), b, topology));
            rows.add(runRow(1, false, ackingA.getBean(LockService.class), b, topology));
            return rows;
        }
        finally {
            for (int i = resources.size() - 1; i >= 0; i--) {
                try {
                    resources.get(i).close();
                }
                catch (Exception e) {
                    // Stop the rest anyway.
                }
            }
        }
    }

    private static ConfigurableApplicationContext instance(List<AutoCloseable> resources, String name,
            EmbeddedRedis redis, List<String> args, Map<String, Object> properties) {
        List<String> instanceArgs = new ArrayList<>(args);
        instanceArgs.add("--spring.data.redis.host=" + EmbeddedRedis.HOST);
        instanceArgs.add("--spring.data.redis.port=" + redis.port());
        ConfigurableApplicationContext context = DemoInstances.start(name, properties,
                instanceArgs.toArray(String[]::new));
        resources.add(context);
        return context;
    }

    private static Row runRow(int acks, boolean cut, LockService a, LockService b, Topology topology) {
        topology.replicate();
        if (cut) {
            topology.link().cut();
        }
        Optional<LockHandle> lockA = Optional.empty();
        String refusal = null;
        try {
            lockA = a.tryLock(LockRequest.of(KEY).withTtl(Duration.ofSeconds(30)).withWaitTime(Duration.ZERO));
            if (lockA.isEmpty()) {
                refusal = "busy";
            }
        }
        catch (ReplicaAcknowledgementException e) {
            refusal = e.getReceivedAcks() + " of " + e.getRequestedAcks() + " replica acks in "
                    + e.getTimeout().toMillis() + " ms";
        }
        boolean onReplica = Boolean.TRUE.equals(topology.replica().hasKey(topology.lockKey()));
        // The failover: the replica becomes a master with whatever it had received.
        topology.replica().execute((RedisCallback<Void>) connection -> {
            connection.serverCommands().replicaOfNoOne();
            return null;
        });
        Optional<LockHandle> lockB = b
            .tryLock(LockRequest.of(KEY).withTtl(Duration.ofSeconds(30)).withWaitTime(Duration.ZERO));
        Row row = new Row(acks, cut, lockA.isPresent(), refusal, onReplica, lockB.isPresent());
        lockB.ifPresent(LockHandle::release);
        lockA.ifPresent(LockHandle::release);
        return row;
    }

    /**
     * The master and replica as the demo sees them.
     *
     * @param master commands to the master
     * @param replica commands to the replica (a master after a failover)
     * @param link the replication link
     * @param lockKey the lock's Redis key
     */
    private record Topology(StringRedisTemplate master, StringRedisTemplate replica, ReplicationLink link,
            String lockKey) {

        /**
         * Makes the replica a replica of the master again, with an empty data set, and
         * waits until a write on the master reaches it.
         */
        void replicate() {
            master.execute((RedisCallback<Void>) connection -> {
                connection.serverCommands().flushAll();
                return null;
            });
            link.heal();
            replica.execute((RedisCallback<Void>) connection -> {
                connection.serverCommands().replicaOf(EmbeddedRedis.HOST, link.port());
                return null;
            });
            String probe = Long.toString(System.nanoTime());
            master.opsForValue().set("failover-demo:probe", probe);
            long deadline = System.nanoTime() + SYNC_TIMEOUT.toNanos();
            while (!probe.equals(replica.opsForValue().get("failover-demo:probe")) || !linkUp()) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException(
                            "The replica did not catch up with the master within " + SYNC_TIMEOUT.toSeconds() + " s");
                }
                try {
                    Thread.sleep(20);
                }
                catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("Interrupted while waiting for replication", e);
                }
            }
        }

        private boolean linkUp() {
            Properties info = replica
                .execute((RedisCallback<Properties>) connection -> connection.serverCommands().info("replication"));
            return info != null && "up".equals(info.getProperty("master_link_status"));
        }
    }

}
