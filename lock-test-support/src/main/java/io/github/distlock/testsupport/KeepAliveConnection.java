package io.github.distlock.testsupport;

import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.socket.SocketChannel;
import io.netty.util.ReferenceCountUtil;

/**
 * One client connection through a {@link RedisKeepAliveProxy}: it outlives any number of
 * connections to Redis.
 *
 * <p>
 * The session state a client sets up when it connects ({@code AUTH}, {@code HELLO},
 * {@code SELECT}, {@code CLIENT SETNAME}, {@code CLIENT SETINFO}, {@code READONLY}) is
 * remembered once Redis accepted it and sent again, in that order, first thing on every
 * new connection to Redis; those replies stay in the proxy. If one is refused there, the
 * session cannot be carried over and the client connection is closed. Not tracked:
 * {@code RESET} and {@code CLIENT REPLY}, which the lock library never sends.
 *
 * <p>
 * All state lives on the client channel's event loop, which its connections to Redis
 * share.
 */
final class KeepAliveConnection {

    private static final Set<String> SUBSCRIBE_COMMANDS = Set.of("SUBSCRIBE", "PSUBSCRIBE", "SSUBSCRIBE");

    private static final long RETRY_MILLIS = 20;

    enum State {

        CONNECTING, READY, UNREACHABLE, CLOSED

    }

    private final RedisKeepAliveProxy proxy;

    private final SocketChannel client;

    // Event-loop state.
    private Channel upstream;

    /**
     * Which connect is the live one: a switch during a connect makes the older one stale.
     */
    private int connectAttempt;

    /**
     * Commands forwarded on the current upstream and still waiting for their reply,
     * oldest first.
     */
    private final Deque<Awaited> awaitedReplies = new ArrayDeque<>();

    /** Commands that arrived while connecting, forwarded in order once connected. */
    private final Deque<ByteBuf> waitingForUpstream = new ArrayDeque<>();

    /**
     * Accepted session commands by replay position (see
     * {@link #sessionKey(RedisCommand)}), as sent.
     */
    private final Map<String, byte[]> session = new TreeMap<>();

    private boolean subscribed;

    // Written on the event loop, read by the proxy's waits.
    private volatile State state = State.CONNECTING;

    private volatile int upstreamGeneration;

    KeepAliveConnection(RedisKeepAliveProxy proxy, SocketChannel client) {
        this.proxy = proxy;
        this.client = client;
    }

    void start() {
        client.pipeline()
            .addLast(new RespFrameDecoder(true),
                    new ProxyListener.FrameHandler((channel, frame) -> onCommand(frame), channel -> {
                        closeNow();
                        proxy.forget(this);
                    }, channel -> closeNow()));
        connectUpstream();
    }

    State state() {
        return state;
    }

    /**
     * How many connections to Redis this client connection has had; goes up by one per
     * reconnect.
     */
    int upstreamGeneration() {
        return upstreamGeneration;
    }

    boolean isOpen() {
        return client.isOpen() && state != State.CLOSED;
    }

    /**
     * Drops the connection to Redis (in-flight commands get an error reply) and connects
     * to the proxy's target.
     */
    void reconnect() {
        onEventLoop(() -> {
            if (state == State.CLOSED) {
                return;
            }
            Channel old = upstream;
            if (old != null) {
                upstreamLost(old);
                old.close();
            }
            else {
                connectUpstream();
            }
        });
    }

    void close() {
        onEventLoop(this::closeNow);
        client.closeFuture().syncUninterruptibly();
    }

    // ------------------------------------------------------------------------------------------------
    // relay

    private void connectUpstream() {
        state = State.CONNECTING;
        int attempt = ++connectAttempt;
        RedisTestServer target = proxy.upstream();
        ChannelFuture connect = ProxyListener.connectUpstream(client.eventLoop(), target.host(), target.port(),
                new ProxyListener.FrameHandler(this::onReply, this::upstreamLost, Channel::close));
        connect.addListener((ChannelFuture future) -> {
            if (state == State.CLOSED || attempt != connectAttempt) {
                future.channel().close();
            }
            else if (!future.isSuccess()) {
                becomeUnreachable(target, attempt);
            }
            else {
                upstreamReady(future.channel());
            }
        });
    }

    private void upstreamReady(Channel channel) {
        upstream = channel;
        proxy.countUpstreamConnect();
        for (byte[] command : session.values()) {
            awaitedReplies.add(Awaited.REPLAYED);
            upstream.write(Unpooled.wrappedBuffer(command));
        }
        state = State.READY;
        upstreamGeneration++;
        while (!waitingForUpstream.isEmpty()) {
            forward(waitingForUpstream.poll());
        }
        upstream.flush();
    }

    private void becomeUnreachable(RedisTestServer target, int attempt) {
        state = State.UNREACHABLE;
        failWaitingCommands("RedisKeepAliveProxy cannot reach its upstream " + target.host() + ":" + target.port());
        client.eventLoop().schedule(() -> {
            if (state == State.UNREACHABLE && attempt == connectAttempt) {
                connectUpstream();
            }
        }, RETRY_MILLIS, TimeUnit.MILLISECONDS);
    }

