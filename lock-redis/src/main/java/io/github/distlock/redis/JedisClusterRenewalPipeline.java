package io.github.distlock.redis;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import org.springframework.data.redis.connection.RedisConnection;

import io.github.distlock.redis.RedisLockTransport.RenewalCall;

import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Connection;
import redis.clients.jedis.ConnectionPool;
import redis.clients.jedis.JedisCluster;
import redis.clients.jedis.Pipeline;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.Response;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * The renewal script calls of one Cluster master sent to it as one Jedis pipeline: one
 * round trip for the leases of hundreds of slots, where Spring Data's
 * {@code execute(RedisScript, keys, args)} makes one round trip per slot (a script call
 * cannot span slots, and Spring Data does not pipeline on a Cluster). Used by
 * {@link SpringDataTransport} on a Jedis Cluster connection only.
 *
 * <p>
 * The pipeline goes to the node the backend's own map of slots names, on a connection of
 * the Jedis cluster client's pool for that node; it does not follow {@code MOVED} or
 * {@code ASK}. A call the node refuses (its slot moved or is migrating, {@code TRYAGAIN},
 * {@code CLUSTERDOWN}) is handed back unanswered, and the backend sends it again on its
 * own through the cluster client, which follows redirects. A script the node has not
 * cached ({@code NOSCRIPT}: a restarted or new master) is loaded once with
 * {@code SCRIPT LOAD} and the calls that missed it are sent again in a second pipeline.
 * Renewal is idempotent for its token, so sending a call twice is safe.
 *
 * <pre>{@code
 * List<List<Object>> replies = JedisClusterRenewalPipeline.send(connection, "10.0.0.5:6379", LockScripts.RENEW,
 *         calls);   // the master's renewal calls, as RedisLockProtocol made them
 * // replies.get(i): the script's reply for call i, or null if that call must be sent again through the client
 * }</pre>
 *
 * <p>
 * This class refers to Jedis types; nothing loads it unless the connection is a Jedis
 * Cluster connection, so Jedis stays an optional dependency.
 */
final class JedisClusterRenewalPipeline {

    /**
     * Spring Data's Jedis Cluster connection, by name: checking it needs no Jedis class
     * loaded.
     */
    static final String JEDIS_CLUSTER_CONNECTION = "org.springframework.data.redis.connection.jedis."
            + "JedisClusterConnection";

    /**
     * Jedis 7's cluster client, which Spring Data Redis 4 (Spring Boot 4) hands out in
     * place of Jedis 5 and 6's {@link JedisCluster}; {@code null} on those. Both have
     * {@code getClusterNodes()} but share no type that declares it, and this class
     * compiles against the older Jedis: a handle looked up once by name reaches the new
     * one's.
     */
    private static final Class<?> JEDIS7_CLUSTER_CLIENT = jedis7ClusterClient();

    private static final MethodHandle JEDIS7_CLUSTER_NODES = jedis7ClusterNodes(JEDIS7_CLUSTER_CLIENT);

    private JedisClusterRenewalPipeline() {
    }

    /**
     * Whether {@code connection} (as Spring Data's template hands it to a callback,
     * decorated or not) is a Jedis Cluster connection whose calls this class can
     * pipeline.
     */
    static boolean canPipeline(RedisConnection connection) {
        RedisConnection raw = undecorated(connection);
        if (!raw.getClass().getName().equals(JEDIS_CLUSTER_CONNECTION)) {
            return false;
        }
        Object client = raw.getNativeConnection();
        return client instanceof JedisCluster
                || (JEDIS7_CLUSTER_NODES != null && JEDIS7_CLUSTER_CLIENT.isInstance(client));
    }

