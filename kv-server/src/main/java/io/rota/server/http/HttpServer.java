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

import io.rota.raft.transport.TlsContexts;
import io.rota.server.fault.FaultClock;

import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

/**
 * Bootstraps the operator's HTTP port: /health, /status, /metrics, the dashboard ({@link HttpHandler}).
 *
 * <p>With a TLS client port ({@code --cert-file}) it speaks HTTPS with the same certificate, reloaded with it,
 * and refuses plaintext: probes and scrapers use scheme HTTPS and the cluster's CA. It asks for a client
 * certificate without requiring one; when the client port requires them ({@code --client-cert-auth}), only
 * /health and /metrics answer a caller without one, since the rest (status, dashboard: leaders, lock holders,
 * key names) is information (design X12).
 */
public final class HttpServer implements AutoCloseable {

    /** Requests are GETs without bodies; anything bigger is refused by the aggregator. */
    private static final int MAX_REQUEST_BYTES = 8 * 1024;

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
        this(listen, report, faultClock, dashboard, null, false);
    }

    /**
     * @param tls                the client port's TLS contexts (HTTPS with its certificate), or null for HTTP
     * @param clientCertRequired whether pages other than /health and /metrics need a verified client
     *                           certificate (the client port's {@code --client-cert-auth})
     */
    public HttpServer(InetSocketAddress listen, NodeReport report, FaultClock faultClock, Dashboard dashboard,
                      TlsContexts tls, boolean clientCertRequired) {
        feed = dashboard == null ? null : new DashboardFeed(dashboard, group.next());
        ServerBootstrap b = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        channels.add(ch);
                        if (tls != null) {
                            // Read per connection: a rotated certificate serves the next one.
                            ch.pipeline().addLast(tls.serverOptionalClientCert().newHandler(ch.alloc()));
                        }
                        ch.pipeline().addLast(new HttpServerCodec(), new HttpObjectAggregator(MAX_REQUEST_BYTES),
                                new HttpHandler(report, faultClock, dashboard, feed, tls != null && clientCertRequired));
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
