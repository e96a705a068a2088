package io.rota.raft.transport;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.util.concurrent.ScheduledFuture;
import io.rota.proto.PeerHandshake;
import io.rota.proto.RaftMessage;
import io.rota.raft.core.LogText;
import io.rota.raft.core.RaftNode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.channels.ClosedChannelException;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLPeerUnverifiedException;

/**
 * The first exchange on every peer connection: each side names its cluster and node, and the connection is
 * closed unless both agree. The dialling side (always the lower node id) speaks first; the accepting side
 * checks the dialler's handshake and answers with its own, which the dialler checks in turn.
 *
 * <p>The checks of a handshake frame, in order (issue 30: nothing a peer says counts before it is known):
 * <ol>
 *   <li>it is a handshake: until the handshake completes any other frame closes the connection;</li>
 *   <li>with mutual TLS, the peer's certificate (already checked against the peer CA by the TLS handshake)
 *       names the member the handshake claims ({@link PeerIdentity});</li>
 *   <li>a refusal is reported ({@link ConnectionEvents#refusedBy}) only on the dialling side, from the node
 *       dialled, with this cluster id and protocol version; on the accepting side one is never legitimate
 *       (only the acceptor refuses during the handshake). Any other refusal is logged and closes;</li>
 *   <li>with this cluster id and protocol version, the {@link PeerAdmission}: a fresh peer (an empty data
 *       directory) under a joined id, or a removed id, gets a refusal frame saying why before the close;</li>
 *   <li>the cluster id and the protocol version; then, on the accepting side, a known peer with a lower id
 *       than this node's, and on the dialling side, the node dialled.</li>
 * </ol>
 * Afterwards this handler removes itself and fires {@link HandshakeCompleted}. The accepting side has
 * already answered when the dialler refuses it, so {@link PeerMessageHandler} reports a refusal arriving
 * after the handshake too, if it comes from the peer this handshake authenticated. A peer that stays silent
 * for the connect timeout is disconnected; whatever a peer sent that reaches a log line is
 * {@linkplain LogText#escape escaped} (a cluster id or refusal with a newline cannot forge a line); a failed TLS handshake — a certificate of another CA, or none — is
 * logged here. One instance per channel.
 */
final class HandshakeHandler extends ChannelInboundHandlerAdapter {

    /** Version of the peer protocol; bump when frames change incompatibly. */
    static final int PROTOCOL_VERSION = 1;

    private static final Logger log = LoggerFactory.getLogger(HandshakeHandler.class);
    /** Anyone who can reach the peer port can cause these lines: bounded. */
    private static final LogLimiter refusals = new LogLimiter(log, 5);

    private final TransportConfig config;
    /** The node this side dialled, or {@link RaftNode#NONE} on the accepting side. */
    private final long dialledPeerId;
    private final PeerAdmission admission;
    private final ConnectionEvents events;
    /** With mutual TLS, checks the peer's certificate against its claimed id; null for plaintext. */
    private final PeerIdentity identity;
    /** Frees this connection's place among the pending handshakes (accepting side); null when not counted. */
    private final Runnable settled;
    private ScheduledFuture<?> timeout;

    HandshakeHandler(TransportConfig config, long dialledPeerId, PeerAdmission admission, ConnectionEvents events) {
        this(config, dialledPeerId, admission, events, null, null);
    }

    HandshakeHandler(TransportConfig config, long dialledPeerId, PeerAdmission admission, ConnectionEvents events,
                     PeerIdentity identity, Runnable settled) {
        this.settled = settled;
        this.config = config;
        this.dialledPeerId = dialledPeerId;
        this.admission = admission;
        this.events = events;
        this.identity = identity;
    }

    private boolean accepting() {
        return dialledPeerId == RaftNode.NONE;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        if (!accepting()) {
            ctx.writeAndFlush(ownHandshake());
        }
        long millis = config.connectTimeout().toMillis();
        timeout = ctx.executor().schedule(() -> {
            refusals.warn("Closing peer connection {}: no handshake within {} ms", ctx.channel().remoteAddress(), millis);
            ctx.close();
        }, millis, TimeUnit.MILLISECONDS);
        ctx.fireChannelActive();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        cancelTimeout();
        ctx.fireChannelInactive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        RaftMessage frame = (RaftMessage) msg;
        if (!frame.hasHandshake()) {
            refuse(ctx, "it sent " + frame.getPayloadCase() + " before the handshake");
            return;
        }
        PeerHandshake handshake = frame.getHandshake();
        // Authentication first: with mutual TLS the certificate must name the member the peer claims to be,
        // before anything it says counts or anything is said to it (an impostor learns nothing about the
        // cluster's members).
        String impostor = identity == null ? null : checkCertificate(ctx, handshake.getNodeId());
        if (impostor != null) {
            refuse(ctx, impostor);
            return;
        }
        if (!handshake.getRefusal().isEmpty()) {
            // Issue 30: a refusal stops a fresh member, so it counts only as the answer it replaces would: from
            // the node dialled, in this cluster and protocol. Its text is not logged: anyone can send it, a
            // frame long.
            String problem = accepting() ? "it sent a refusal (claiming node " + handshake.getNodeId() + "), but"
                    + " only the accepting side refuses during the handshake" : checkAcceptor(handshake);
            if (problem != null) {
                refuse(ctx, "ignoring a refusal: " + problem);
                return;
            }
            refusedBy(ctx, handshake.getNodeId(), handshake.getRefusal());
            return;
        }
        // Issue 13: a removed id, or a fresh node under an id the cluster knows as joined (it has lost its
        // votes and the entries it acknowledged), is told why (it stops) before the connection closes. Asked
        // before the other checks: a removed id is no longer a known peer, and would otherwise be refused
        // without a word.
        String admission = checkCommon(config, handshake) == null
                ? this.admission.refuse(handshake.getNodeId(), handshake.getFresh()) : null;
        if (admission != null) {
            refusals.warn("Refusing peer {} ({}) on node {}: {}", handshake.getNodeId(), ctx.channel().remoteAddress(),
                    config.selfId(), admission);
            cancelTimeout();
            ctx.writeAndFlush(refusal(admission)).addListener(f -> ctx.close());
            return;
        }
        String problem = accepting() ? checkDialler(handshake) : checkAcceptor(handshake);
        if (problem != null) {
            refuse(ctx, problem);
            return;
        }
        cancelTimeout();
        if (settled != null) {
            settled.run();
        }
        PeerFrameDecoder frames = ctx.pipeline().get(PeerFrameDecoder.class);
        if (frames != null) {
            frames.handshakeCompleted();
        }
        if (accepting()) {
            ctx.writeAndFlush(ownHandshake());
        }
        ctx.pipeline().remove(this);
        ctx.fireUserEventTriggered(new HandshakeCompleted(handshake.getNodeId()));
    }

