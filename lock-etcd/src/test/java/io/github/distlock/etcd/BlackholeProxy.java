package io.github.distlock.etcd;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A TCP proxy in front of one etcd member, for a client that is to be cut off from the
 * cluster while the others are not. {@link #blackhole()} keeps every connection open and
 * silently drops what passes, as a partition does (no reset, no refusal: the client only
 * sees no answers); {@link #heal()} closes those connections, so the client reconnects
 * cleanly.
 */
final class BlackholeProxy implements AutoCloseable {

    private final ServerSocket listener;

    private final String targetHost;

    private final int targetPort;

    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();

    private volatile boolean blackholed;

    private volatile boolean closed;

    BlackholeProxy(String target) throws IOException {
        URI uri = URI.create(target);
        this.targetHost = uri.getHost();
        this.targetPort = uri.getPort();
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::accept, "blackhole-proxy-" + listener.getLocalPort());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** The URL a client connects to instead of the member's. */
    String url() {
        return "http://127.0.0.1:" + listener.getLocalPort();
    }

    /** From now on nothing passes, in either direction, and nothing is closed. */
    void blackhole() {
        blackholed = true;
    }

    /** Lets traffic pass again, closing the connections whose bytes were dropped. */
    void heal() {
        blackholed = false;
        closeConnections();
    }

    @Override
    public void close() {
        closed = true;
        try {
            listener.close();
        }
        catch (IOException ignored) {
            // Closing anyway.
        }
        closeConnections();
    }

    private void closeConnections() {
        for (Socket socket : sockets) {
            try {
                socket.close();
            }
            catch (IOException ignored) {
                // Already gone.
            }
        }
        sockets.clear();
    }

    private void accept() {
        while (!closed) {
            try {
                Socket client = listener.accept();
                Socket server = new Socket(targetHost, targetPort);
                sockets.add(client);
                sockets.add(server);
                pump(client, server);
                pump(server, client);
            }
            catch (IOException ex) {
                if (closed) {
                    return;
                }
            }
        }
    }

    private void pump(Socket from, Socket to) {
        Thread thread = new Thread(() -> {
            byte[] buffer = new byte[16 * 1024];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                for (int read = in.read(buffer); read >= 0; read = in.read(buffer)) {
                    if (!blackholed) {
                        out.write(buffer, 0, read);
                        out.flush();
                    }
                }
            }
            catch (IOException ended) {
                // One side closed: close the other too.
            }
            finally {
                try {
                    from.close();
                    to.close();
                }
                catch (IOException ignored) {
                    // Already gone.
                }
            }
        }, "blackhole-proxy-pump");
        thread.setDaemon(true);
        thread.start();
    }

}
