package io.rota.server.api;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.codec.LengthFieldPrepender;
import io.rota.proto.Frame;
import io.rota.proto.facts.HostPort;
import io.rota.raft.transport.TlsContexts;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The {@link Forwarder} over Netty: sends a follower's write frames to the leader's client port. One
 * pooled, multiplexed connection per leader address (reopened on demand); each forwarded call gets its
 * own call id on that connection, and the caller's call id is restored by the caller. Bounded: at most
 * {@code maxInFlight} forwarded calls per connection.
 */
final class NettyForwarder implements Forwarder {

    private final Bootstrap bootstrap;
    private final int maxFrameBytes;
    private final Duration timeout;
    private final int maxInFlight;
    private final Map<String, Connection> connections = new ConcurrentHashMap<>();
    /** TLS to the leader's client port (its certificate checked against the host dialled), or null. */
    private final TlsContexts tls;

    NettyForwarder(EventLoopGroup group, int maxFrameBytes, Duration timeout, int maxInFlight) {
        this(group, maxFrameBytes, timeout, maxInFlight, null);
    }

    NettyForwarder(EventLoopGroup group, int maxFrameBytes, Duration timeout, int maxInFlight, TlsContexts tls) {
        this.tls = tls;
        this.maxFrameBytes = maxFrameBytes;
        this.timeout = timeout;
        this.maxInFlight = maxInFlight;
        this.bootstrap = new Bootstrap().group(group).channel(NioSocketChannel.class)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(timeout.toMillis(), 3_000));
    }

    @Override
    public CompletableFuture<Frame> forward(String address, Frame frame, Duration callTimeout) {
        Connection c = connections.compute(address, (a, old) -> old != null && old.usable() ? old : connect(a));
        return c.call(frame.toBuilder().setForwarded(true).build(), callTimeout.compareTo(timeout) < 0 ? callTimeout : timeout);
    }

    private Connection connect(String address) {
        // A published client address; apply refuses one that is not host:port (issue 30), so this parses.
        InetSocketAddress target = HostPort.parse("client address", address).unresolved();
        Connection c = new Connection();
        c.connected = bootstrap.clone().handler(new ChannelInitializer<SocketChannel>() {
            @Override
            protected void initChannel(SocketChannel ch) {
                if (tls != null) {
                    ch.pipeline().addLast(tls.client().newHandler(ch.alloc(), target.getHostString(), target.getPort()));
                }
                ch.pipeline().addLast(new LengthFieldBasedFrameDecoder(maxFrameBytes, 0, 4, 0, 4),
                        new LengthFieldPrepender(4), new FrameCodec(), c);
            }
        }).connect(target);
        c.connected.addListener(done -> {
            if (!done.isSuccess()) {
                c.failAll(new Forwarder.Unreachable("cannot reach the leader at " + address + ": " + done.cause()));
            }
        });
        return c;
    }

    @Override
    public void close() {
        connections.values().forEach(c -> c.connected.channel().close());
        connections.clear();
    }

    /** One connection to a leader, with its calls in flight. */
    private final class Connection extends SimpleChannelInboundHandler<Frame> {
        private final AtomicLong nextCallId = new AtomicLong(1);
        private final Map<Long, CompletableFuture<Frame>> pending = new ConcurrentHashMap<>();
        private volatile ChannelFuture connected;
        private volatile boolean closed;

        boolean usable() {
            return !closed;
        }

        CompletableFuture<Frame> call(Frame frame, Duration timeout) {
            CompletableFuture<Frame> f = new CompletableFuture<>();
            if (pending.size() >= maxInFlight) {
                f.completeExceptionally(new IOException(maxInFlight + " forwarded calls are already in flight"));
                return f;
            }
            long id = nextCallId.getAndIncrement();
            pending.put(id, f);
            f.orTimeout(Math.max(1, timeout.toMillis()), TimeUnit.MILLISECONDS).whenComplete((r, e) -> pending.remove(id));
            connected.addListener(c -> {
                if (!c.isSuccess()) {
                    f.completeExceptionally(new Forwarder.Unreachable("cannot reach the leader: " + c.cause()));
                    return;
                }
                connected.channel().writeAndFlush(frame.toBuilder().setCallId(id).build()).addListener(w -> {
                    if (!w.isSuccess()) {
                        f.completeExceptionally(new IOException("forwarding failed: " + w.cause()));
                    }
                });
            });
            return f;
        }

        void failAll(IOException e) {
            closed = true;
            pending.values().forEach(f -> f.completeExceptionally(e));
            pending.clear();
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, Frame frame) {
            CompletableFuture<Frame> f = pending.remove(frame.getCallId());
            if (f != null) {
                f.complete(frame);
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            failAll(new IOException("the connection to the leader closed"));
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            failAll(new IOException("the connection to the leader failed: " + cause));
            ctx.close();
        }
    }
}
