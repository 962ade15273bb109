package io.github.distlock.testsupport;

import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;

/**
 * The listening side that {@link RedisFaultProxy} and {@link RedisKeepAliveProxy} share:
 * one Netty event loop thread, a server socket on a free port of
 * {@value RedisTestServer#HOST} that can stop and resume listening on that same port, and
 * RESP-framed connections to Redis.
 */
final class ProxyListener {

    private final EventLoopGroup eventLoop;

    private final ServerBootstrap serverBootstrap;

    private final int port;

    // Guarded by this.
    private Channel listener;

    private boolean closed;

    /**
     * Listens at once; {@code onAccept} runs on the event loop for every accepted client
     * channel.
     * @param threadName names the event loop thread in thread dumps
     */
    ProxyListener(String threadName, Consumer<SocketChannel> onAccept) {
        // One thread: the proxies move little data, and a single loop keeps each
        // connection's two sides in order.
        this.eventLoop = new NioEventLoopGroup(1, new DefaultThreadFactory(threadName, true));
        this.serverBootstrap = new ServerBootstrap().group(eventLoop)
            .channel(NioServerSocketChannel.class)
            .option(ChannelOption.SO_REUSEADDR, true)
            .childOption(ChannelOption.TCP_NODELAY, true)
            .childHandler(new ChannelInitializer<SocketChannel>() {
                @Override
                protected void initChannel(SocketChannel channel) {
                    onAccept.accept(channel);
                }
            });
        try {
            this.listener = serverBootstrap.bind(RedisTestServer.HOST, 0).syncUninterruptibly().channel();
        }
        catch (RuntimeException e) {
            eventLoop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            throw e;
        }
        this.port = ((InetSocketAddress) listener.localAddress()).getPort();
    }

    int port() {
        return port;
    }

    /**
     * Stops accepting: new connections are refused until {@link #listenAgain()}. Open
     * ones are not touched.
     */
    synchronized void stopListening() {
        if (listener != null) {
            listener.close().syncUninterruptibly();
            listener = null;
        }
    }

    /**
     * Listens again on the same port after {@link #stopListening()}; does nothing if
     * listening or closed.
     * @throws IllegalStateException when another process took the port meanwhile
     */
    synchronized void listenAgain() {
        if (listener != null || closed) {
            return;
        }
        ChannelFuture bind = serverBootstrap.bind(RedisTestServer.HOST, port).awaitUninterruptibly();
        if (!bind.isSuccess()) {
            throw new IllegalStateException("could not listen on " + RedisTestServer.HOST + ":" + port
                    + " again; another process took the port while connections were refused", bind.cause());
        }
        listener = bind.channel();
    }

    /**
     * Stops listening for good; returns false if already closed. The caller closes its
     * connections, then calls {@link #shutDownEventLoop()}.
     */
    synchronized boolean close() {
        if (closed) {
            return false;
        }
        closed = true;
        stopListening();
        return true;
    }

    void shutDownEventLoop() {
        eventLoop.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
    }

    /**
     * Opens a connection to Redis on {@code loop} (the client channel's own, so both
     * sides share one thread), delivering one whole RESP reply or push per message to
     * {@code fromRedis}.
     */
    static ChannelFuture connectUpstream(EventLoop loop, String host, int port, FrameHandler fromRedis) {
        return new Bootstrap().group(loop)
            .channel(NioSocketChannel.class)
            .option(ChannelOption.TCP_NODELAY, true)
            .handler(new ChannelInitializer<SocketChannel>() {
                @Override
                protected void initChannel(SocketChannel channel) {
                    channel.pipeline().addLast(new RespFrameDecoder(false), fromRedis);
                }
            })
            .connect(host, port);
    }

    /**
     * Hands each whole RESP frame (after a {@link RespFrameDecoder}), and the end of the
     * channel, to the connection that owns the channel; a broken stream counts as
     * {@code onError}.
     */
    static final class FrameHandler extends ChannelInboundHandlerAdapter {

        private final BiConsumer<Channel, ByteBuf> onFrame;

        private final Consumer<Channel> onInactive;

        private final Consumer<Channel> onError;

        FrameHandler(BiConsumer<Channel, ByteBuf> onFrame, Consumer<Channel> onInactive, Consumer<Channel> onError) {
            this.onFrame = onFrame;
            this.onInactive = onInactive;
            this.onError = onError;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object message) {
            onFrame.accept(ctx.channel(), (ByteBuf) message);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            onInactive.accept(ctx.channel());
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            onError.accept(ctx.channel());
        }

    }

}
