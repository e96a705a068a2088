package io.rota.raft.transport;

import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.codec.LengthFieldPrepender;
import io.rota.raft.core.RaftNode;

/**
 * Builds the pipeline of a peer connection, codec first, logic last:
 * <pre>
 *   inbound:  frameDecoder → protobufDecoder → handshake → messages
 *   outbound: protobufEncoder → frameEncoder
 * </pre>
 * Frames are a 4-byte big-endian length and a protobuf {@code RaftMessage}; both directions enforce
 * {@link TransportConfig#maxFrameBytes()}. Every channel gets new handlers (they hold per-connection state).
 */
final class PeerChannelInitializer extends ChannelInitializer<Channel> {

    private static final int LENGTH_BYTES = 4;

    private final TransportConfig config;
    private final long dialledPeerId;
    private final ConnectionEvents events;
    private final PeerAdmission admission;

    private PeerChannelInitializer(TransportConfig config, long dialledPeerId, ConnectionEvents events,
                                   PeerAdmission admission) {
        this.config = config;
        this.dialledPeerId = dialledPeerId;
        this.events = events;
        this.admission = admission;
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
        return new PeerChannelInitializer(config, RaftNode.NONE, events, admission);
    }

    /** For a connection this node dials to {@code peerId} (a higher id). */
    static PeerChannelInitializer dialling(TransportConfig config, long peerId, ConnectionEvents events,
                                           PeerAdmission admission) {
        return new PeerChannelInitializer(config, peerId, events, admission);
    }

    @Override
    protected void initChannel(Channel channel) {
        channel.pipeline()
                .addLast("frameDecoder", new LengthFieldBasedFrameDecoder(
                        config.maxFrameBytes() + LENGTH_BYTES, 0, LENGTH_BYTES, 0, LENGTH_BYTES))
                .addLast("frameEncoder", new LengthFieldPrepender(LENGTH_BYTES))
                .addLast("protobufDecoder", new RaftMessageDecoder())
                .addLast("protobufEncoder", new RaftMessageEncoder(config.maxFrameBytes()))
                .addLast("handshake", new HandshakeHandler(config, dialledPeerId, admission, events))
                .addLast("messages", new PeerMessageHandler(config, events));
    }
}
