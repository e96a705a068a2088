package io.rota.raft.transport;

import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.rota.proto.PeerHandshake;
import io.rota.proto.RaftMessage;
import io.rota.raft.core.LogText;
import io.rota.testkit.TestCertificates;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static io.rota.raft.transport.HandshakeHandlerTest.frame;
import static io.rota.raft.transport.HandshakeHandlerTest.handshake;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Issue 33, item 4 on the peer port (before a peer is known it may cost little) and item 8's peer identity
 * details (IP SANs are not member names, the last CN counts, what a peer says is logged escaped).
 */
class PeerPortLimitsTest {

    private static final String CLUSTER = "rota-test";

    /** Node 2 of peers 1 and 3, full-size frames (8 MiB) and a handshake deadline no test reaches. */
    private final TransportConfig config = TransportConfig.builder(CLUSTER, 2, new InetSocketAddress("127.0.0.1", 0))
            .peers(Map.of(1L, new InetSocketAddress("127.0.0.1", 7001), 3L, new InetSocketAddress("127.0.0.1", 7003)))
            .connectTimeout(Duration.ofMinutes(5))
            .maxPendingHandshakes(2)
            .build();
    private final HandshakeHandlerTest.RecordingEvents events = new HandshakeHandlerTest.RecordingEvents();

    @Test
    void aLargeFrameBeforeTheHandshakeClosesTheConnectionAsSoonAsItsLengthIsRead() {
        EmbeddedChannel channel = new EmbeddedChannel(PeerChannelInitializer.accepting(config, events));

        // A 1 MiB frame (well within the 8 MiB limit after a handshake): its length and a first kilobyte.
        channel.writeInbound(Unpooled.buffer().writeInt(1 << 20).writeBytes(new byte[1024]));

        assertFalse(channel.isOpen(), "closed at the length, without waiting for (and buffering) the frame");
        assertTrue(events.connected.isEmpty());
    }

    @Test
    void afterTheHandshakeAFullSizeFrameIsAwaited() {
        EmbeddedChannel channel = new EmbeddedChannel(PeerChannelInitializer.accepting(config, events));
        channel.writeInbound(frame(handshake(CLUSTER, 1)));
        assertEquals(List.of(1L), events.connected);

        channel.writeInbound(Unpooled.buffer().writeInt(1 << 20).writeBytes(new byte[1024]));

        assertTrue(channel.isOpen(), "a peer's 1 MiB AppendEntries is normal traffic");
        channel.finishAndReleaseAll();
    }

    @Test
    void pastTheCapOfPendingHandshakesANewConnectionIsClosedAndAHandshakeFreesAPlace() {
        PeerChannelInitializer initializer = PeerChannelInitializer.accepting(config, events);
        EmbeddedChannel first = new EmbeddedChannel(initializer);
        EmbeddedChannel second = new EmbeddedChannel(initializer);
        EmbeddedChannel third = new EmbeddedChannel(initializer);

        assertTrue(first.isOpen());
        assertTrue(second.isOpen());
        assertFalse(third.isOpen(), "a third silent stranger while two wait");
        assertEquals(2, initializer.pendingHandshakes());

        first.writeInbound(frame(handshake(CLUSTER, 1)));
        assertEquals(1, initializer.pendingHandshakes(), "a completed handshake no longer counts");
        second.close();
        assertEquals(0, initializer.pendingHandshakes(), "nor does a closed connection");
        EmbeddedChannel fourth = new EmbeddedChannel(initializer);
        assertTrue(fourth.isOpen());
        assertTrue(first.isOpen(), "the authenticated connection is untouched");
        first.finishAndReleaseAll();
        fourth.finishAndReleaseAll();
    }

    @Test
    void aClusterIdWithANewlineIsEscapedInTheRefusal() {
        RaftMessage forged = RaftMessage.newBuilder().setHandshake(PeerHandshake.newBuilder()
                .setClusterId("x\n2026-12-07 INFO forged line\u001b[0m").setNodeId(1)
                .setProtocolVersion(HandshakeHandler.PROTOCOL_VERSION)).build();

        String refusal = HandshakeHandler.checkCommon(config, forged.getHandshake());

        assertNotNull(refusal);
        assertFalse(refusal.contains("\n") || refusal.contains("\u001b"), refusal);
        assertTrue(refusal.contains("x\\n2026-12-07 INFO forged line\\u001b[0m"), refusal);
    }

    @Test
    void aRefusalTextIsLoggedEscaped() {
        ch.qos.logback.classic.Logger capture = (ch.qos.logback.classic.Logger)
                org.slf4j.LoggerFactory.getLogger(PeerPortLimitsTest.class.getName() + ".capture");
        ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> appender =
                new ch.qos.logback.core.read.ListAppender<>();
        appender.start();
        capture.addAppender(appender);
        EmbeddedChannel channel = new EmbeddedChannel(new io.netty.channel.ChannelInboundHandlerAdapter());

        HandshakeHandler.refusedBy(channel.pipeline().firstContext(), events, capture, 3, "no\nERROR forged");

        List<String> lines = appender.list.stream().map(e -> e.getFormattedMessage()).toList();
        assertEquals(List.of("Peer 3 refused this node: no\\nERROR forged"), lines);
    }

    @Test
    void logTextEscapesControlCharactersAndCutsLongText() {
        assertEquals("a\\nb\\r\\tc\\\\d\\u0000\\u007f", LogText.escape("a\nb\r\tc\\d\u0000\u007f"));
        assertEquals("null", LogText.escape(null));
        String cut = LogText.escape("y".repeat(LogText.MAX_CHARS + 10));
        assertTrue(cut.endsWith("...(10 more chars)"), cut);
    }

    @Test
    void anIpSanEqualToTheMemberNameIsNotAMemberName(@TempDir Path dir) {
        TestCertificates.Ca ca = ca(dir);
        TestCertificates.Pair pair = ca.issue("ip-only", "someone-else", List.of(), List.of("10.0.0.7"));
        X509Certificate leaf = TlsContexts.certificates(pair.cert(), "test").get(0);

        String refusal = PeerIdentity.byMemberName(id -> "10.0.0.7").refuse(1, leaf);

        assertNotNull(refusal, "a member named like an address must not be matched by an IP SAN");
        assertTrue(refusal.contains("CN or DNS SAN"), refusal);
    }

    @Test
    void withTwoCommonNamesTheLastCounts(@TempDir Path dir) {
        TestCertificates.Ca ca = ca(dir);
        TestCertificates.Pair pair = ca.issue("two-cns", "first/CN=n1", List.of(), List.of());
        X509Certificate leaf = TlsContexts.certificates(pair.cert(), "test").get(0);

        assertEquals("n1", TlsContexts.commonName(leaf));
        assertNull(PeerIdentity.byMemberName(id -> "n1").refuse(1, leaf));
        assertNotNull(PeerIdentity.byMemberName(id -> "first").refuse(1, leaf));
    }

    private static TestCertificates.Ca ca(Path dir) {
        String missing = TestCertificates.unavailable();
        assumeTrue(missing == null, () -> "SKIPPED: TLS tests need openssl to make certificates: " + missing);
        return TestCertificates.ca(dir, "peer-ca");
    }
}
