package io.github.distlock.sample.zookeeper;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;

import org.apache.zookeeper.server.embedded.ExitHandler;
import org.apache.zookeeper.server.embedded.ZooKeeperServerEmbedded;
import org.springframework.util.FileSystemUtils;

/**
 * A private, standalone ZooKeeper server inside this JVM, on a free local port, with its
 * data in a temporary directory: ZooKeeper's own {@link ZooKeeperServerEmbedded} from the
 * zookeeper jar that lock-zookeeper already brings. It lets the sample show a ZooKeeper
 * lock on a machine without a ZooKeeper; the lock library itself never starts one.
 *
 * <p>
 * One server is not an ensemble: it shows the API and the fencing token, not ZooKeeper's
 * fault tolerance, which needs three servers or more. The server binds to 127.0.0.1 only.
 * {@link #close()} stops it and deletes its directory.
 */
public final class EmbeddedZooKeeper implements AutoCloseable {

    /** The address the embedded server listens on. */
    public static final String HOST = "127.0.0.1";

    /**
     * The longest session the server grants. lock-zookeeper asks for 60 s by default
     * ({@code distributed-lock.zookeeper.session-timeout}), and a standalone server caps
     * sessions at 20 ticks (40 s), which the backend would reject at startup.
     */
    static final Duration MAX_SESSION_TIMEOUT = Duration.ofSeconds(60);

    private static final Duration START_TIMEOUT = Duration.ofSeconds(30);

    private static final int START_ATTEMPTS = 3;

    private final ZooKeeperServerEmbedded server;

    private final int port;

    private final Path directory;

    private EmbeddedZooKeeper(ZooKeeperServerEmbedded server, int port, Path directory) {
        this.server = server;
        this.port = port;
        this.directory = directory;
    }

    /**
     * Starts a server on a free port and returns once it serves clients.
     * @throws IllegalStateException if no server could be started
     */
    public static EmbeddedZooKeeper start() {
        Exception last = null;
        // A free port can be taken by another process between probing and binding; try a
        // fresh one then.
        for (int attempt = 0; attempt < START_ATTEMPTS; attempt++) {
            int port = freePort();
            Path directory = temporaryDirectory();
            try {
                ZooKeeperServerEmbedded server = ZooKeeperServerEmbedded.builder()
                    .baseDir(directory)
                    .configuration(configuration(port))
                    // A server failure must not end the application's JVM.
                    .exitHandler(ExitHandler.LOG_ONLY)
                    .build();
                server.start(START_TIMEOUT.toMillis());
                return new EmbeddedZooKeeper(server, port, directory);
            }
            catch (Exception e) {
                FileSystemUtils.deleteRecursively(directory.toFile());
                last = e;
            }
        }
        throw new IllegalStateException("Could not start an embedded ZooKeeper on " + HOST + ". Start a ZooKeeper "
                + "yourself and pass --distributed-lock.zookeeper.connect-string=<host>:<port>.", last);
    }

    private static Properties configuration(int port) {
        Properties configuration = new Properties();
        configuration.setProperty("clientPort", Integer.toString(port));
        configuration.setProperty("clientPortAddress", HOST);
        configuration.setProperty("tickTime", "2000");
        configuration.setProperty("maxSessionTimeout", Long.toString(MAX_SESSION_TIMEOUT.toMillis()));
        // Its Jetty admin server would listen on 8080, the sample's own HTTP port.
        configuration.setProperty("admin.enableServer", "false");
        return configuration;
    }

    /** The port the server listens on, at {@link #HOST}. */
    public int port() {
        return port;
    }

    /** The connect string for lock-zookeeper: {@code 127.0.0.1:<port>}. */
    public String connectString() {
        return HOST + ":" + port;
    }

    /** The directory that holds the server's data until {@link #close()}. */
    public Path directory() {
        return directory;
    }

    /** Stops the server and deletes its data. */
    @Override
    public void close() {
        try {
            server.close();
        }
        finally {
            FileSystemUtils.deleteRecursively(directory.toFile());
        }
    }

    private static Path temporaryDirectory() {
        try {
            return Files.createTempDirectory("lock-sample-zookeeper-");
        }
        catch (IOException e) {
            throw new UncheckedIOException("No temporary directory for an embedded ZooKeeper's data", e);
        }
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
        catch (IOException e) {
            throw new UncheckedIOException("No free local port for an embedded ZooKeeper", e);
        }
    }

}
