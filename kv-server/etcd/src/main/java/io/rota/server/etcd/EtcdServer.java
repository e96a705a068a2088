package io.rota.server.etcd;

import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.nio.NioEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.util.concurrent.DefaultEventExecutorGroup;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.rota.raft.transport.LogLimiter;
import io.rota.raft.transport.TlsFiles;
import io.rota.server.api.ConnectionLimits;
import io.rota.server.api.RequestRouter;
import io.rota.server.cluster.ClusterView;
import io.rota.server.watch.WatchHub;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The etcd listener ({@code --listen-etcd}): a gRPC server (grpc-java on its own shaded Netty, design.md Y1)
 * serving etcd's KV, Watch, Lease, Maintenance, Cluster and Auth services, v3lock's Lock and v3election's
 * Election over this member's {@link RequestRouter} and {@link WatchHub}. It only bootstraps; each service is
 * its own class. Every call passes {@link EtcdCallers}, which names its caller for the native auth checks;
 * with TLS the port uses the client port's certificates ({@link EtcdTls}).
 *
 * <p>What one client may cost ({@link ConnectionLimits}, issue 33): at most
 * {@link ConnectionLimits#maxConcurrentStreams()} streams per connection (gRPC refuses the next,
 * REFUSED_STREAM), at most {@link ConnectionLimits#maxConnections()} connections (the next is closed as it is
 * accepted, {@link CappedServerChannel}), connections without a call for {@link ConnectionLimits#idleTimeout()}
 * are told to go away (GOAWAY: a client dials again when it calls), and etcd's keep-alive settings.
 */
public final class EtcdServer implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(EtcdServer.class);

    /** Threads that write answers and drive watch streams (the driver thread only completes futures). */
    static final int RESPONDER_THREADS = 2;
    /**
     * etcd clients ping as often as every 2 s (etcdctl's --keepalive-time) or more; gRPC's default policy
     * would close such a connection ("too_many_pings"), so any interval of a second or more is allowed.
     */
    private static final Logger refusalLog = LoggerFactory.getLogger(EtcdServer.class.getName() + ".refusals");
    /** Anyone who reaches the port can cause these lines: bounded. */
    private static final LogLimiter refusals = new LogLimiter(refusalLog, 5);

    private final Server server;
    private final DefaultEventExecutorGroup responders;
    /** This port's own event loops: the connection cap needs its own server channel, and so its own loops. */
    private final EventLoopGroup boss;
    private final EventLoopGroup workers;

    /**
     * Listen on {@code listen} (port 0: any free port).
     *
     * @param maxRequestBytes the largest request message, as the native port's frame limit
     */
    public EtcdServer(InetSocketAddress listen, int maxRequestBytes, RequestRouter router, WatchHub watchHub,
                      ClusterView view, String clusterId) {
        this(listen, maxRequestBytes, router, watchHub, view, clusterId, null);
    }

    /**
     * Listen on {@code listen}, with TLS when {@code tls} is given: the member's client-port files
     * ({@code --cert-file}, {@code --key-file}, {@code --trusted-ca-file}, {@code --client-cert-auth}), so the
     * etcd port is exactly as closed as the native one (design.md Y21).
     *
     * @param tls the client port's TLS files, or null for plaintext
     */
    public EtcdServer(InetSocketAddress listen, int maxRequestBytes, RequestRouter router, WatchHub watchHub,
                      ClusterView view, String clusterId, TlsFiles tls) {
        this(listen, maxRequestBytes, router, watchHub, view, clusterId, tls, ConnectionLimits.DEFAULTS);
    }

    /**
     * As above, with {@code limits} on connections, streams, idleness and keep-alives.
     *
     * @param limits what one client may cost this port
     */
    public EtcdServer(InetSocketAddress listen, int maxRequestBytes, RequestRouter router, WatchHub watchHub,
                      ClusterView view, String clusterId, TlsFiles tls, ConnectionLimits limits) {
        responders = new DefaultEventExecutorGroup(RESPONDER_THREADS, new DefaultThreadFactory("rota-etcd", true));
        Calls calls = new Calls(router, EtcdCodec.clusterId(clusterId), responders);
        boss = new NioEventLoopGroup(1, new DefaultThreadFactory("rota-etcd-accept", true));
        workers = new NioEventLoopGroup(Math.max(2, Runtime.getRuntime().availableProcessors()),
                new DefaultThreadFactory("rota-etcd-io", true));
        AtomicInteger open = new AtomicInteger();
        int maxConnections = limits.maxConnections();
        NettyServerBuilder b = NettyServerBuilder.forAddress(listen).maxInboundMessageSize(maxRequestBytes)
                .bossEventLoopGroup(boss).workerEventLoopGroup(workers)
                .channelFactory(() -> new CappedServerChannel(open, maxConnections))
                // Handlers run on the event loop that read the call (design Y24): none blocks — they build a frame
                // and hand it to the router, as the native ClientHandler does; bcrypt and snapshots have their own
                // threads. gRPC's default, a cached pool, added a hand-off per call and cost 1.5-3.5x throughput.
                .directExecutor()
                .permitKeepAliveTime(limits.keepaliveMinTime().toMillis(), TimeUnit.MILLISECONDS)
                .permitKeepAliveWithoutCalls(true)
                .keepAliveTime(limits.keepaliveInterval().toMillis(), TimeUnit.MILLISECONDS)
                .keepAliveTimeout(limits.keepaliveTimeout().toMillis(), TimeUnit.MILLISECONDS)
                .maxConcurrentCallsPerConnection(limits.maxConcurrentStreams())
                .maxConnectionIdle(limits.idleTimeout().toMillis(), TimeUnit.MILLISECONDS)
                .addService(new KvService(calls)).addService(new WatchService(calls, watchHub))
                .addService(new LeaseService(calls)).addService(new MaintenanceService(calls))
                .addService(new LockService(calls, watchHub)).addService(new ElectionService(calls, watchHub))
                .addService(new AuthService(calls))
                .intercept(new EtcdCallers(router.gate()));
        if (tls != null) {
            b.sslContext(EtcdTls.serverContext(tls, responders));
        }
        String scheme = tls == null ? "http://" : "https://";
        // The member list names this member's etcd URL with the bound port (port 0 asks for any).
        b.addService(new ClusterService(calls, view,
                () -> scheme + listen.getHostString() + ":" + localAddress().getPort()));
        Server started;
        try {
            started = b.build().start();
        } catch (IOException e) {
            responders.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
            boss.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
            workers.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
            throw new UncheckedIOException("cannot listen for etcd clients on " + listen.getHostString() + ":"
                    + listen.getPort() + " (--listen-etcd): " + e.getMessage(), e);
        }
        server = started;
        log.info("etcd API listening on {}{}", localAddress(), tls == null ? "" : " (TLS"
                + (tls.requireClientCert() ? ", client certificates required" : "") + ")");
    }

    /** Where etcd clients connect (the bound port when 0 was asked for). */
    public InetSocketAddress localAddress() {
        return (InetSocketAddress) server.getListenSockets().get(0);
    }

    /** Stop accepting calls, end open streams, and wait briefly for them. */
    @Override
    public void close() {
        server.shutdownNow();
        try {
            server.awaitTermination(2, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        responders.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        boss.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        workers.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }

    /**
     * The etcd port's listening channel, which closes an accepted connection at once while {@code max} are
     * open (gRPC has no hook between accept and its own pipeline). The count drops as connections close.
     */
    static final class CappedServerChannel extends NioServerSocketChannel {
        private final AtomicInteger open;
        private final int max;

        CappedServerChannel(AtomicInteger open, int max) {
            this.open = open;
            this.max = max;
        }

        @Override
        protected int doReadMessages(List<Object> buf) throws Exception {
            int first = buf.size();
            super.doReadMessages(buf);
            int kept = 0;
            for (int i = first; i < buf.size(); ) {
                io.grpc.netty.shaded.io.netty.channel.Channel child =
                        (io.grpc.netty.shaded.io.netty.channel.Channel) buf.get(i);
                if (open.incrementAndGet() > max) {
                    open.decrementAndGet();
                    refusals.warn("Refusing etcd client connection {}: {} connections are open"
                            + " (--max-client-connections)", child.remoteAddress(), max);
                    child.unsafe().closeForcibly();
                    buf.remove(i);
                    continue;
                }
                child.closeFuture().addListener(f -> open.decrementAndGet());
                kept++;
                i++;
            }
            return kept;
        }
    }
}
