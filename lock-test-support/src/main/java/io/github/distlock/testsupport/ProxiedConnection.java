package io.github.distlock.testsupport;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelOption;
import io.netty.channel.socket.SocketChannel;
import io.netty.util.concurrent.ScheduledFuture;

/**
 * One client connection through a {@link RedisFaultProxy}, and its own connection to
 * Redis.
 *
 * <pre>{@code
 * try (RespConnection client = RespConnection.open(proxy.host(), proxy.port(), Duration.ofSeconds(2))) {
 *     client.command("PING");
 *     ProxiedConnection connection = proxy.connections().get(0);
 *     proxy.onNext(RedisCommandMatcher.named("GET")).onConnection(connection).dropReplyAndHang();
 * }
 * }</pre>
 *
 * <p>
 * It pairs each reply with its command in order, since Redis answers in order. RESP3 push
 * messages ({@code >}) are forwarded without taking a command's place. A RESP2 connection
 * whose {@code SUBSCRIBE}, {@code PSUBSCRIBE} or {@code SSUBSCRIBE} got its reply turns
 * into a plain pipe for the rest of its life: in that mode replies cannot be told apart
 * from messages, so reply faults no longer apply to it. Not tracked, as the lock library
 * never sends them: {@code CLIENT REPLY OFF|SKIP}, and {@code RESET} or a RESP2
 * {@code UNSUBSCRIBE} of several channels outside pub/sub mode; they would put later
 * pairings out of step.
 *
 * <p>
 * All relay state lives on the connection's Netty event loop; the public methods hand
 * their work over to it.
 */
public final class ProxiedConnection {

    private static final Set<String> PUB_SUB_COMMANDS = Set.of("SUBSCRIBE", "PSUBSCRIBE", "SSUBSCRIBE", "UNSUBSCRIBE",
            "PUNSUBSCRIBE", "SUNSUBSCRIBE");

    private static final Set<String> SUBSCRIBE_COMMANDS = Set.of("SUBSCRIBE", "PSUBSCRIBE", "SSUBSCRIBE");

    private final RedisFaultProxy proxy;

    private final int id;

    private final SocketChannel client;

    private final InetSocketAddress clientAddress;

    // Event-loop state.
    private Channel upstream;

    /** Commands forwarded and still waiting for their reply, oldest first. */
    private final Deque<AwaitedReply> awaitedReplies = new ArrayDeque<>();

    /**
     * Replies held back by a delay, in order; each leaves no earlier than the one before
     * it.
     */
    private final Deque<HeldReply> heldReplies = new ArrayDeque<>();

    private ScheduledFuture<?> heldRepliesRelease;

    /**
     * Commands held back by a delay before Redis sees them, in order; each leaves no
     * earlier than the one before.
     */
    private final Deque<HeldCommand> heldCommands = new ArrayDeque<>();

    private ScheduledFuture<?> heldCommandsRelease;

    private long lastReleaseNanos = System.nanoTime();

    private boolean resp3;

    private boolean pubSubPipe;

    private boolean closing;

    private boolean closeOnceHeldRepliesLeft;

    // Written on the event loop, read by tests.
    private volatile boolean hung;

    ProxiedConnection(RedisFaultProxy proxy, int id, SocketChannel client) {
        this.proxy = proxy;
        this.id = id;
        this.client = client;
        this.clientAddress = client.remoteAddress();
    }

    /**
     * Wires the freshly accepted client channel: a connection born in a blackhole never
     * reaches Redis, any other starts reading once its own connection to Redis is up, so
     * no command arrives with nowhere to go.
     */
    void start(boolean bornHung) {
        client.pipeline()
            .addLast(new RespFrameDecoder(true),
                    new ProxyListener.FrameHandler((channel, frame) -> onCommand(frame), channel -> {
                        close(false);
                        proxy.forget(this);
                    }, channel -> close(false))); // a broken client stream (or RST) ends
                                                  // the connection, as on Redis
        if (bornHung) {
            hung = true;
        }
        else {
            connectUpstream();
        }
    }

    // ------------------------------------------------------------------------------------------------
    // public view

    /**
     * The proxy's number for this connection, 1 for the first one it accepted.
     * @return the id
     */
    public int id() {
        return id;
    }

    /**
     * The client's end of the connection, e.g. to tell two clients apart by their local
     * port.
     * @return the client's address and port
     */
    public InetSocketAddress clientAddress() {
        return clientAddress;
    }

    /**
     * Whether the client connection is still open (a hung connection is open).
     * @return false once closed by either side
     */
    public boolean isOpen() {
        return client.isOpen();
    }

    /**
     * Whether the connection hangs: it reads but answers nothing, after
     * {@link FaultRule.Builder#dropReplyAndHang()} or during
     * {@link RedisFaultProxy#blackhole()}.
     * @return true while hung
     */
    public boolean isHung() {
        return hung;
    }

    /**
     * Closes the connection to the client and the one to Redis, and returns once both are
     * closed.
     */
    public void close() {
        onEventLoop(() -> close(false));
    }

