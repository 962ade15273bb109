package io.github.distlock.sample.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;

/**
 * The network between a Redis master and its replica, as a TCP relay the demo controls:
 * the replica is configured with {@code replicaof 127.0.0.1 <this port>} and the relay
 * forwards to the master. {@link #cut()} stops delivering the master's replication stream
 * to the replica, the way a partition or a master that dies before replicating would, so
 * that the replica deterministically misses every write made after the cut. The replica's
 * acknowledgements still reach the master, which therefore keeps counting it as
 * connected: exactly the case {@code WAIT} exists for.
 */
public final class ReplicationLink implements AutoCloseable {

    private final ServerSocket server;

    private final int masterPort;

    private final List<Socket> sockets = new ArrayList<>();

    private volatile boolean cut;

    private volatile boolean closed;

    private ReplicationLink(ServerSocket server, int masterPort) {
        this.server = server;
        this.masterPort = masterPort;
        Thread acceptor = new Thread(this::accept, "replication-link-" + server.getLocalPort());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /**
     * Opens a relay to the master at {@link EmbeddedRedis#HOST}{@code :masterPort} on a
     * free port.
     */
    public static ReplicationLink to(int masterPort) {
        try {
            return new ReplicationLink(new ServerSocket(0, 50, InetAddress.getByName(EmbeddedRedis.HOST)), masterPort);
        }
        catch (IOException e) {
            throw new UncheckedIOException("Could not open the replication link's port", e);
        }
    }

    /** The port the replica connects to. */
    public int port() {
        return server.getLocalPort();
    }

    /**
     * From now on, nothing the master sends reaches the replica over the current
     * connections: bytes it sends are dropped. Happens-before every write the caller
     * makes afterwards, so those never arrive.
     */
    public void cut() {
        cut = true;
    }

    /**
     * Heals the link: closes the cut connections (the replica then reconnects, or is told
     * to with {@code REPLICAOF}, and resynchronises) and forwards everything on new ones.
     * Does nothing to a link that is not cut.
     */
    public void heal() {
        synchronized (sockets) {
            if (!cut) {
                return;
            }
            closeAll();
            cut = false;
        }
    }

    @Override
    public void close() {
        closed = true;
        try {
            server.close();
        }
        catch (IOException e) {
            // Closing anyway.
        }
        synchronized (sockets) {
            closeAll();
        }
    }

    private void accept() {
        while (!closed) {
            try {
                Socket replica = server.accept();
                Socket master = new Socket(EmbeddedRedis.HOST, masterPort);
                synchronized (sockets) {
                    sockets.add(replica);
                    sockets.add(master);
                }
                pump(master, replica, true);
                pump(replica, master, false);
            }
            catch (IOException e) {
                if (!closed) {
                    // A refused connection to the master: the replica retries by itself.
                    continue;
                }
            }
        }
    }

    private void pump(Socket from, Socket to, boolean fromMaster) {
        Thread thread = new Thread(() -> {
            byte[] buffer = new byte[16 * 1024];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                for (int read = in.read(buffer); read >= 0; read = in.read(buffer)) {
                    // Checked after the read: bytes the master produced after cut() was
                    // called are always dropped.
                    if (fromMaster && cut) {
                        continue;
                    }
                    out.write(buffer, 0, read);
                    out.flush();
                }
            }
            catch (IOException e) {
                // One side closed; close the other so the replica notices.
            }
            finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "replication-link-" + (fromMaster ? "master-to-replica" : "replica-to-master"));
        thread.setDaemon(true);
        thread.start();
    }

    private void closeAll() {
        for (Socket socket : sockets) {
            closeQuietly(socket);
        }
        sockets.clear();
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        }
        catch (IOException e) {
            // Already closed.
        }
    }

}
