package io.github.distlock.zookeeper;

import java.time.Duration;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * How the ZooKeeper backend connects, checked when it is built: each bad value fails with
 * a message that names its property ({@code distributed-lock.zookeeper.*}), the value and
 * the fix.
 *
 * <pre>{@code
 * ZooKeeperLockSettings settings = ZooKeeperLockSettings.of("zk1:2181,zk2:2181,zk3:2181")
 *     .withSessionTimeout(Duration.ofSeconds(60));   // at least the longest ttl of any lock
 * ZooKeeperLockBackend backend = ZooKeeperLockBackend.connect(settings);
 * }</pre>
 *
 * @param connectString the ensemble, {@code host:port} pairs separated by commas, with an
 * optional chroot after the last port ({@code zk1:2181,zk2:2181/apps})
 * ({@value #CONNECT_STRING_PROPERTY})
 * @param sessionTimeout the ZooKeeper session timeout the client asks for: the longest
 * time the ensemble keeps a silent holder's nodes, and so the longest ttl a lock may have
 * ({@value #SESSION_TIMEOUT_PROPERTY})
 * @param connectionTimeout how long to wait for the first connection when the backend is
 * built ({@value #CONNECTION_TIMEOUT_PROPERTY})
 * @param operationTimeout the bound of every lock call (acquire, release, renewal round)
 * ({@value #OPERATION_TIMEOUT_PROPERTY})
 * @param rootPath the node every lock lives under ({@value #ROOT_PATH_PROPERTY})
 */
public record ZooKeeperLockSettings(String connectString, Duration sessionTimeout, Duration connectionTimeout,
        Duration operationTimeout, String rootPath) {

    /** The property of {@link #connectString()}. */
    public static final String CONNECT_STRING_PROPERTY = "distributed-lock.zookeeper.connect-string";

    /** The property of {@link #sessionTimeout()}. */
    public static final String SESSION_TIMEOUT_PROPERTY = "distributed-lock.zookeeper.session-timeout";

    /** The property of {@link #connectionTimeout()}. */
    public static final String CONNECTION_TIMEOUT_PROPERTY = "distributed-lock.zookeeper.connection-timeout";

    /** The property of {@link #operationTimeout()}. */
    public static final String OPERATION_TIMEOUT_PROPERTY = "distributed-lock.zookeeper.operation-timeout";

    /** The property of {@link #rootPath()}. */
    public static final String ROOT_PATH_PROPERTY = "distributed-lock.zookeeper.root-path";

    /** The default {@link #sessionTimeout()}: 60 s, twice the default ttl of 30 s. */
    public static final Duration DEFAULT_SESSION_TIMEOUT = Duration.ofSeconds(60);

    /** The default {@link #connectionTimeout()}. */
    public static final Duration DEFAULT_CONNECTION_TIMEOUT = Duration.ofSeconds(15);

    /** The default {@link #operationTimeout()}. */
    public static final Duration DEFAULT_OPERATION_TIMEOUT = Duration.ofSeconds(5);

    /** The default {@link #rootPath()}. */
    public static final String DEFAULT_ROOT_PATH = "/distributed-lock";

    /**
     * @throws IllegalArgumentException naming the property, the value and the fix, for a
     * connect string that is not {@code host:port[,host:port...][/chroot]}, a duration
     * that is not positive, or a root path that is not an absolute ZooKeeper path
     */
    public ZooKeeperLockSettings {
        Objects.requireNonNull(connectString, CONNECT_STRING_PROPERTY);
        requirePositive(sessionTimeout, SESSION_TIMEOUT_PROPERTY);
        requirePositive(connectionTimeout, CONNECTION_TIMEOUT_PROPERTY);
        requirePositive(operationTimeout, OPERATION_TIMEOUT_PROPERTY);
        Objects.requireNonNull(rootPath, ROOT_PATH_PROPERTY);
        connectString = connectString.strip();
        String problem = connectStringProblem(connectString);
        if (problem != null) {
            throw new IllegalArgumentException(CONNECT_STRING_PROPERTY + " '" + connectString + "' " + problem
                    + ". Give the ensemble's members as host:port pairs separated by commas, for example "
                    + "zk1:2181,zk2:2181,zk3:2181 (optionally followed by a chroot such as /apps).");
        }
        if (!rootPath.startsWith("/") || rootPath.length() < 2 || rootPath.endsWith("/") || rootPath.contains("//")) {
            throw new IllegalArgumentException(ROOT_PATH_PROPERTY + " '" + rootPath + "' is not an absolute ZooKeeper "
                    + "path below the root. Use a path such as " + DEFAULT_ROOT_PATH + " (no trailing slash).");
        }
    }

    /**
     * Settings for the ensemble at {@code connectString}, with the defaults for
     * everything else.
     */
    public static ZooKeeperLockSettings of(String connectString) {
        return new ZooKeeperLockSettings(connectString, DEFAULT_SESSION_TIMEOUT, DEFAULT_CONNECTION_TIMEOUT,
                DEFAULT_OPERATION_TIMEOUT, DEFAULT_ROOT_PATH);
    }

    /** These settings with another {@link #sessionTimeout()}. */
    public ZooKeeperLockSettings withSessionTimeout(Duration sessionTimeout) {
        return new ZooKeeperLockSettings(connectString, sessionTimeout, connectionTimeout, operationTimeout, rootPath);
    }

    /** These settings with another {@link #connectionTimeout()}. */
    public ZooKeeperLockSettings withConnectionTimeout(Duration connectionTimeout) {
        return new ZooKeeperLockSettings(connectString, sessionTimeout, connectionTimeout, operationTimeout, rootPath);
    }

    /** These settings with another {@link #operationTimeout()}. */
    public ZooKeeperLockSettings withOperationTimeout(Duration operationTimeout) {
        return new ZooKeeperLockSettings(connectString, sessionTimeout, connectionTimeout, operationTimeout, rootPath);
    }

    /** These settings with another {@link #rootPath()}. */
    public ZooKeeperLockSettings withRootPath(String rootPath) {
        return new ZooKeeperLockSettings(connectString, sessionTimeout, connectionTimeout, operationTimeout, rootPath);
    }

    /**
     * Checks that locks with {@code ttl} fit in the session: a holder cut off from the
     * ensemble keeps its node for one session timeout after it was last heard, so a
     * longer lease would outlive the node.
     * @param ttl the lease, e.g. {@code distributed-lock.default-ttl}
     * @param ttlProperty where the ttl came from, for the message
     * @throws IllegalArgumentException naming both properties and the fix if the ttl is
     * longer than {@link #sessionTimeout()}
     */
    public void requireTtlWithinSession(Duration ttl, String ttlProperty) {
        if (ttl.compareTo(sessionTimeout) > 0) {
            throw new IllegalArgumentException(ttlProperty + " (" + ttl + ") is longer than " + SESSION_TIMEOUT_PROPERTY
                    + " (" + sessionTimeout + "). A ZooKeeper lock lives in an ephemeral "
                    + "node that the ensemble deletes one session timeout after it last heard from the holder, so a "
                    + "lease longer than the session could outlive its node. Raise " + SESSION_TIMEOUT_PROPERTY
                    + " to at least " + ttl + " (and the servers' maxSessionTimeout with it), or lower " + ttlProperty
                    + " to at most " + sessionTimeout + ".");
        }
    }

    private static void requirePositive(Duration duration, String property) {
        Objects.requireNonNull(duration, property);
        if (duration.isNegative() || duration.isZero()) {
            throw new IllegalArgumentException(
                    property + " must be positive, was " + duration + ". Give a duration such as 10s.");
        }
    }

    /** What is wrong with a connect string, or {@code null}. */
    private static @Nullable String connectStringProblem(String connectString) {
        if (connectString.isEmpty()) {
            return "is empty";
        }
        int chroot = connectString.indexOf('/');
        String hosts = chroot >= 0 ? connectString.substring(0, chroot) : connectString;
        if (chroot >= 0 && (connectString.length() == chroot + 1 || connectString.endsWith("/"))) {
            return "has an empty or trailing-slash chroot";
        }
        for (String member : hosts.split(",", -1)) {
            String hostAndPort = member.strip();
            int colon = hostAndPort.lastIndexOf(':');
            if (hostAndPort.isEmpty()) {
                return "has an empty member";
            }
            if (colon <= 0 || colon == hostAndPort.length() - 1) {
                return "has a member without a port ('" + hostAndPort + "')";
            }
            String port = hostAndPort.substring(colon + 1);
            int number;
            try {
                number = Integer.parseInt(port);
            }
            catch (NumberFormatException ex) {
                return "has a member whose port is not a number ('" + hostAndPort + "')";
            }
            if (number < 1 || number > 65535) {
                return "has a member whose port is out of range ('" + hostAndPort + "')";
            }
        }
        return null;
    }

}