    private void onCommand(ByteBuf frame) {
        switch (state) {
            case READY -> {
                forward(frame);
                upstream.flush();
            }
            case CONNECTING -> waitingForUpstream.add(frame);
            case UNREACHABLE -> {
                waitingForUpstream.add(frame);
                RedisTestServer target = proxy.upstream();
                failWaitingCommands(
                        "RedisKeepAliveProxy cannot reach its upstream " + target.host() + ":" + target.port());
            }
            default -> frame.release();
        }
    }

    private void forward(ByteBuf frame) {
        RedisCommand command = RespFrameScanner.parseCommand(frame);
        if (command == null) {
            upstream.write(frame); // Redis skips empty requests without a reply
            return;
        }
        if (SUBSCRIBE_COMMANDS.contains(command.name())) {
            // From here on replies and messages cannot be told apart in RESP2: relay
            // everything as it comes.
            subscribed = true;
        }
        if (!subscribed) {
            String sessionKey = sessionKey(command);
            awaitedReplies.add(new Awaited(false, sessionKey, sessionKey == null ? null : ByteBufUtil.getBytes(frame)));
        }
        upstream.write(frame);
    }

    private void onReply(Channel from, ByteBuf frame) {
        if (from != upstream || state == State.CLOSED) {
            frame.release();
            return;
        }
        byte type = RespFrameScanner.valueType(frame);
        Awaited awaited = subscribed || type == '>' ? null : awaitedReplies.poll();
        if (awaited == null) {
            client.writeAndFlush(frame);
            return;
        }
        boolean error = type == '-' || type == '!';
        if (awaited.replayed) {
            frame.release();
            if (error) {
                closeNow(); // e.g. SELECT 5 on a server with fewer databases: the
                            // client's session is gone
            }
            return;
        }
        if (awaited.sessionKey != null && !error) {
            session.put(awaited.sessionKey, awaited.sessionCommand);
        }
        client.writeAndFlush(frame);
    }

    private void upstreamLost(Channel channel) {
        if (channel != upstream || state == State.CLOSED) {
            return;
        }
        upstream = null;
        if (subscribed) {
            closeNow(); // subscriptions do not move to another server: let the client
                        // reconnect and subscribe again
            return;
        }
        // Redis may or may not have run these: an error is the honest answer, as Envoy's
        // and twemproxy's are.
        Awaited awaited;
        while ((awaited = awaitedReplies.poll()) != null) {
            if (!awaited.replayed) {
                replyError("RedisKeepAliveProxy lost its upstream connection before the reply; the command may "
                        + "have run");
            }
        }
        client.flush();
        connectUpstream();
    }

    private void failWaitingCommands(String message) {
        while (!waitingForUpstream.isEmpty()) {
            ByteBuf frame = waitingForUpstream.poll();
            boolean empty = RespFrameScanner.parseCommand(frame) == null;
            frame.release();
            if (!empty) {
                replyError(message);
            }
        }
        client.flush();
    }

    private void replyError(String message) {
        client.write(Unpooled.copiedBuffer("-ERR " + message + "\r\n", StandardCharsets.UTF_8));
    }

    private void closeNow() {
        state = State.CLOSED;
        waitingForUpstream.forEach(ReferenceCountUtil::release);
        waitingForUpstream.clear();
        awaitedReplies.clear();
        client.close();
        if (upstream != null) {
            upstream.close();
            upstream = null;
        }
    }

    private void onEventLoop(Runnable task) {
        if (!client.eventLoop().isShuttingDown()) {
            client.eventLoop().submit(task).syncUninterruptibly();
        }
    }

    /**
     * Where a command that sets up the session goes in the replay, or null for any other
     * command. The keys sort in replay order: authenticate first, then the protocol
     * (whose {@code HELLO} may authenticate too), then the rest.
     */
    static String sessionKey(RedisCommand command) {
        String subcommand = command.argument(1) == null ? "" : command.argument(1).toUpperCase(Locale.ROOT);
        return switch (command.name()) {
            case "AUTH" -> "1 AUTH";
            case "HELLO" -> "2 HELLO";
            case "SELECT" -> "3 SELECT";
            case "READONLY" -> "4 READONLY";
            case "CLIENT" -> switch (subcommand) {
                case "SETNAME" -> "5 CLIENT SETNAME";
                case "SETINFO" -> "6 CLIENT SETINFO " + String.valueOf(command.argument(2)).toUpperCase(Locale.ROOT);
                default -> null;
            };
            default -> null;
        };
    }

    /**
     * A forwarded command's place in the reply order: the proxy's own replay, or the
     * client's (maybe to remember).
     */
    private record Awaited(boolean replayed, String sessionKey, byte[] sessionCommand) {

        static final Awaited REPLAYED = new Awaited(true, null, null);

    }

}