    /**
     * Identifies the connection in failure messages.
     * @return e.g. {@code ProxiedConnection[#2 from /127.0.0.1:51234, hung]}
     */
    @Override
    public String toString() {
        return "ProxiedConnection[#" + id + " from " + clientAddress + (hung ? ", hung" : "")
                + (isOpen() ? "" : ", closed") + "]";
    }

    // ------------------------------------------------------------------------------------------------
    // proxy side

    /**
     * Closes the client connection with a TCP RST where the platform allows it, and
     * returns once closed.
     */
    void reset() {
        onEventLoop(() -> close(true));
    }

    /** Stops answering, as if the network dropped everything from now on. */
    void hang() {
        onEventLoop(this::hangNow);
    }

    // ------------------------------------------------------------------------------------------------
    // relay

    private void connectUpstream() {
        client.config().setAutoRead(false);
        ChannelFuture connect = ProxyListener.connectUpstream(client.eventLoop(), proxy.redisHost(), proxy.redisPort(),
                new ProxyListener.FrameHandler(this::onReply, this::onRedisClosed, Channel::close));
        connect.addListener((ChannelFuture future) -> {
            if (!future.isSuccess()) {
                // Redis is down: the client sees its connection accepted, then closed.
                close(false);
            }
            else if (closing || hung) {
                future.channel().close();
                client.config().setAutoRead(true);
            }
            else {
                upstream = future.channel();
                client.config().setAutoRead(true);
            }
        });
    }

    private void onCommand(ByteBuf frame) {
        RedisCommand command = RespFrameScanner.parseCommand(frame);
        if (command != null) {
            proxy.count(command);
        }
        if (closing || hung || upstream == null) {
            frame.release();
            return;
        }
        if (command == null) {
            forward(frame, 0, false); // Redis skips empty requests without a reply.
            return;
        }
        String name = command.name();
        boolean pubSubCommand = PUB_SUB_COMMANDS.contains(name);
        boolean getsOwnReply = !pubSubPipe && !pubSubCommand;
        FaultRule rule = proxy.claimRule(command, this, getsOwnReply);
        if (getsOwnReply) {
            Boolean resp3BeforeHello = null;
            if (name.equals("HELLO") && command.argument(1) != null) {
                // Switch at once, so a SUBSCRIBE pipelined behind HELLO 3 is already seen
                // as RESP3.
                resp3BeforeHello = resp3;
                resp3 = command.argument(1).equals("3");
            }
            awaitedReplies.add(new AwaitedReply(rule, false, resp3BeforeHello));
        }
        else if (pubSubCommand && !pubSubPipe && !resp3) {
            // In RESP2 the first subscribe confirmation is an ordinary reply; in RESP3
            // every one is a push.
            awaitedReplies.add(new AwaitedReply(null, SUBSCRIBE_COMMANDS.contains(name), null));
        }
        FaultRule.Action action = rule == null ? null : rule.action();
        forward(frame, action == FaultRule.Action.DELAY_COMMAND ? rule.delay().toNanos() : 0,
                action == FaultRule.Action.CLOSE_AFTER_FORWARDING);
    }

    /**
     * Writes a command to Redis after its delay, never before a command that arrived
     * earlier.
     */
    private void forward(ByteBuf frame, long delayNanos, boolean closeAfterwards) {
        if (heldCommands.isEmpty() && delayNanos <= 0) {
            write(frame, closeAfterwards);
            return;
        }
        long releaseAt = System.nanoTime() + delayNanos;
        if (!heldCommands.isEmpty() && releaseAt - heldCommands.peekLast().releaseAt < 0) {
            releaseAt = heldCommands.peekLast().releaseAt;
        }
        heldCommands.add(new HeldCommand(frame, releaseAt, closeAfterwards));
        if (heldCommands.size() == 1) {
            scheduleForwarding(releaseAt - System.nanoTime());
        }
    }

    private void write(ByteBuf frame, boolean closeAfterwards) {
        if (closeAfterwards) {
            // Nothing is forwarded after it: commands that arrived behind it are dropped.
            closing = true;
            upstream.writeAndFlush(frame).addListener(written -> close(false));
        }
        else {
            upstream.writeAndFlush(frame);
        }
    }

    private void forwardDueCommands() {
        heldCommandsRelease = null;
        long now = System.nanoTime();
        while (!closing && !hung && !heldCommands.isEmpty() && heldCommands.peek().releaseAt - now <= 0) {
            HeldCommand held = heldCommands.poll();
            write(held.frame, held.closeAfterwards);
        }
        if (!closing && !hung && !heldCommands.isEmpty()) {
            scheduleForwarding(heldCommands.peek().releaseAt - now);
        }
    }

    private void scheduleForwarding(long delayNanos) {
        heldCommandsRelease = client.eventLoop().schedule(this::forwardDueCommands, delayNanos, TimeUnit.NANOSECONDS);
    }

