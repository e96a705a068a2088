package io.rota.server.api;

import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.handler.codec.LengthFieldPrepender;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.timeout.IdleStateHandler;
import io.rota.raft.transport.TlsContexts;
import io.rota.server.watch.WatchHub;

import java.util.concurrent.TimeUnit;

/**
 * The client pipeline: with TLS, an SslHandler (from the contexts current at the connection's start, so a
 * rotated certificate serves new connections) and {@link ClientTls}; then 4-byte length prefix, Frame
 * codec, and one {@link ClientHandler} per channel. {@link ClientBackPressure} comes first, nearest the
 * socket, and an {@code IdleStateHandler} tells the ClientHandler when the connection has been silent for
 * {@link ConnectionLimits#idleTimeout()} (issue 33: what one client can cost). Any {@link Channel} type, so tests can run the same
 * pipeline on an EmbeddedChannel. A plaintext port adds nothing: its path is the one it was before TLS.
 */
final class ClientInitializer extends ChannelInitializer<Channel> {

    private final int maxFrameBytes;
    private final RequestRouter router;
    private final WatchHub watchHub;
    private final ServerMetrics metrics;
    private final int maxCallsInFlight;
    /** How long a client may take to complete the TLS handshake. */
    static final long HANDSHAKE_TIMEOUT_MILLIS = 30_000;
    /** TLS on this port, or null for plaintext. */
    private final TlsContexts tls;
    private final ConnectionLimits limits;

    ClientInitializer(int maxFrameBytes, RequestRouter router, WatchHub watchHub, ServerMetrics metrics,
                      int maxCallsInFlight) {
        this(maxFrameBytes, router, watchHub, metrics, maxCallsInFlight, null, ConnectionLimits.DEFAULTS);
    }

    ClientInitializer(int maxFrameBytes, RequestRouter router, WatchHub watchHub, ServerMetrics metrics,
                      int maxCallsInFlight, TlsContexts tls, ConnectionLimits limits) {
        this.tls = tls;
        this.limits = limits;
        this.maxFrameBytes = maxFrameBytes;
        this.router = router;
        this.watchHub = watchHub;
        this.metrics = metrics;
        this.maxCallsInFlight = maxCallsInFlight;
    }

    @Override
    protected void initChannel(Channel ch) {
        ch.pipeline().addLast(new ClientBackPressure(limits),
                new IdleStateHandler(0, 0, limits.idleTimeout().toMillis(), TimeUnit.MILLISECONDS));
        if (tls != null) {
            SslHandler handler = tls.server().newHandler(ch.alloc());
            // Netty's 10 s default closes handshakes a loaded machine is merely slow at; a client that
            // gets no answer still has its own deadline.
            handler.setHandshakeTimeoutMillis(HANDSHAKE_TIMEOUT_MILLIS);
            ch.pipeline().addLast(handler, new ClientTls());
        }
        ch.pipeline().addLast(
                // Rejects as soon as the length is read, before buffering the oversized frame.
                new RequestFrameDecoder(maxFrameBytes),
                new LengthFieldPrepender(4),
                new FrameCodec(),
                new ClientHandler(router, watchHub, metrics, maxCallsInFlight));
    }
}