    /**
     * Sends script calls to one master in one pipeline, on a connection of that master's
     * pool.
     * @param connection a connection from the template, on which {@link #canPipeline} is
     * true
     * @param node the master, as {@code host:port}
     * @param script the script every call runs
     * @param calls the calls, each with keys in one slot of that master
     * @return each call's reply, in order, or {@code null} for a call the node refused
     * (to be sent again through the cluster client); {@code null} as a whole if the
     * client knows no pool for {@code node} (the cluster's shape changed): send every
     * call through the client then
     * @throws RuntimeException if the connection fails (a timeout, a reset): none of the
     * calls has an answer
     */
    static List<List<Object>> send(RedisConnection connection, String node, LuaScript script, List<RenewalCall> calls) {
        ConnectionPool pool = clusterNodes(undecorated(connection).getNativeConnection()).get(node);
        if (pool == null) {
            return null;
        }
        List<Integer> all = new ArrayList<>(calls.size());
        for (int i = 0; i < calls.size(); i++) {
            all.add(i);
        }
        List<List<Object>> replies = new ArrayList<>(calls.size());
        List<String> errors = new ArrayList<>(calls.size());
        for (int i = 0; i < calls.size(); i++) {
            replies.add(null);
            errors.add(null);
        }
        try (Connection nodeConnection = pool.getResource()) {
            pipeline(nodeConnection, script, calls, all, replies, errors);
            List<Integer> notCached = new ArrayList<>();
            for (int i = 0; i < errors.size(); i++) {
                if (errors.get(i) != null && errors.get(i).startsWith("NOSCRIPT")) {
                    notCached.add(i);
                }
            }
            if (!notCached.isEmpty()) {
                nodeConnection.executeCommand(
                        new CommandArguments(Protocol.Command.SCRIPT).add("LOAD").add(script.sourceBytes()));
                pipeline(nodeConnection, script, calls, notCached, replies, errors);
            }
        }
        return replies;
    }

    /**
     * Sends the calls {@code which} in one pipeline; puts each reply, or each refusal's
     * message, in its place.
     */
    @SuppressWarnings("unchecked")
    private static void pipeline(Connection nodeConnection, LuaScript script, List<RenewalCall> calls,
            List<Integer> which, List<List<Object>> replies, List<String> errors) {
        byte[] sha1 = script.sha1Bytes();
        Pipeline pipeline = new Pipeline(nodeConnection);
        List<Response<Object>> responses = new ArrayList<>(which.size());
        for (int i : which) {
            responses
                .add(pipeline.evalsha(sha1, Arrays.asList(calls.get(i).keys()), Arrays.asList(calls.get(i).args())));
        }
        pipeline.sync();
        for (int r = 0; r < which.size(); r++) {
            int i = which.get(r);
            try {
                replies.set(i, (List<Object>) responses.get(r).get());
                errors.set(i, null);
            }
            catch (JedisDataException ex) {
                // MOVED, ASK, TRYAGAIN, CLUSTERDOWN, NOSCRIPT: an answer, but not the
                // script's.
                replies.set(i, null);
                errors.set(i, String.valueOf(ex.getMessage()));
            }
        }
    }

    /**
     * The cluster client's pool of each node, by {@code host:port}; the client is one
     * {@link #canPipeline} took.
     */
    @SuppressWarnings("unchecked")
    private static Map<String, ConnectionPool> clusterNodes(Object client) {
        if (client instanceof JedisCluster cluster) {
            return cluster.getClusterNodes();
        }
        try {
            return (Map<String, ConnectionPool>) JEDIS7_CLUSTER_NODES.invoke(client);
        }
        catch (RuntimeException | Error ex) {
            throw ex;
        }
        catch (Throwable ex) {
            throw new IllegalStateException("RedisClusterClient.getClusterNodes() failed", ex);
        }
    }

    private static Class<?> jedis7ClusterClient() {
        try {
            return Class.forName("redis.clients.jedis.RedisClusterClient", false,
                    JedisClusterRenewalPipeline.class.getClassLoader());
        }
        catch (ClassNotFoundException ex) {
            return null;
        }
    }

    private static MethodHandle jedis7ClusterNodes(Class<?> clusterClient) {
        if (clusterClient == null) {
            return null;
        }
        try {
            return MethodHandles.publicLookup()
                .findVirtual(clusterClient, "getClusterNodes", MethodType.methodType(Map.class));
        }
        catch (NoSuchMethodException | IllegalAccessException ex) {
            // A Jedis unlike the one this was written for: renewals then go one script
            // call per slot through the
            // cluster client, which is correct, only slower.
            return null;
        }
    }

    private static RedisConnection undecorated(RedisConnection connection) {
        return SpringDataTransport.unwrap(connection);
    }

}
