package io.github.distlock.core;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import io.github.distlock.testsupport.RedisTestServer;
import io.github.distlock.testsupport.RespConnection;

/**
 * Checks, every few milliseconds while a sweep case runs, that each of its handles
 * reporting the lock held has its token in Redis ({@link SweepCase#checkHeldHandles}).
 * Reads Redis over a connection of its own, not through the fault proxy; while Redis is
 * paused a read simply waits for it.
 */
final class HeldHandleMonitor implements AutoCloseable {

    private static final long PERIOD_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    private final RedisTestServer redis;

    private final Thread thread;

    private volatile SweepCase watched;

    private volatile boolean closed;

    private RespConnection connection;

    HeldHandleMonitor(RedisTestServer redis) {
        this.redis = redis;
        this.thread = new Thread(this::loop, "sweep-held-handle-monitor");
        this.thread.setDaemon(true);
        this.thread.start();
    }

    /** Watches {@code sweepCase} from now on, or nothing if null. */
    void watch(SweepCase sweepCase) {
        watched = sweepCase;
    }

    private void loop() {
        while (!closed) {
            SweepCase sweepCase = watched;
            if (sweepCase != null) {
                try {
                    sweepCase.checkHeldHandles(this::get);
                }
                catch (IllegalStateException ex) {
                    // Redis did not answer the monitor (it is paused for longer than the
                    // read timeout): next round.
                }
            }
            LockSupport.parkNanos(PERIOD_NANOS);
        }
        if (connection != null) {
            connection.close();
        }
    }

    private String get(String key) {
        try {
            if (connection == null) {
                connection = RespConnection.open(redis.host(), redis.port(), Duration.ofSeconds(30));
            }
            return (String) connection.command("GET", key);
        }
        catch (IOException ex) {
            if (connection != null) {
                connection.close();
                connection = null;
            }
            throw new IllegalStateException("The monitor could not read " + key + " from Redis", ex);
        }
    }

    @Override
    public void close() throws InterruptedException {
        closed = true;
        thread.join(TimeUnit.SECONDS.toMillis(35));
    }

}
