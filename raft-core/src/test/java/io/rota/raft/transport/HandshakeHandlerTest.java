package io.rota.raft.transport;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.embedded.EmbeddedChannel;
import io.rota.proto.PeerHandshake;
import io.rota.proto.RaftMessage;
import io.rota.raft.core.Message;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The pipeline of {@link PeerChannelInitializer} without sockets: what the handshake lets through and what
 * closes a connection. Node 2 of cluster "rota-test" knows peers 1 and 3.
 */
class HandshakeHandlerTest {

    private static final String CLUSTER = "rota-test";
    private static final int MAX_FRAME = 64 * 1024;

    private final TransportConfig config = TransportConfig.builder(CLUSTER, 2, new InetSocketAddress("127.0.0.1", 0))
            .peers(Map.of(1L, new InetSocketAddress("127.0.0.1", 7001), 3L, new InetSocketAddress("127.0.0.1", 7003)))
            .maxFrameBytes(MAX_FRAME)
            .snapshotChunkBytes(16 * 1024)
            .build();
    private final RecordingEvents events = new RecordingEvents();

    private EmbeddedChannel acceptor() {
        return new EmbeddedChannel(PeerChannelInitializer.accepting(config, events));
    }

    @Test
    void acceptedHandshakeIsAnsweredAndMessagesFlow() {
        EmbeddedChannel channel = acceptor();

        channel.writeInbound(frame(handshake(CLUSTER, 1)));

        assertTrue(channel.isOpen());
        assertEquals(List.of(1L), events.connected);
        RaftMessage answer = readFrame(channel);
        assertEquals(handshake(CLUSTER, 2), answer);

        Message.TimeoutNow message = new Message.TimeoutNow(3, 1, 2);
        channel.writeInbound(frame(MessageCodec.toProto(message)));
        assertEquals(List.of(message), events.delivered);

        channel.close();
        assertEquals(List.of(1L), events.disconnected);
    }

    @Test
    void wrongClusterIdIsRefused() {
        EmbeddedChannel channel = acceptor();
        // Both frames in one read: the message right behind the refused handshake must not get through.
        channel.writeInbound(Unpooled.wrappedBuffer(frame(handshake("other-cluster", 1)),
                frame(MessageCodec.toProto(new Message.TimeoutNow(3, 1, 2)))));
        assertRefused(channel);
    }

    @Test
    void unknownNodeIdIsRefused() {
        EmbeddedChannel channel = acceptor();
        channel.writeInbound(frame(handshake(CLUSTER, 9)));
        assertRefused(channel);
    }

    @Test
    void ownNodeIdIsRefused() {
        EmbeddedChannel channel = acceptor();
        channel.writeInbound(frame(handshake(CLUSTER, 2)));
        assertRefused(channel);
    }

    @Test
    void higherNodeIdMayNotDial() {
        EmbeddedChannel channel = acceptor();
        channel.writeInbound(frame(handshake(CLUSTER, 3)));
        assertRefused(channel);
    }

    @Test
    void wrongProtocolVersionIsRefused() {
        EmbeddedChannel channel = acceptor();
        channel.writeInbound(frame(RaftMessage.newBuilder().setHandshake(PeerHandshake.newBuilder()
                .setClusterId(CLUSTER).setNodeId(1).setProtocolVersion(99)).build()));
        assertRefused(channel);
    }

    @Test
    void messageBeforeHandshakeIsRefused() {
        EmbeddedChannel channel = acceptor();
        channel.writeInbound(frame(MessageCodec.toProto(new Message.TimeoutNow(3, 1, 2))));
        assertRefused(channel);
    }

    @Test
    void oversizedFrameClosesTheConnection() {
        EmbeddedChannel channel = acceptor();
        channel.writeInbound(frame(handshake(CLUSTER, 1)));
        assertTrue(channel.isOpen());

        ByteBuf header = Unpooled.buffer(4).writeInt(MAX_FRAME + 1);
        channel.writeInbound(header);

        assertFalse(channel.isOpen());
        assertTrue(events.delivered.isEmpty());
    }

    @Test
    void garbageFrameClosesTheConnection() {
        EmbeddedChannel channel = acceptor();
        channel.writeInbound(frame(handshake(CLUSTER, 1)));
        channel.writeInbound(Unpooled.buffer().writeInt(3).writeBytes(new byte[] {(byte) 0xff, (byte) 0xff, 0x01}));
        assertFalse(channel.isOpen());
        assertTrue(events.delivered.isEmpty());
        assertEquals(List.of(1L), events.rejected, "counted against the peer");
    }

    @Test
    void messageOfAnUnknownTypeIsSkippedAndCountedAndTheConnectionKept() {
        EmbeddedChannel channel = acceptor();
        channel.writeInbound(frame(handshake(CLUSTER, 1)));

        channel.writeInbound(frame(MessageCodecTest.fromANewerVersion()));
        Message.TimeoutNow known = new Message.TimeoutNow(3, 1, 2);
        channel.writeInbound(frame(MessageCodec.toProto(known)));

        assertTrue(channel.isOpen(), "a newer peer stays connected for the messages both versions know");
        assertEquals(List.of(1L), events.rejected);
        assertEquals(List.of(known), events.delivered);
    }

    @Test
    void messageFromAnotherNodeThanTheHandshakeNamedClosesTheConnection() {
        EmbeddedChannel channel = acceptor();
        channel.writeInbound(frame(handshake(CLUSTER, 1)));
        channel.writeInbound(frame(MessageCodec.toProto(new Message.TimeoutNow(3, 3, 2))));
        assertFalse(channel.isOpen());
        assertTrue(events.delivered.isEmpty());
    }

