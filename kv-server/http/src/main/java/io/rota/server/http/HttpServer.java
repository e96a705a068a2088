package io.rota.server.http;

import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.handler.timeout.WriteTimeoutHandler;
import io.rota.raft.transport.LogLimiter;
import io.rota.raft.transport.TlsContexts;
import io.rota.server.authgate.AuthGate;
import io.rota.server.fault.FaultClock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.TimeUnit;

/**
 * Bootstraps the operator's HTTP port: /health, /status, /metrics, the dashboard ({@link HttpHandler}).
 *
 * <p>With a TLS client port ({@code --cert-file}) it speaks HTTPS with the same certificate, reloaded with it,
 * and refuses plaintext: probes and scrapers use scheme HTTPS and the cluster's CA. It asks for a client
 * certificate without requiring one; when the client port requires them ({@code --client-cert-auth}), only
 * /health and /metrics answer a caller without one, since the rest (status, dashboard: leaders, lock holders,
 * key names) is information (design X12). With auth enabled those pages need a root caller, every page but
 * /health and /metrics a Host this member answers to ({@link HttpAccess}, design SD10–SD12), and the port holds at
 * most {@link HttpPolicy#maxConnections} connections, none idle for long.
 */
public final class HttpServer implements AutoCloseable {

    /** Requests are GETs without bodies; anything bigger is refused by the aggregator. */
    private static final int MAX_REQUEST_BYTES = 8 * 1024;
    /** A connection with nothing read or written this long is closed (a browser's keep-alive is shorter). */
    static final int IDLE_SECONDS = 60;
    /** A write its socket has not taken this long closes the connection: a reader that stopped reading. */
    static final int WRITE_TIMEOUT_SECONDS = 30;
    private static final Logger log = LoggerFactory.getLogger(HttpServer.class);
    private static final LogLimiter refusals = new LogLimiter(log, 5);

    private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    private final InetSocketAddress localAddress;
    private final DashboardFeed feed;
    /** Every accepted connection and the listening channel, closed first by {@link #close()} (design H10). */
    private final ChannelGroup channels = new DefaultChannelGroup("http-port", GlobalEventExecutor.INSTANCE, true);

    /**
     * @param faultClock the clock /fault/clock sets, or null (the default) to refuse it with 404
     * @param dashboard  the dashboard to serve at /, or null for none
     */
    public HttpServer(InetSocketAddress listen, NodeReport report, FaultClock faultClock, Dashboard dashboard) {
        this(listen, report, faultClock, dashboard, null, false, null, HttpPolicy.DEFAULT, List.of());
    }

    /**
     * @param tls                the client port's TLS contexts (HTTPS with its certificate), or null for HTTP
     * @param clientCertRequired whether pages other than /health and /metrics need a verified client
     *                           certificate (the client port's {@code --client-cert-auth})
     * @param gate               the client port's auth gate: with auth enabled, pages other than /health and
     *                           /metrics need a root caller; null for none
     * @param policy             Host allowlist, CORS origins and the connection cap
     * @param ownHosts           the hosts this member listens on and advertises (the default Host allowlist)
     */
    public HttpServer(InetSocketAddress listen, NodeReport report, FaultClock faultClock, Dashboard dashboard,
                      TlsContexts tls, boolean clientCertRequired, AuthGate gate, HttpPolicy policy,
                      Collection<String> ownHosts) {
        feed = dashboard == null ? null : new DashboardFeed(dashboard, group.next());
        HttpAccess access = new HttpAccess(gate, policy.hosts(ownHosts), policy.corsOrigins(), dashboard);
        AtomicInteger open = new AtomicInteger();
        ServerBootstrap b = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        if (open.incrementAndGet() > policy.maxConnections()) {
                            open.decrementAndGet();
                            refusals.warn("HTTP: closing a connection from {}: {} are open (--http-max-connections)",
                                    ch.remoteAddress(), policy.maxConnections());
                            ch.close();
                            return;
                        }
                        ch.closeFuture().addListener(f -> open.decrementAndGet());
                        channels.add(ch);
                        // Idle: nothing read or written for a minute (an event stream writes every 250 ms).
                        // Write timeout: a reply or frame the socket does not take within 30 s (SD12).
                        ch.pipeline().addLast(new IdleStateHandler(0, 0, IDLE_SECONDS, TimeUnit.SECONDS),
                                new WriteTimeoutHandler(WRITE_TIMEOUT_SECONDS), new IdleCloser());
                        if (tls != null) {
                            // Read per connection: a rotated certificate serves the next one.
                            ch.pipeline().addLast(tls.serverOptionalClientCert().newHandler(ch.alloc()));
                        }
                        ch.pipeline().addLast(new HttpServerCodec(), new HttpObjectAggregator(MAX_REQUEST_BYTES),
                                new HttpHandler(report, faultClock, dashboard, feed, tls != null && clientCertRequired,
                                        access));
                    }
                });
        ChannelFuture bound = b.bind(listen).awaitUninterruptibly();
        if (!bound.isSuccess()) {
            if (feed != null) {
                feed.close();
            }
            group.shutdownGracefully(0, 0, TimeUnit.SECONDS);
            throw new IllegalStateException("cannot listen for HTTP on " + listen + ": " + bound.cause().getMessage(),
                    bound.cause());
        }
        channels.add(bound.channel());
        localAddress = (InetSocketAddress) bound.channel().localAddress();
    }

    public InetSocketAddress localAddress() {
        return localAddress;
    }

    /** Closes a connection idle for {@link #IDLE_SECONDS}. */
    private static final class IdleCloser extends ChannelInboundHandlerAdapter {
        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
            if (evt instanceof IdleStateEvent) {
                ctx.close();
            } else {
                super.userEventTriggered(ctx, evt);
            }
        }
    }

    @Override
    public void close() {
        if (feed != null) {
            feed.close();
        }
        // Close the connections ourselves: a Netty 4.2 loop shut down with no quiet period while it runs tasks
        // can exit with its sockets still open, and a dashboard's event stream would then never end (H10).
        channels.close().awaitUninterruptibly(2, TimeUnit.SECONDS);
        group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
    }
}
