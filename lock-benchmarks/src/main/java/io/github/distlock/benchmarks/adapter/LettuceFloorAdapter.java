package io.github.distlock.benchmarks.adapter;

import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;

/**
 * The floor: the least a safe single-Redis lock can do, with raw Lettuce on one shared
 * connection. {@code SET key token NX PX ttl} to acquire and an {@code EVALSHA}
 * compare-and-delete to release, two round trips, with a fresh 128-bit random token per
 * acquisition. No watchdog, no fencing token, no pub/sub.
 *
 * <p>
 * It has no wait strategy of its own; under contention it retries every millisecond,
 * which is cheap for the client but not a design anyone should ship (it is not counted as
 * a peer).
 */
final class LettuceFloorAdapter implements LockAdapter {

    private static final String COMPARE_AND_DELETE = "if redis.call('GET', KEYS[1]) == ARGV[1] then "
            + "return redis.call('DEL', KEYS[1]) end return 0";

    private static final long TTL_MILLIS = Duration.ofSeconds(30).toMillis();

    private static final long RETRY_MILLIS = 1;

    private final RedisClient client;

    private final StatefulRedisConnection<String, String> connection;

    private final RedisCommands<String, String> commands;

    private final String releaseSha;

    private final SecureRandom random = new SecureRandom();

    private final long waitNanos;

    LettuceFloorAdapter(RedisTarget target) {
        client = RedisClient.create(RedisURI.create(target.host(), target.port()));
        connection = client.connect();
        commands = connection.sync();
        // Loaded once up front, so that every release is a single EVALSHA.
        releaseSha = commands.scriptLoad(COMPARE_AND_DELETE);
        waitNanos = target.waitTime().toNanos();
    }

    @Override
    public void runLocked(String key, Runnable criticalSection) {
        String lockKey = "floor:" + key;
        String token = newToken();
        SetArgs setArgs = SetArgs.Builder.nx().px(TTL_MILLIS);
        long deadline = System.nanoTime() + waitNanos;
        while (commands.set(lockKey, token, setArgs) == null) {
            if (System.nanoTime() - deadline >= 0) {
                throw new LockNotAcquiredException(key);
            }
            sleepMillis(RETRY_MILLIS);
        }
        try {
            criticalSection.run();
        }
        finally {
            commands.evalsha(releaseSha, ScriptOutputType.INTEGER, new String[] { lockKey }, token);
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
            throw new IllegalStateException("interrupted while waiting for the floor lock", ex);
        }
    }

    @Override
    public void close() {
        connection.close();
        client.shutdown();
    }

}
