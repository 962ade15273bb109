package io.github.distlock.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

import io.github.distlock.LockBackendException;
import io.github.distlock.core.InspectableLockBackend.NodeReachability;
import io.github.distlock.core.LockKey;
import io.github.distlock.redis.LockConnection.Open;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.output.ArrayOutput;
import io.lettuce.core.output.CommandOutput;
import io.lettuce.core.output.IntegerOutput;
import io.lettuce.core.output.ValueOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;

/**
 * The lock protocol's I/O on our own Lettuce connection ({@link LockConnection}):
 * commands written straight to it, pipelined with every other caller's, and sent without
 * a thread waiting where the caller asks for that. Lettuce re-sends a command whose reply
 * a reconnect lost, and the connection counts the sends ({@link Reply#resent()}). Replica
 * confirmations are bursts on the lock master's connection
 * ({@link LettuceReplicaConfirmation}).
 */
final class LettuceTransport implements RedisLockTransport {

    private static final Supplier<CommandOutput<byte[], byte[], Long>> INTEGER = () -> new IntegerOutput<>(
            ByteArrayCodec.INSTANCE);

    private static final Supplier<CommandOutput<byte[], byte[], List<Object>>> ARRAY = () -> new ArrayOutput<>(
            ByteArrayCodec.INSTANCE);

    private static final Supplier<CommandOutput<byte[], byte[], byte[]>> VALUE = () -> new ValueOutput<>(
            ByteArrayCodec.INSTANCE);

    static {
        // Initialises Lettuce's output classes here, on the thread that builds the
        // backend: a class initialised on
        // a virtual thread pins it to its carrier, and the first lock call may well run
        // on one.
        INTEGER.get();
        ARRAY.get();
        VALUE.get();
    }

    private static final byte[] NX = RedisLockProtocol.bytes("NX");

    private static final byte[] PX = RedisLockProtocol.bytes("PX");

    private static final byte[] GET = RedisLockProtocol.bytes("GET");

    private static final RenewalTopology ONE_NODE = new RenewalTopology() {

        @Override
        public boolean cluster() {
            return false;
        }

        @Override
        public String masterOf(LockKey key) {
            return "";
        }
    };

    private final LockConnection connection;

    private final LettuceReplicaConfirmation confirmation;

    LettuceTransport(LockConnection connection) {
        this.connection = connection;
        this.confirmation = new LettuceReplicaConfirmation(connection);
    }

    @Override
    public long deadline() {
        return connection.deadline();
    }

    @Override
    public Reply<byte[]> setIfAbsentGet(LockKey key, String token, byte[] value, long ttlMillis, long deadline) {
        return connection.run(key, "acquire", CommandType.SET, VALUE, setNxGet(key, value, ttlMillis), deadline);
    }

    @Override
    public CompletableFuture<Reply<byte[]>> setIfAbsentGetAsync(LockKey key, byte[] value, long ttlMillis) {
        return connection.runAsync(key, "acquire", CommandType.SET, VALUE, setNxGet(key, value, ttlMillis));
    }

    /** {@code SET key value NX PX ttl GET}. */
    private static CommandArgs<byte[], byte[]> setNxGet(LockKey key, byte[] value, long ttlMillis) {
        return new CommandArgs<>(ByteArrayCodec.INSTANCE).addKey(RedisLockProtocol.bytes(key.storeKey()))
            .add(value)
            .add(NX)
            .add(PX)
            .add(ttlMillis)
            .add(GET);
    }

    @Override
    public <T> Reply<T> script(LockKey key, String operation, LuaScript script, ReplyType type, byte[][] keys,
            byte[][] args, Role role, String token, long deadline) {
        return connection.script(key, operation, script, output(type), keys, args, deadline);
    }

    @Override
    public <T> CompletableFuture<Reply<T>> scriptAsync(LockKey key, String operation, LuaScript script, ReplyType type,
            byte[][] keys, byte[][] args) {
        return connection.scriptAsync(key, operation, script, output(type), keys, args);
    }

    @SuppressWarnings({ "unchecked", "rawtypes" })
    private static <T> Supplier<CommandOutput<byte[], byte[], T>> output(ReplyType type) {
        return (Supplier) (type == ReplyType.INTEGER ? INTEGER : ARRAY);
    }

    @Override
    public Acknowledged renewAndWait(LockKey key, byte[][] keys, byte[][] args, ReplicaAcks acks, long deadline) {
        return confirmation.renewAndWait(key, keys, args, acks, deadline);
    }

    /**
     * Outside a Cluster, known without asking; in a Cluster, from the partitions of the
     * open connection.
     */
    @Override
    public RenewalTopology renewalTopology(long deadline) {
        if (!connection.isCluster()) {
            return ONE_NODE;
        }
        Open open;
        try {
            open = connection.open(new LockKey("renewal", ""), "renewal", deadline);
        }
        catch (LockBackendException ex) {
            connection.renewalRefusals().failed(ex);
            return null;
        }
        return new RenewalTopology() {

            @Override
            public boolean cluster() {
                return true;
            }

            @Override
            public String masterOf(LockKey key) {
                return LettuceReplicaConfirmation.masterOf(open, key);
            }
        };
    }

    /**
     * Without replica acknowledgements, every call in one pipeline (the cluster
     * connection routes each to its master); with them, one burst per master
     * ({@link LettuceReplicaConfirmation#renew}).
     */
    @Override
    public void renew(LuaScript script, Map<String, List<RenewalCall>> callsByMaster, ReplicaAcks acks, long deadline,
            RenewalReplies replies) {
        if (acks.enabled()) {
            confirmation.renew(new ArrayList<>(callsByMaster.values()), acks, deadline, replies);
            return;
        }
        List<RenewalCall> calls = new ArrayList<>();
        callsByMaster.values().forEach(calls::addAll);
        connection.scripts("renew", script, ARRAY, calls, deadline,
                (index, answers) -> replies.answered(calls.get(index), answers, -1));
    }

    @Override
    public List<NodeReachability> pingEachMaster(String name) {
        return connection.pingEachMaster(name);
    }

}
