package io.github.distlock.testsupport.zookeeper;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

/**
 * A TCP proxy in front of each member of an ensemble, for one client: {@link #cut()} cuts
 * that client off as a network partition does, without closing anything (bytes either way
 * are dropped, so the client hears nothing and times out), and {@link #heal()} lets new
 * connections through again. Other clients, connected to the members directly, are not
 * affected.
 *
 * <pre>{@code
 * try (PartitionProxy partition = PartitionProxy.start(ensemble)) {
 *     client = connect(partition.connectString());   // through the proxies
 *     partition.cut();                              // the client is cut off; the ensemble serves others
 *     partition.heal();
 * }
 * }</pre>
 */
public final class PartitionProxy implements AutoCloseable {

    private final List<Forwarder> forwarders;

    private volatile boolean cut;

    private PartitionProxy(List<ZooKeeperTestEnsemble.Member> members) {
        this.forwarders = members.stream().map(member -> new Forwarder(member.clientPort())).toList();
    }

    /** Starts one proxy per member of {@code ensemble}. */
    public static PartitionProxy start(ZooKeeperTestEnsemble ensemble) {
        PartitionProxy proxy = new PartitionProxy(ensemble.members());
        proxy.forwarders.forEach(Forwarder::start);
        return proxy;
    }

    /** The proxies' addresses, as a client's connect string. */
    public String connectString() {
        return forwarders.stream().map(forwarder -> "127.0.0.1:" + forwarder.port()).collect(Collectors.joining(","));
    }

    /**
     * Cuts the client off: from now on nothing it sends arrives, and nothing comes back.
     */
    public void cut() {
        cut = true;
    }

    /**
     * Ends the partition for new connections; those opened or cut before stay silent, as
     * a client gives them up anyway.
     */
    public void heal() {
        cut = false;
        forwarders.forEach(Forwarder::closeConnections);
    }

    @Override
    public void close() {
        forwarders.forEach(Forwarder::close);
    }

    private final class Forwarder {

        private final int target;

        private final ServerSocket server;

        private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();

        Forwarder(int target) {
            this.target = target;
            try {
                this.server = new ServerSocket();
                this.server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            }
            catch (IOException ex) {
                throw new UncheckedIOException("No free port for a partition proxy", ex);
            }
        }

        int port() {
            return server.getLocalPort();
        }

        void start() {
            daemon("partition-proxy-accept-" + target, () -> {
                while (!server.isClosed()) {
                    try {
                        Socket client = server.accept();
                        Socket member = new Socket(InetAddress.getLoopbackAddress(), target);
                        sockets.add(client);
                        sockets.add(member);
                        daemon("partition-proxy-up-" + target, () -> pump(client, member));
                        daemon("partition-proxy-down-" + target, () -> pump(member, client));
                    }
                    catch (IOException ex) {
                        // Closed, or the member is down: the client sees a refused or
                        // dropped connection.
                    }
                }
            });
        }

        /** Copies bytes, dropping them while the partition lasts. */
        private void pump(Socket from, Socket to) {
            byte[] buffer = new byte[8192];
            boolean silenced = false;
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                for (int read = in.read(buffer); read >= 0; read = in.read(buffer)) {
                    // A connection that was cut once stays silent: a partition does not
                    // replay what it lost.
                    silenced |= cut;
                    if (!silenced) {
                        out.write(buffer, 0, read);
                        out.flush();
                    }
                }
            }
            catch (IOException ex) {
                // One side closed.
            }
            finally {
                if (!silenced) {
                    closeQuietly(from);
                    closeQuietly(to);
                }
            }
        }

        void closeConnections() {
            sockets.forEach(Forwarder::closeQuietly);
            sockets.clear();
        }

        void close() {
            closeQuietly(server);
            closeConnections();
        }

        private static void closeQuietly(AutoCloseable closeable) {
            try {
                closeable.close();
            }
            catch (Exception ex) {
                // Closing anyway.
            }
        }

        private static void daemon(String name, Runnable work) {
            Thread thread = new Thread(work, name);
            thread.setDaemon(true);
            thread.start();
        }

    }

}