    private void onReply(Channel from, ByteBuf frame) {
        if (from != upstream || closing || hung) {
            frame.release();
            return;
        }
        byte type = RespFrameScanner.valueType(frame);
        AwaitedReply awaited = pubSubPipe || type == '>' ? null : awaitedReplies.poll();
        if (awaited == null) {
            send(frame, Duration.ZERO);
            return;
        }
        boolean error = type == '-' || type == '!';
        if (error && awaited.resp3BeforeHello != null) {
            resp3 = awaited.resp3BeforeHello; // a failed HELLO leaves the protocol as it
                                              // was
        }
        if (awaited.entersPubSub && !error) {
            pubSubPipe = true;
            awaitedReplies.clear();
        }
        FaultRule.Action action = awaited.rule == null ? null : awaited.rule.action();
        if (action == FaultRule.Action.DROP_REPLY_AND_CLOSE) {
            frame.release();
            close(false);
        }
        else if (action == FaultRule.Action.DROP_REPLY_AND_HANG) {
            frame.release();
            hangNow();
        }
        else if (action == FaultRule.Action.DELAY_REPLY) {
            send(frame, awaited.rule.delay());
        }
        else {
            send(frame, Duration.ZERO);
        }
    }

    /**
     * Sends a reply after its delay (or the global one, whichever is longer), never
     * before an earlier reply.
     */
    private void send(ByteBuf frame, Duration delay) {
        long now = System.nanoTime();
        long releaseAt = now + Math.max(delay.toNanos(), proxy.replyDelay().toNanos());
        if (releaseAt - lastReleaseNanos < 0) {
            releaseAt = lastReleaseNanos;
        }
        lastReleaseNanos = releaseAt;
        if (heldReplies.isEmpty() && releaseAt - now <= 0) {
            client.writeAndFlush(frame);
            return;
        }
        heldReplies.add(new HeldReply(frame, releaseAt));
        if (heldReplies.size() == 1) {
            scheduleRelease(releaseAt - now);
        }
    }

    private void releaseDueReplies() {
        heldRepliesRelease = null;
        long now = System.nanoTime();
        while (!heldReplies.isEmpty() && heldReplies.peek().releaseAt - now <= 0) {
            client.write(heldReplies.poll().frame);
        }
        client.flush();
        if (!heldReplies.isEmpty()) {
            scheduleRelease(heldReplies.peek().releaseAt - now);
        }
        else if (closeOnceHeldRepliesLeft) {
            close(false);
        }
    }

    private void scheduleRelease(long delayNanos) {
        heldRepliesRelease = client.eventLoop().schedule(this::releaseDueReplies, delayNanos, TimeUnit.NANOSECONDS);
    }

    private void onRedisClosed(Channel channel) {
        if (channel != upstream || closing || hung) {
            return;
        }
        // E.g. after QUIT, or Redis killed: the client still gets the replies Redis sent
        // before closing.
        if (heldReplies.isEmpty()) {
            close(false);
        }
        else {
            closeOnceHeldRepliesLeft = true;
        }
    }

    private void hangNow() {
        if (closing) {
            return;
        }
        hung = true;
        discardPendingReplies();
        client.config().setAutoRead(true); // keep reading (and counting), as a live but
                                           // silent server would
        if (upstream != null) {
            upstream.close();
        }
    }

    private void close(boolean reset) {
        closing = true;
        discardPendingReplies();
        if (reset && client.isOpen()) {
            // SO_LINGER 0 makes close() send a RST instead of a FIN, like a crashed peer
            // or a middlebox reset.
            client.config().setOption(ChannelOption.SO_LINGER, 0);
        }
        client.close();
        if (upstream != null) {
            upstream.close();
        }
    }

    /**
     * Drops what is still on its way, in both directions: held commands and held replies.
     */
    private void discardPendingReplies() {
        if (heldCommandsRelease != null) {
            heldCommandsRelease.cancel(false);
            heldCommandsRelease = null;
        }
        heldCommands.forEach(held -> held.frame.release());
        heldCommands.clear();
        awaitedReplies.clear();
        if (heldRepliesRelease != null) {
            heldRepliesRelease.cancel(false);
            heldRepliesRelease = null;
        }
        heldReplies.forEach(held -> held.frame.release());
        heldReplies.clear();
    }

    /**
     * Runs the task on this connection's event loop and waits for it and for the close it
     * may start.
     */
    private void onEventLoop(Runnable task) {
        if (client.eventLoop().isShuttingDown()) {
            return;
        }
        client.eventLoop().submit(task).syncUninterruptibly();
        if (closing) {
            client.closeFuture().syncUninterruptibly();
        }
    }

    /**
     * A forwarded command's place in the reply order, with the rule it claimed, if any.
     */
    private record AwaitedReply(FaultRule rule, boolean entersPubSub, Boolean resp3BeforeHello) {
    }

    private record HeldReply(ByteBuf frame, long releaseAt) {
    }

    private record HeldCommand(ByteBuf frame, long releaseAt, boolean closeAfterwards) {
    }

}
