package io.rota.raft.transport;

import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.handler.codec.LengthFieldPrepender;
import io.netty.handler.ssl.SslContext;
import io.rota.raft.core.RaftNode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Builds the pipeline of a peer connection, codec first, logic last:
 * <pre>
 *   inbound:  frameDecoder → protobufDecoder → handshake → messages
 *   outbound: protobufEncoder → frameEncoder
 * </pre>
 * Frames are a 4-byte big-endian length and a protobuf {@code RaftMessage}; both directions enforce
 * {@link TransportConfig#maxFrameBytes()} — inbound only once the handshake has completed: before it, a frame
 * may hold {@link PeerFrameDecoder#HANDSHAKE_MAX_FRAME_BYTES} (a stranger cannot make this member buffer a
 * full frame). An accepting initializer admits at most {@link TransportConfig#maxPendingHandshakes()}
 * connections that have not completed the handshake; past it a new one is closed at once, with a
 * rate-limited log line. With mutual TLS ({@link NettyPeerTransport#setTls}) an
 * {@code SslHandler} named {@value #TLS} comes first, from the contexts current when the connection starts
 * (so a rotated certificate serves new connections). Every channel gets new handlers (they hold
 * per-connection state).
 */
final class PeerChannelInitializer extends ChannelInitializer<Channel> {

    private static final int LENGTH_BYTES = 4;
    private static final Logger log = LoggerFactory.getLogger(PeerChannelInitializer.class);
    /** Anyone who can reach the port can cause these lines: bounded. */
    private static final LogLimiter refusals = new LogLimiter(log, 5);
    /** The name of the TLS handler, where the handshake handler finds the peer's certificate. */
    static final String TLS = "tls";

    private final TransportConfig config;
    private final long dialledPeerId;
    private final ConnectionEvents events;
    private final PeerAdmission admission;
    /** Mutual TLS, or null for plaintext. */
    private final TlsContexts tls;
    /** Checks the peer's certificate against the member it claims; null when {@link #tls} is. */
    private final PeerIdentity identity;
    /** Accepted connections whose handshake has not completed (the accepting initializer is one per port). */
    private final AtomicInteger pendingHandshakes = new AtomicInteger();

    private PeerChannelInitializer(TransportConfig config, long dialledPeerId, ConnectionEvents events,
                                   PeerAdmission admission, TlsContexts tls, PeerIdentity identity) {
        this.config = config;
        this.dialledPeerId = dialledPeerId;
        this.events = events;
        this.admission = admission;
        this.tls = tls;
        this.identity = identity;
    }

    /** For connections this node accepts, admitting whoever the handshake admits ({@link PeerAdmission#OPEN}). */
    static PeerChannelInitializer accepting(TransportConfig config, ConnectionEvents events) {
        return accepting(config, events, PeerAdmission.OPEN);
    }

    /** For a connection this node dials, with {@link PeerAdmission#OPEN}. */
    static PeerChannelInitializer dialling(TransportConfig config, long peerId, ConnectionEvents events) {
        return dialling(config, peerId, events, PeerAdmission.OPEN);
    }

    /** For connections this node accepts (from peers with lower ids). */
    static PeerChannelInitializer accepting(TransportConfig config, ConnectionEvents events, PeerAdmission admission) {
        return accepting(config, events, admission, null, null);
    }

    /** For connections this node accepts, over mutual TLS when {@code tls} is not null. */
    static PeerChannelInitializer accepting(TransportConfig config, ConnectionEvents events, PeerAdmission admission,
                                            TlsContexts tls, PeerIdentity identity) {
        return new PeerChannelInitializer(config, RaftNode.NONE, events, admission, tls, identity);
    }

    /** For a connection this node dials to {@code peerId} (a higher id). */
    static PeerChannelInitializer dialling(TransportConfig config, long peerId, ConnectionEvents events,
                                           PeerAdmission admission) {
        return dialling(config, peerId, events, admission, null, null);
    }

    /** For a connection this node dials to {@code peerId}, over mutual TLS when {@code tls} is not null. */
    static PeerChannelInitializer dialling(TransportConfig config, long peerId, ConnectionEvents events,
                                           PeerAdmission admission, TlsContexts tls, PeerIdentity identity) {
        return new PeerChannelInitializer(config, peerId, events, admission, tls, identity);
    }

    @Override
    protected void initChannel(Channel channel) {
        Runnable settled = null;
        if (dialledPeerId == RaftNode.NONE) {
            if (pendingHandshakes.incrementAndGet() > config.maxPendingHandshakes()) {
                pendingHandshakes.decrementAndGet();
                refusals.warn("Closing peer connection {} on node {}: {} connections are already waiting for their"
                        + " handshake (maxPendingHandshakes, --max-peer-pending-handshakes)", channel.remoteAddress(),
                        config.selfId(), config.maxPendingHandshakes());
                channel.close();
                return;
            }
            AtomicBoolean counted = new AtomicBoolean(true);
            settled = () -> {
                if (counted.getAndSet(false)) {
                    pendingHandshakes.decrementAndGet();
                }
            };
            Runnable release = settled;
            channel.closeFuture().addListener(f -> release.run());
        }
        if (tls != null) {
            SslContext context = dialledPeerId == RaftNode.NONE ? tls.server() : tls.client();
            channel.pipeline().addLast(TLS, context.newHandler(channel.alloc()));
        }
        channel.pipeline()
                .addLast("frameDecoder", new PeerFrameDecoder(config.maxFrameBytes()))
                .addLast("frameEncoder", new LengthFieldPrepender(LENGTH_BYTES))
                .addLast("protobufDecoder", new RaftMessageDecoder())
                .addLast("protobufEncoder", new RaftMessageEncoder(config.maxFrameBytes()))
                .addLast("handshake", new HandshakeHandler(config, dialledPeerId, admission, events, identity, settled))
                .addLast("messages", new PeerMessageHandler(config, events));
    }

    /** Connections accepted whose handshake has not completed: tests see the cap by it. */
    int pendingHandshakes() {
        return pendingHandshakes.get();
    }
}
