package io.github.distlock.benchmarks.adapter;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;

/**
 * The Redlock floor: the least any Redlock over the same nodes must do, with raw Lettuce.
 * {@code SET key
 * token NX PX ttl} sent to every node at once from the calling thread, done once a
 * majority answered OK; release by an {@code EVALSHA} compare-and-delete sent to every
 * node at once, done once a majority answered. One client per node sharing one set of
 * client resources (the event loops), as ours does.
 *
 * <p>
 * What it leaves out, and a real Redlock cannot: the validity check and drift, giving
 * back a split vote, bounding each node by a timeout, restart protection, renewals,
 * fencing tokens, release hints. Against {@code FLOOR} (one node) it shows what waiting
 * for the third of five answers costs on this machine, whatever the library. It is not a
 * usable lock and not a peer; under contention it retries every millisecond.
 */
final class LettuceRedlockFloorAdapter implements LockAdapter {

    private static final String COMPARE_AND_DELETE = "if redis.call('GET', KEYS[1]) == ARGV[1] then "
            + "return redis.call('DEL', KEYS[1]) end return 0";

    private static final long TTL_MILLIS = 30_000;

    private static final long RETRY_MILLIS = 1;

    private final ClientResources resources = DefaultClientResources.create();

    private final List<RedisClient> clients = new ArrayList<>();

    private final List<RedisAsyncCommands<String, String>> nodes = new ArrayList<>();

    private final List<String> releaseShas = new ArrayList<>();

    private final int majority;

    private final SecureRandom random = new SecureRandom();

    private final long waitNanos;

    /**
     * @param target a Redlock target: one client per node
     * @throws IllegalArgumentException if the target has fewer than 3 nodes
     */
    LettuceRedlockFloorAdapter(RedisTarget target) {
        if (target.nodePorts().size() < 3) {
            throw new IllegalArgumentException(
                    "a Redlock needs at least 3 nodes, the target has " + target.nodePorts());
        }
        try {
            for (String uri : target.nodeUris()) {
                RedisClient client = RedisClient.create(resources, RedisURI.create(uri));
                clients.add(client);
                StatefulRedisConnection<String, String> connection = client.connect();
                // Loaded once up front, so that every release is a single EVALSHA per
                // node.
                releaseShas.add(connection.sync().scriptLoad(COMPARE_AND_DELETE));
                nodes.add(connection.async());
            }
        }
        catch (RuntimeException ex) {
            close();
            throw ex;
        }
        majority = nodes.size() / 2 + 1;
        waitNanos = target.waitTime().toNanos();
    }

    @Override
    public void runLocked(String key, Runnable criticalSection) {
        String lockKey = "redlock-floor:" + key;
        String token = newToken();
        SetArgs setArgs = SetArgs.Builder.nx().px(TTL_MILLIS);
        long deadline = System.nanoTime() + waitNanos;
        while (!acquire(lockKey, token, setArgs)) {
            release(lockKey, token);
            if (System.nanoTime() - deadline >= 0) {
                throw new LockNotAcquiredException(key);
            }
            sleepMillis(RETRY_MILLIS);
        }
        try {
            criticalSection.run();
        }
        finally {
            release(lockKey, token);
        }
    }

    private boolean acquire(String lockKey, String token, SetArgs setArgs) {
        Majority vote = new Majority(nodes.size());
        for (RedisAsyncCommands<String, String> node : nodes) {
            node.set(lockKey, token, setArgs).whenComplete((reply, failure) -> vote.answer("OK".equals(reply)));
        }
        return vote.await();
    }

    private void release(String lockKey, String token) {
        Majority vote = new Majority(nodes.size());
        for (int i = 0; i < nodes.size(); i++) {
            nodes.get(i)
                .<Long>evalsha(releaseShas.get(i), ScriptOutputType.INTEGER, new String[] { lockKey }, token)
                .whenComplete((deleted, failure) -> vote.answer(failure == null));
        }
        vote.await();
    }

    /**
     * Counts yes and no as the nodes answer; done once a majority said yes or no majority
     * can.
     */
    private final class Majority {

        private final int asked;

        private final AtomicInteger yes = new AtomicInteger();

        private final AtomicInteger no = new AtomicInteger();

        private final CountDownLatch settled = new CountDownLatch(1);

        Majority(int asked) {
            this.asked = asked;
        }

        void answer(boolean granted) {
            if (granted ? yes.incrementAndGet() == majority : no.incrementAndGet() == asked - majority + 1) {
                settled.countDown();
            }
        }

        boolean await() {
            try {
                settled.await();
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while asking the nodes", ex);
            }
            return yes.get() >= majority;
        }

    }

    private String newToken() {
        byte[] bytes = new byte[16];
        random.nextBytes(bytes);
        return HexFormat.of().formatHex(bytes);
    }

    private static void sleepMillis(long millis) {
        try {
            TimeUnit.MILLISECONDS.sleep(millis);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for the Redlock floor", ex);
        }
    }

    @Override
    public void close() {
        for (RedisClient client : clients) {
            client.shutdown();
        }
        resources.shutdown();
    }

}
