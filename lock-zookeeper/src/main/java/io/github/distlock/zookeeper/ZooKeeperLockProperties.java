package io.github.distlock.zookeeper;

import java.time.Duration;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The ZooKeeper backend's settings under {@code distributed-lock.zookeeper}: setting
 * {@code connect-string} is what makes the auto-configuration build the backend.
 *
 * <pre>
 * distributed-lock.zookeeper.connect-string=zk1:2181,zk2:2181,zk3:2181
 * distributed-lock.zookeeper.session-timeout=60s   # at least distributed-lock.default-ttl
 * </pre>
 */
@ConfigurationProperties(prefix = "distributed-lock.zookeeper")
public class ZooKeeperLockProperties {

    // Literal defaults (the same as ZooKeeperLockSettings'), so that the generated IDE
    // metadata shows them.

    /**
     * The ensemble: host:port pairs separated by commas, with an optional chroot after
     * the last port (zk1:2181,zk2:2181/apps). Setting it enables the ZooKeeper backend.
     */
    private @Nullable String connectString;

    /**
     * The session timeout the client asks for: the ensemble deletes a silent holder's
     * lock nodes this long after it last heard from it, so no lock's ttl may be longer.
     * The servers cap it at their maxSessionTimeout.
     */
    private Duration sessionTimeout = Duration.ofSeconds(60);

    /** How long to wait for the first connection at startup. */
    private Duration connectionTimeout = Duration.ofSeconds(15);

    /** The bound of every lock call: an acquire attempt, a release, a renewal round. */
    private Duration operationTimeout = Duration.ofSeconds(5);

    /** The node every lock lives under: the lock order:42 is {root-path}/order:42. */
    private String rootPath = "/distributed-lock";

    public @Nullable String getConnectString() {
        return connectString;
    }

    public void setConnectString(@Nullable String connectString) {
        this.connectString = connectString;
    }

    public Duration getSessionTimeout() {
        return sessionTimeout;
    }

    public void setSessionTimeout(Duration sessionTimeout) {
        this.sessionTimeout = sessionTimeout;
    }

    public Duration getConnectionTimeout() {
        return connectionTimeout;
    }

    public void setConnectionTimeout(Duration connectionTimeout) {
        this.connectionTimeout = connectionTimeout;
    }

    public Duration getOperationTimeout() {
        return operationTimeout;
    }

    public void setOperationTimeout(Duration operationTimeout) {
        this.operationTimeout = operationTimeout;
    }

    public String getRootPath() {
        return rootPath;
    }

    public void setRootPath(String rootPath) {
        this.rootPath = rootPath;
    }

    /**
     * These properties as settings, checked.
     * @throws IllegalArgumentException naming the property, the value and the fix
     */
    public ZooKeeperLockSettings toSettings() {
        return new ZooKeeperLockSettings(connectString != null ? connectString : "", sessionTimeout, connectionTimeout,
                operationTimeout, rootPath);
    }

}