    @Test
    void aFreshNodeUnderAJoinedIdIsToldWhyAndRefused() {
        EmbeddedChannel channel = new EmbeddedChannel(PeerChannelInitializer.accepting(config, events, knowsNodeOne(false)));
        channel.writeInbound(frame(handshake(CLUSTER, 1).toBuilder()
                .setHandshake(handshake(CLUSTER, 1).getHandshake().toBuilder().setFresh(true)).build()));

        RaftMessage refusal = readFrame(channel);
        assertEquals("member 1 has joined already", refusal.getHandshake().getRefusal());
        assertRefused(channel);
    }

    @Test
    void aNodeThatIsNotFreshIsAdmittedUnderAJoinedId() {
        EmbeddedChannel channel = new EmbeddedChannel(PeerChannelInitializer.accepting(config, events, knowsNodeOne(false)));
        channel.writeInbound(frame(handshake(CLUSTER, 1).toBuilder().setHandshake(handshake(CLUSTER, 1)
                .getHandshake().toBuilder().setFresh(false)).build()));
        assertEquals(List.of(1L), events.connected);
    }

    @Test
    void aRefusalAfterTheHandshakeIsReportedAndCloses() {
        // This node (2) is fresh and accepted node 1's dial; node 1 checks the answer and refuses it.
        EmbeddedChannel channel = new EmbeddedChannel(PeerChannelInitializer.accepting(config, events, knowsNodeOne(true)));
        channel.writeInbound(frame(handshake(CLUSTER, 1)));
        assertTrue(readFrame(channel).getHandshake().getFresh(), "the answer says this node is fresh");
        channel.writeInbound(frame(handshake(CLUSTER, 1).toBuilder().setHandshake(handshake(CLUSTER, 1)
                .getHandshake().toBuilder().setRefusal("member 2 has joined already")).build()));
        assertFalse(channel.isOpen());
        assertEquals(List.of("1: member 2 has joined already"), events.refusedBy);
    }

    @Test
    void diallerSpeaksFirstAndChecksTheAnswer() {
        EmbeddedChannel channel = new EmbeddedChannel(PeerChannelInitializer.dialling(config, 3, events));
        assertEquals(handshake(CLUSTER, 2), readFrame(channel));

        channel.writeInbound(frame(handshake(CLUSTER, 1)));  // not the node we dialled

        assertRefused(channel);
    }

    @Test
    void outboundFramesAreLengthPrefixedAndBounded() {
        EmbeddedChannel channel = new EmbeddedChannel(PeerChannelInitializer.dialling(config, 3, events));
        readFrame(channel);
        channel.writeInbound(frame(handshake(CLUSTER, 3)));
        assertEquals(List.of(3L), events.connected);

        Message.TimeoutNow message = new Message.TimeoutNow(4, 2, 3);
        channel.writeOutbound(MessageCodec.toProto(message));
        assertEquals(message, MessageCodec.fromProto(readFrame(channel)));
    }

    // --- helpers

    private void assertRefused(EmbeddedChannel channel) {
        assertFalse(channel.isOpen(), "connection should be closed");
        assertTrue(events.connected.isEmpty(), "no connection should be reported");
        assertTrue(events.delivered.isEmpty(), "nothing should be delivered");
    }

    static RaftMessage handshake(String clusterId, long nodeId) {
        return RaftMessage.newBuilder().setHandshake(PeerHandshake.newBuilder()
                .setClusterId(clusterId).setNodeId(nodeId).setProtocolVersion(HandshakeHandler.PROTOCOL_VERSION))
                .build();
    }

    static ByteBuf frame(RaftMessage message) {
        byte[] body = message.toByteArray();
        return Unpooled.buffer(4 + body.length).writeInt(body.length).writeBytes(body);
    }

    /** Reads what the pipeline wrote (length prefix and body, possibly as two buffers) as one message. */
    static RaftMessage readFrame(EmbeddedChannel channel) {
        ByteBuf all = Unpooled.buffer();
        for (ByteBuf part; (part = channel.readOutbound()) != null; ) {
            all.writeBytes(part);
            part.release();
        }
        int length = all.readInt();
        assertEquals(length, all.readableBytes());
        try {
            return RaftMessage.parseFrom(all.nioBuffer());
        } catch (com.google.protobuf.InvalidProtocolBufferException e) {
            throw new AssertionError(e);
        }
    }

    /** Records what the handlers report. */
    static final class RecordingEvents implements ConnectionEvents {
        final List<Long> connected = new ArrayList<>();
        final List<Long> disconnected = new ArrayList<>();
        final List<Message> delivered = new ArrayList<>();
        final List<Long> rejected = new ArrayList<>();
        final List<String> refusedBy = new ArrayList<>();

        @Override
        public void connected(long peerId, Channel channel) {
            connected.add(peerId);
        }

        @Override
        public void disconnected(long peerId, Channel channel) {
            disconnected.add(peerId);
        }

        @Override
        public void writable(long peerId, Channel channel) {
        }

        @Override
        public void delivered(long peerId, Message message) {
            delivered.add(message);
        }

        @Override
        public void rejected(long peerId) {
            rejected.add(peerId);
        }

        @Override
        public void refusedBy(long peerId, String reason) {
            refusedBy.add(peerId + ": " + reason);
        }
    }

    /** Refuses a fresh node 1 (the cluster knows it as joined); this node is fresh if {@code fresh}. */
    static PeerAdmission knowsNodeOne(boolean fresh) {
        return new PeerAdmission() {
            @Override
            public boolean fresh() {
                return fresh;
            }

            @Override
            public String refuse(long peerId, boolean peerFresh) {
                return peerId == 1 && peerFresh ? "member 1 has joined already" : null;
            }

            @Override
            public void refusedBy(long peerId, String reason) {
            }
        };
    }
}