    /** Checks a dialler's handshake; returns why it is refused, or null. */
    private String checkDialler(PeerHandshake h) {
        String common = checkCommon(config, h);
        if (common != null) {
            return common;
        }
        long id = h.getNodeId();
        if (id == config.selfId()) {
            return "it claims this node's own id " + id;
        }
        if (!config.peers().containsKey(id)) {
            return "unknown node id " + id + " (known peers: " + config.peers().keySet() + ")";
        }
        if (id > config.selfId()) {
            return "node " + id + " dialled node " + config.selfId() + ", but the node with the lower id dials";
        }
        return null;
    }

    /** Checks the acceptor's answer; returns why it is refused, or null. */
    private String checkAcceptor(PeerHandshake h) {
        String common = checkCommon(config, h);
        if (common != null) {
            return common;
        }
        if (h.getNodeId() != dialledPeerId) {
            return "expected node id " + dialledPeerId + " but received node id " + h.getNodeId();
        }
        return null;
    }

    /** With mutual TLS: does the peer's verified certificate name the member it claims to be? */
    private String checkCertificate(ChannelHandlerContext ctx, long claimedId) {
        SslHandler tls = (SslHandler) ctx.pipeline().get(PeerChannelInitializer.TLS);
        if (tls == null) {
            return "mutual TLS is on but the connection has no TLS layer";
        }
        try {
            Certificate[] chain = tls.engine().getSession().getPeerCertificates();
            return identity.refuse(claimedId, (X509Certificate) chain[0]);
        } catch (SSLPeerUnverifiedException e) {
            return "it claims to be member " + claimedId + " but presented no certificate";
        }
    }

    /**
     * A failed TLS handshake (a certificate from another CA, none, or no TLS at all) is a refusal: log it. A
     * connection closed before any handshake — this node's own liveness probe — is not worth a line.
     */
    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof SslHandshakeCompletionEvent && !((SslHandshakeCompletionEvent) evt).isSuccess()) {
            Throwable cause = ((SslHandshakeCompletionEvent) evt).cause();
            if (!(cause instanceof ClosedChannelException)) {
                refuse(ctx, "TLS handshake failed (" + (accepting() ? "the dialler's certificate was refused"
                        : "dialling node " + dialledPeerId) + "): " + cause.getMessage() + "; every member needs a"
                        + " certificate of the peer CA (--peer-trusted-ca-file), and a certificate of another CA is"
                        + " not even offered (an empty chain)");
            }
        }
        ctx.fireUserEventTriggered(evt);
    }

    /** Whether {@code h} names this node's cluster and protocol; returns why not, or null. */
    static String checkCommon(TransportConfig config, PeerHandshake h) {
        if (!config.clusterId().equals(h.getClusterId())) {
            return "expected cluster id '" + config.clusterId() + "' but received cluster id '"
                    + LogText.escape(h.getClusterId()) + "' (node id " + h.getNodeId() + ")";
        }
        if (h.getProtocolVersion() != PROTOCOL_VERSION) {
            return "expected protocol version " + PROTOCOL_VERSION + " but received " + h.getProtocolVersion();
        }
        return null;
    }

    private void refuse(ChannelHandlerContext ctx, String reason) {
        refusals.warn("Refusing peer connection {} on node {}: {}", ctx.channel().remoteAddress(), config.selfId(), reason);
        cancelTimeout();
        ctx.close();
    }

    /** The peer refused this node (a refusal frame): report it, then close. */
    static void refusedBy(ChannelHandlerContext ctx, ConnectionEvents events, Logger logger, long peerId,
                          String reason) {
        logger.error("Peer {} refused this node: {}", peerId, LogText.escape(reason));
        events.refusedBy(peerId, reason);
        ctx.close();
    }

    private void refusedBy(ChannelHandlerContext ctx, long peerId, String reason) {
        cancelTimeout();
        refusedBy(ctx, events, log, peerId, reason);
    }

    private void cancelTimeout() {
        if (timeout != null) {
            timeout.cancel(false);
            timeout = null;
        }
    }

    private RaftMessage ownHandshake() {
        return RaftMessage.newBuilder().setHandshake(PeerHandshake.newBuilder()
                .setClusterId(config.clusterId())
                .setNodeId(config.selfId())
                .setProtocolVersion(PROTOCOL_VERSION)
                .setFresh(admission.fresh())).build();
    }

    private RaftMessage refusal(String reason) {
        return RaftMessage.newBuilder().setHandshake(PeerHandshake.newBuilder()
                .setClusterId(config.clusterId())
                .setNodeId(config.selfId())
                .setProtocolVersion(PROTOCOL_VERSION)
                .setRefusal(reason)).build();
    }
}
