package io.rota.server.http;

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

import io.rota.server.fault.FaultClock;

import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

/** Bootstraps the operator's HTTP port: /health, /status, /metrics, the dashboard ({@link HttpHandler}). */
public final class HttpServer implements AutoCloseable {

    /** Requests are GETs without bodies; anything bigger is refused by the aggregator. */
    private static final int MAX_REQUEST_BYTES = 8 * 1024;

    private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    private final InetSocketAddress localAddress;
    private final DashboardFeed feed;

    /**
     * @param faultClock the clock /fault/clock sets, or null (the default) to refuse it with 404
     * @param dashboard  the dashboard to serve at /, or null for none
     */
    public HttpServer(InetSocketAddress listen, NodeReport report, FaultClock faultClock, Dashboard dashboard) {
        feed = dashboard == null ? null : new DashboardFeed(dashboard, group.next());
        ServerBootstrap b = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new HttpServerCodec(), new HttpObjectAggregator(MAX_REQUEST_BYTES),
                                new HttpHandler(report, faultClock, dashboard, feed));
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
        group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
    }
}
