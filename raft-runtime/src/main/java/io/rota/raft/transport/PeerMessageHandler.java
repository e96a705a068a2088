package io.rota.raft.transport;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderException;
import io.rota.proto.PeerHandshake;
import io.rota.proto.RaftMessage;
import io.rota.raft.core.Message;
import io.rota.raft.core.RaftNode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;

/**
 * The last handler of a peer connection: turns frames into core messages and reports them through
 * {@link ConnectionEvents}; reassembles snapshot chunks. A frame that makes no valid message
 * ({@link InvalidFrameException}) is logged and counted: one of a type this version does not know is
 * skipped and the connection kept (a newer peer must not be cut off from the messages both understand);
 * anything malformed closes the connection. One instance per channel (it holds the peer's id and a partial
 * snapshot).
 */
final class PeerMessageHandler extends ChannelInboundHandlerAdapter {

    private static final Logger log = LoggerFactory.getLogger(PeerMessageHandler.class);
    /** A sender on the peer port can cause these lines at will (garbage, resets): bounded. */
    private static final LogLimiter connectionFaults = new LogLimiter(log, 5);

    private final TransportConfig config;
    private final ConnectionEvents events;
    private final SnapshotAssembler snapshots;
    /** The handshaken peer, or NONE before the handshake. */
    private long peerId = RaftNode.NONE;

    PeerMessageHandler(TransportConfig config, ConnectionEvents events) {
        this.config = config;
        this.events = events;
        this.snapshots = new SnapshotAssembler(config.receivedSnapshotDirectory(), config.maxSnapshotBytes());
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object event) {
        if (event instanceof HandshakeCompleted completed) {
            peerId = completed.peerId();
            events.connected(peerId, ctx.channel());
        } else {
            ctx.fireUserEventTriggered(event);
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (peerId == RaftNode.NONE) {
            // The HandshakeHandler lets nothing through before the handshake; this is a wiring error.
            throw new IllegalStateException("message before handshake: " + msg);
        }
        RaftMessage frame = (RaftMessage) msg;
        if (frame.hasHandshake() && !frame.getHandshake().getRefusal().isEmpty()) {
            // The dialler checked this node's answer and refused it (see HandshakeHandler). Issue 30: it counts
            // only from the peer the handshake authenticated, in this cluster and protocol.
            PeerHandshake refusal = frame.getHandshake();
            String problem = refusal.getNodeId() != peerId ? "it names node " + refusal.getNodeId()
                    : HandshakeHandler.checkCommon(config, refusal);
            if (problem != null) {
                throw InvalidFrameException.malformed("a refusal on the connection between " + peerId + " and "
                        + config.selfId() + ", ignored: " + problem, null); // exceptionCaught closes the connection
            }
            HandshakeHandler.refusedBy(ctx, events, log, peerId, refusal.getRefusal());
            return;
        }
        Message message;
        if (frame.hasInstallSnapshot()) {
            SnapshotAssembler.Outcome outcome = snapshots.accept(frame.getInstallSnapshot());
            if (outcome instanceof SnapshotAssembler.Rejected rejected) {
                // Closing tells the leader's transport the transfer failed, so its core probes this node again.
                log.warn("Dropping snapshot from peer {} and closing the connection: {}", peerId, rejected.reason());
                ctx.close();
                return;
            }
            if (!(outcome instanceof SnapshotAssembler.Complete complete)) {
                return;
            }
            message = complete.message();
        } else {
            try {
                message = MessageCodec.fromProto(frame);
            } catch (InvalidFrameException e) {
                if (e.reason() != InvalidFrameException.Reason.UNKNOWN_TYPE) {
                    throw e; // exceptionCaught closes the connection
                }
                events.rejected(peerId);
                connectionFaults.warn("Node {} skipped a message from peer {}: {}", config.selfId(), peerId,
                        e.getMessage());
                return;
            }
        }
        if (message.from() != peerId || message.to() != config.selfId()) {
            throw InvalidFrameException.malformed("message " + message.from() + "->" + message.to()
                    + " on the connection between " + peerId + " and " + config.selfId(), null);
        }
        events.delivered(peerId, message);
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (peerId != RaftNode.NONE && ctx.channel().isWritable()) {
            events.writable(peerId, ctx.channel());
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        snapshots.discard();
        if (peerId != RaftNode.NONE) {
            events.disconnected(peerId, ctx.channel());
        }
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        String peer = peerId == RaftNode.NONE ? "not yet handshaken" : "peer " + peerId;
        // A decoder's own exception arrives wrapped; name what went wrong, not the wrapper.
        Throwable reason = cause instanceof DecoderException && cause.getCause() != null ? cause.getCause() : cause;
        if (reason instanceof IOException) {
            connectionFaults.info("Peer connection {} ({}) failed: {}", ctx.channel().remoteAddress(), peer,
                    reason.toString());
        } else {
            if (peerId != RaftNode.NONE) {
                events.rejected(peerId);
            }
            connectionFaults.warn("Closing peer connection {} ({}) on node {}: malformed or oversized frame: {}",
                    ctx.channel().remoteAddress(), peer, config.selfId(), reason.toString());
        }
        ctx.close();
    }
}
