package io.github.distlock.sample.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;

import redis.embedded.RedisServer;
import redis.embedded.core.RedisServerBuilder;

/**
 * A private redis-server process on a free local port, from the binaries bundled in
 * {@code com.github.codemonstur:embedded-redis}. It lets the sample run on a machine
 * without Redis or Docker; the lock library itself never starts one.
 *
 * <p>
 * The server binds to 127.0.0.1 only and keeps no data on disk. It stops on
 * {@link #close()}, and at the latest when the JVM exits.
 */
public final class EmbeddedRedis implements AutoCloseable {

    /** The address the embedded server listens on. */
    public static final String HOST = "127.0.0.1";

    private static final int START_ATTEMPTS = 3;

    private final RedisServer server;

    private final int port;

    private EmbeddedRedis(RedisServer server, int port) {
        this.server = server;
        this.port = port;
    }

    /**
     * Starts a server on a free port and returns once it accepts connections.
     * @throws UncheckedIOException if no server could be started, for example because the
     * bundled binary does not run on this operating system
     */
    public static EmbeddedRedis start() {
        return start(new String[0]);
    }

    /**
     * Starts a server on a free port with extra configuration lines, for example
     * {@code "replicaof 127.0.0.1 6390"}, and returns once it accepts connections.
     * @param settings redis.conf lines
     * @throws UncheckedIOException if no server could be started
     */
    public static EmbeddedRedis start(String... settings) {
        IOException last = null;
        // A free port can be taken by another process between probing and binding; try a
        // fresh one then.
        for (int attempt = 0; attempt < START_ATTEMPTS; attempt++) {
            int port = freePort();
            try {
                RedisServerBuilder builder = RedisServer.newRedisServer()
                    .bind(HOST)
                    .port(port)
                    // A throw-away store: no RDB snapshots or AOF files next to the
                    // extracted binary.
                    .setting("save \"\"")
                    .setting("appendonly no");
                for (String setting : settings) {
                    builder.setting(setting);
                }
                RedisServer server = builder.build();
                server.start();
                return new EmbeddedRedis(server, port);
            }
            catch (IOException e) {
                last = e;
            }
        }
        throw new UncheckedIOException("Could not start an embedded redis-server on " + HOST
                + ". Start a Redis yourself and pass --spring.data.redis.host/--spring.data.redis.port.", last);
    }

    /** The port the server listens on, at {@link #HOST}. */
    public int port() {
        return port;
    }

    /** Stops the server; its data is gone. Idempotent. */
    @Override
    public void close() {
        try {
            server.stop();
        }
        catch (IOException e) {
            throw new UncheckedIOException("Could not stop the embedded redis-server on port " + port, e);
        }
    }

    /**
     * Whether something accepts TCP connections at {@code host:port} within
     * {@code timeout}. A connect is enough to decide between "use it" and "start our
     * own": it sends no command.
     */
    public static boolean answers(String host, int port, Duration timeout) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host, port), (int) timeout.toMillis());
            return true;
        }
        catch (IOException e) {
            return false;
        }
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
        catch (IOException e) {
            throw new UncheckedIOException("No free local port for an embedded redis-server", e);
        }
    }

}
