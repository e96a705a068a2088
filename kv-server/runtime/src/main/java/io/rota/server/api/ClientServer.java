package io.rota.server.api;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.rota.proto.CommandResult;
import io.rota.raft.node.Clock;
import io.rota.raft.node.RaftDriver;
import io.rota.raft.transport.TlsContexts;
import io.rota.server.cluster.ClusterView;
import io.rota.server.kv.CoordinationStateMachine;
import io.rota.server.kv.UserQuotas;
import io.rota.server.watch.WatchHub;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Bootstraps the client protocol port; the pipeline is {@link ClientInitializer}'s. {@link #close()} closes
 * the port and every client connection itself before it stops the event loops, so each client learns at once
 * that this member is gone (see {@link #close()} for why the loops' shutdown alone does not promise that).
 */
public final class ClientServer implements AutoCloseable {

    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(ClientServer.class);
    /** Anyone who reaches the port can cause these lines: bounded. */
    private static final io.rota.raft.transport.LogLimiter refusals = new io.rota.raft.transport.LogLimiter(log, 5);

    /** Calls one connection may have in flight (watches excluded). */
    static final int MAX_CALLS_IN_FLIGHT = 4_096;
    /** Forwarded calls in flight per leader connection. */
    static final int MAX_FORWARDED_IN_FLIGHT = 16_384;
    /** A connection pauses reading requests above this many unsent answer bytes (ClientBackPressure). */
    static final int WRITE_BUFFER_HIGH_BYTES = 1 << 20;
    /** ...and reads again below this many. */
    static final int WRITE_BUFFER_LOW_BYTES = 256 << 10;
    /** How long close() waits for the connections to close, then for the event loops to stop. */
    private static final long CLOSE_TIMEOUT_SECONDS = 2;

    /**
     * The client port's settings. They are derived, not configured: {@code ServerConfig.clientSettings}
     * computes every one from the flags (the simulator from its own timing), so there are no defaults here —
     * a second copy of the server's defaults would drift. Build with {@link #builder}; every field must be
     * set, and a missing or invalid one is refused naming the field.
     *
     * @param listen         client address (port 0: any free port)
     * @param maxFrameBytes  largest frame accepted (max request bytes + envelope)
     * @param requestTimeout deadline of each write or linearizable read
     * @param retryInterval  pause between attempts while no leader is known (one Raft tick)
     * @param readAttemptTimeout bound on one ReadIndex attempt (two election timeouts: time for a new leader);
     *                       it may exceed requestTimeout: an attempt never outlives its request's deadline
     * @param minLeaseTtlSeconds shorter lease TTLs are raised to this by the leader before proposing
     *                       (1.5 × election timeout, so a lease cannot expire during one leader change)
     * @param version        reported by Status
     * @param userQuotas     per-user bounds on leases and sessions, stamped into commands by the leader (issue 33)
     */
    public record Settings(InetSocketAddress listen, int maxFrameBytes, Duration requestTimeout,
                           Duration retryInterval, Duration readAttemptTimeout, long minLeaseTtlSeconds,
                           String version, UserQuotas userQuotas) {

        /** Checks every field; throws {@link IllegalArgumentException} naming the field. */
        public Settings {
            require(listen != null, "listen must be set");
            require(maxFrameBytes >= 1, "maxFrameBytes must be set (positive), got " + maxFrameBytes);
            require(positive(requestTimeout), "requestTimeout must be set (positive), got " + requestTimeout);
            require(positive(retryInterval), "retryInterval must be set (positive), got " + retryInterval);
            require(positive(readAttemptTimeout), "readAttemptTimeout must be set (positive), got "
                    + readAttemptTimeout);
            require(minLeaseTtlSeconds >= 1, "minLeaseTtlSeconds must be set (at least 1), got " + minLeaseTtlSeconds);
            require(version != null, "version must be set");
            require(userQuotas != null, "userQuotas must be set");
        }

        /** A builder for a port listening on {@code listen}; every other field must be set too. */
        public static Builder builder(InetSocketAddress listen) {
            return new Builder(listen);
        }

        private static boolean positive(Duration d) {
            return d != null && !d.isNegative() && !d.isZero();
        }

        private static void require(boolean condition, String message) {
            if (!condition) {
                throw new IllegalArgumentException(message);
            }
        }

        /** Builds {@link Settings}. Setters are named like the fields. */
        public static final class Builder {
            private final InetSocketAddress listen;
            private int maxFrameBytes;
            private Duration requestTimeout;
            private Duration retryInterval;
            private Duration readAttemptTimeout;
            private long minLeaseTtlSeconds;
            private String version;
            private UserQuotas userQuotas = UserQuotas.defaults();

            private Builder(InetSocketAddress listen) {
                this.listen = listen;
            }

            public Builder maxFrameBytes(int maxFrameBytes) {
                this.maxFrameBytes = maxFrameBytes;
                return this;
            }

            public Builder requestTimeout(Duration requestTimeout) {
                this.requestTimeout = requestTimeout;
                return this;
            }

            public Builder retryInterval(Duration retryInterval) {
                this.retryInterval = retryInterval;
                return this;
            }

            public Builder readAttemptTimeout(Duration readAttemptTimeout) {
                this.readAttemptTimeout = readAttemptTimeout;
                return this;
            }

            public Builder minLeaseTtlSeconds(long minLeaseTtlSeconds) {
                this.minLeaseTtlSeconds = minLeaseTtlSeconds;
                return this;
            }

            public Builder version(String version) {
                this.version = version;
                return this;
            }

            /** Per-user bounds the leader stamps into commands (issue 33); the defaults unless set. */
            public Builder userQuotas(UserQuotas userQuotas) {
                this.userQuotas = userQuotas;
                return this;
            }

            /** The settings; throws {@link IllegalArgumentException} naming a field that is missing or invalid. */
            public Settings build() {
                return new Settings(listen, maxFrameBytes, requestTimeout, retryInterval, readAttemptTimeout,
                        minLeaseTtlSeconds, version, userQuotas);
            }
        }
    }

    private final EventLoopGroup group;
    /** False when the connections live on the driver's loop, which this port must not shut down. */
    private final boolean ownsGroup;
    /** The listening channel and every open client connection (a closed one leaves by itself). */
    private final ChannelGroup channels = new DefaultChannelGroup("client-port", GlobalEventExecutor.INSTANCE, true);
    private final Forwarder forwarder;
    private final RequestRouter router;
    private final InetSocketAddress localAddress;
    /** Open client connections, against {@link ConnectionLimits#maxConnections()}. */
    private final AtomicInteger open = new AtomicInteger();

    public ClientServer(Settings settings, RaftDriver<CommandResult> driver, CoordinationStateMachine stateMachine,
                        ClusterView view, WatchHub watchHub, ScheduledExecutorService timer, Clock clock,
                        ServerMetrics metrics) {
        this(settings, driver, stateMachine, view, watchHub, timer, clock, metrics, null);
    }

    /**
     * A client port served over TLS when {@code tls} is not null; a follower then forwards writes to the
     * leader's port over TLS too, with {@code tls}'s {@linkplain TlsContexts#client() client context} (this
     * member's certificate, the host name checked).
     */
    public ClientServer(Settings settings, RaftDriver<CommandResult> driver, CoordinationStateMachine stateMachine,
                        ClusterView view, WatchHub watchHub, ScheduledExecutorService timer, Clock clock,
                        ServerMetrics metrics, TlsContexts tls) {
        this(settings, driver, stateMachine, view, watchHub, timer, clock, metrics, tls, null);
    }

    /**
     * As above, with the connections served on {@code sharedLoop} when it is not null: the Raft driver's event
     * loop (design.md P15), so that a request read from a client is proposed, and its answer written, by the
     * thread that runs the driver's turns — no thread hand-off on either side of the Raft round. The loop is
     * the caller's: {@link #close()} closes this port's connections on it but does not shut it down.
     */
    public ClientServer(Settings settings, RaftDriver<CommandResult> driver, CoordinationStateMachine stateMachine,
                        ClusterView view, WatchHub watchHub, ScheduledExecutorService timer, Clock clock,
                        ServerMetrics metrics, TlsContexts tls, EventLoop sharedLoop) {
        this(settings, driver, stateMachine, view, watchHub, timer, clock, metrics, tls, sharedLoop,
                ConnectionLimits.DEFAULTS);
    }

    /**
     * As above, with {@code limits} on what one client may cost: the connection cap, the idle timeout and
     * the back-pressure on unread answers ({@link ClientBackPressure}).
     */
    public ClientServer(Settings settings, RaftDriver<CommandResult> driver, CoordinationStateMachine stateMachine,
                        ClusterView view, WatchHub watchHub, ScheduledExecutorService timer, Clock clock,
                        ServerMetrics metrics, TlsContexts tls, EventLoop sharedLoop, ConnectionLimits limits) {
        this.ownsGroup = sharedLoop == null;
        this.group = sharedLoop != null ? sharedLoop : new MultiThreadIoEventLoopGroup(
                Math.max(2, Runtime.getRuntime().availableProcessors()), NioIoHandler.newFactory());
        this.forwarder = new NettyForwarder(group, settings.maxFrameBytes(), settings.requestTimeout(),
                MAX_FORWARDED_IN_FLIGHT, tls);
        this.router = new RequestRouter(driver, stateMachine, view, forwarder, timer, clock, metrics, settings);
        ClientInitializer pipeline = new ClientInitializer(settings.maxFrameBytes(), router, watchHub, metrics,
                MAX_CALLS_IN_FLIGHT, tls, limits);
        ServerBootstrap b = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK,
                        new WriteBufferWaterMark(WRITE_BUFFER_LOW_BYTES, WRITE_BUFFER_HIGH_BYTES))
                .childHandler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        if (open.incrementAndGet() > limits.maxConnections()) {
                            open.decrementAndGet();
                            refusals.warn("Refusing client connection {}: {} connections are open"
                                    + " (--max-client-connections)", ch.remoteAddress(), limits.maxConnections());
                            ch.close();
                            return;
                        }
                        ch.closeFuture().addListener(f -> open.decrementAndGet());
                        channels.add(ch);   // once close() has begun, the group closes it at once
                        ch.pipeline().addLast(pipeline);
                    }
                });
        ChannelFuture bound = b.bind(settings.listen()).awaitUninterruptibly();
        if (!bound.isSuccess()) {
            forwarder.close();
            if (ownsGroup) {
                group.shutdownGracefully(0, 0, TimeUnit.SECONDS);
            }
            throw new IllegalStateException("cannot listen for clients on " + settings.listen() + ": "
                    + bound.cause().getMessage(), bound.cause());
        }
        channels.add(bound.channel());
        this.localAddress = (InetSocketAddress) bound.channel().localAddress();
    }

    public InetSocketAddress localAddress() {
        return localAddress;
    }

    /** Where writes of this member's own (publish member) go: the same path as clients'. */
    public RequestRouter router() {
        return router;
    }

    /**
     * Closes the port and every client connection, waits for them to close, then stops the event loops (its
     * own: a driver's loop it was given is left running for the driver, whose close stops it).
     * The channels are closed here, not left to the loops' shutdown: a Netty 4.2 loop closes its channels
     * only when it finds itself shutting down between its I/O and its task phase
     * ({@code SingleThreadIoEventLoop.run}: {@code runIo}, {@code prepareToDestroy}, {@code runAllTasks},
     * {@code confirmShutdown}). With no quiet period, a loop that is running tasks when the shutdown starts
     * ends at once, and its cleanup only closes the selector. Its sockets then stay open with nobody serving
     * them, and a client (an SDK watch) waits forever on a member that has stopped instead of moving to
     * another (seen under load in RotaClientWatchFailoverTest; ClientServerCloseTest makes it happen).
     */
    @Override
    public void close() {
        channels.close().awaitUninterruptibly(CLOSE_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        forwarder.close();
        router.gate().close();
        if (ownsGroup) {
            group.shutdownGracefully(0, CLOSE_TIMEOUT_SECONDS, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    /** The event loops that serve the port: a test holds them busy to check that close() closes anyway. */
    EventLoopGroup eventLoops() {
        return group;
    }
}
