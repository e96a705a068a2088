package io.rota.raft.transport;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.embedded.EmbeddedChannel;
import io.rota.proto.PeerHandshake;
import io.rota.proto.RaftMessage;
import io.rota.raft.core.Message;
import io.rota.testkit.TestCertificates;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The pipeline of {@link PeerChannelInitializer} without sockets: what the handshake lets through and what
 * closes a connection. Node 2 of cluster "rota-test" knows peers 1 and 3.
 *
 * <p>Issue 30, "nothing a peer says counts before it is known": a refusal stops a fresh member, so in the
 * handshake it is reported only on the dialling side, from the node dialled, in this cluster and protocol,
 * under mutual TLS with a certificate naming that member (only the acceptor refuses there); after the
 * handshake, only from the peer it authenticated. Any other refusal closes the connection, never reported.
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

    @Test
    @DisplayName("issue 13: the node this side dialled refuses it in the handshake: reported")
    void aRefusalFromTheDialledNodeIsReported() {
        EmbeddedChannel channel = new EmbeddedChannel(PeerChannelInitializer.dialling(config, 3, events));
        readFrame(channel);
        channel.writeInbound(frame(refusal(CLUSTER, 3, HandshakeHandler.PROTOCOL_VERSION)));
        assertFalse(channel.isOpen());
        assertEquals(List.of("3: member 2 has joined already"), events.refusedBy);
    }

    @Test
    @DisplayName("issue 30: a refusal with another cluster id is not reported")
    void aRefusalWithAnotherClusterIdIsNotReported() {
        EmbeddedChannel channel = new EmbeddedChannel(PeerChannelInitializer.dialling(config, 3, events));
        readFrame(channel);
        channel.writeInbound(frame(refusal("other-cluster", 3, HandshakeHandler.PROTOCOL_VERSION)));
        assertRefusalIgnored(channel);
    }

    @Test
    @DisplayName("issue 30: a refusal with another protocol version is not reported")
    void aRefusalWithAnotherProtocolVersionIsNotReported() {
        EmbeddedChannel channel = new EmbeddedChannel(PeerChannelInitializer.dialling(config, 3, events));
        readFrame(channel);
        channel.writeInbound(frame(refusal(CLUSTER, 3, 99)));
        assertRefusalIgnored(channel);
    }

    @ParameterizedTest(name = "node {0}")
    @ValueSource(longs = {9, 1})
    @DisplayName("issue 30: a refusal from a node this side did not dial (unknown 9, or known 1) is not reported")
    void aRefusalFromANodeThisSideDidNotDialIsNotReported(long sender) {
        EmbeddedChannel channel = new EmbeddedChannel(PeerChannelInitializer.dialling(config, 3, events));
        readFrame(channel);
        channel.writeInbound(frame(refusal(CLUSTER, sender, HandshakeHandler.PROTOCOL_VERSION)));
        assertRefusalIgnored(channel);
    }

    @Test
    @DisplayName("issue 30: a refusal arriving at the accepting side in the handshake is not reported")
    void aRefusalArrivingAtTheAcceptingSideIsNotReported() {
        EmbeddedChannel channel = acceptor();
        channel.writeInbound(frame(refusal(CLUSTER, 1, HandshakeHandler.PROTOCOL_VERSION)));
        assertRefusalIgnored(channel);
    }

    @Test
    @DisplayName("issue 30: after the handshake, a refusal naming another node than the peer is not reported")
    void aRefusalAfterTheHandshakeNamingAnotherNodeIsNotReported() {
        EmbeddedChannel channel = acceptor();
        channel.writeInbound(frame(handshake(CLUSTER, 1)));
        channel.writeInbound(frame(refusal(CLUSTER, 3, HandshakeHandler.PROTOCOL_VERSION)));
        assertFalse(channel.isOpen());
        assertTrue(events.refusedBy.isEmpty(), "reported: " + events.refusedBy);
    }

    @Test
    @DisplayName("issue 30: after the handshake, a refusal with another cluster id is not reported")
    void aRefusalAfterTheHandshakeWithAnotherClusterIdIsNotReported() {
        EmbeddedChannel channel = acceptor();
        channel.writeInbound(frame(handshake(CLUSTER, 1)));
        channel.writeInbound(frame(refusal("other-cluster", 1, HandshakeHandler.PROTOCOL_VERSION)));
        assertFalse(channel.isOpen());
        assertTrue(events.refusedBy.isEmpty(), "reported: " + events.refusedBy);
    }

    @Test
    @DisplayName("issue 30: under mutual TLS, a refusal whose certificate names another member is not reported")
    void underMutualTlsARefusalWhoseCertificateNamesAnotherMemberIsNotReported(@TempDir Path dir) {
        EmbeddedChannel channel = refusalOverMutualTls(dir, "n1");
        assertFalse(channel.isOpen());
        assertTrue(events.refusedBy.isEmpty(), "reported: " + events.refusedBy);
    }

    @Test
    @DisplayName("issue 13 under mutual TLS: a refusal from the dialled member, named by its certificate, is reported")
    void underMutualTlsARefusalFromTheDialledMemberIsReported(@TempDir Path dir) {
        EmbeddedChannel channel = refusalOverMutualTls(dir, "n3");
        assertFalse(channel.isOpen());
        assertEquals(List.of("3: member 2 has joined already"), events.refusedBy);
    }

    // --- helpers

    private void assertRefusalIgnored(EmbeddedChannel channel) {
        assertRefused(channel);
        assertTrue(events.refusedBy.isEmpty(), "reported: " + events.refusedBy);
    }

    /**
     * This node (2, certificate "n2") dials node 3 over mutual TLS; the far end is a bare TLS server of the same
     * CA whose certificate names {@code acceptorName}, and answers with a refusal from node 3. Member i's name
     * is {@code n<i>}. Returns the dialler's channel once neither side has more to say.
     */
    private EmbeddedChannel refusalOverMutualTls(Path dir, String acceptorName) {
        String missing = TestCertificates.unavailable();
        assumeTrue(missing == null, () -> "SKIPPED: TLS tests need openssl to make certificates: " + missing);
        TestCertificates.Ca ca = TestCertificates.ca(dir, "cluster-ca");
        try (TlsContexts dialler = memberTls(ca, "n2"); TlsContexts acceptor = memberTls(ca, acceptorName)) {
            EmbeddedChannel near = new EmbeddedChannel(PeerChannelInitializer.dialling(config, 3, events,
                    PeerAdmission.OPEN, dialler, PeerIdentity.byMemberName(member -> "n" + member)));
            EmbeddedChannel far = new EmbeddedChannel(acceptor.server().newHandler(ByteBufAllocator.DEFAULT));
            far.writeOutbound(frame(refusal(CLUSTER, 3, HandshakeHandler.PROTOCOL_VERSION)));
            for (boolean moved = true; moved; ) {
                moved = shuttle(near, far) | shuttle(far, near);
            }
            far.finishAndReleaseAll();
            return near;
        }
    }

    /** Hands what {@code from} wrote to {@code to} (dropped once {@code to} is closed); whether there was any. */
    private static boolean shuttle(EmbeddedChannel from, EmbeddedChannel to) {
        boolean moved = false;
        for (ByteBuf bytes; (bytes = from.readOutbound()) != null; moved = true) {
            if (to.isOpen()) {
                to.writeInbound(bytes);
            } else {
                bytes.release();
            }
        }
        from.runPendingTasks();
        return moved;
    }

    private static TlsContexts memberTls(TestCertificates.Ca ca, String name) {
        TestCertificates.Pair pair = ca.issue(name, List.of(name), List.of("127.0.0.1"));
        return TlsContexts.load(new TlsFiles(pair.cert(), pair.key(), ca.cert(), true, TlsProvider.JDK), List.of(),
                false, "peer port");
    }

    static RaftMessage refusal(String clusterId, long nodeId, int protocolVersion) {
        return RaftMessage.newBuilder().setHandshake(PeerHandshake.newBuilder().setClusterId(clusterId)
                .setNodeId(nodeId).setProtocolVersion(protocolVersion).setRefusal("member 2 has joined already"))
                .build();
    }


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
