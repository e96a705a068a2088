package io.rota.raft.transport;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.rota.raft.core.Message;
import io.rota.testkit.Await;
import io.rota.testkit.TestCertificates;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Mutual TLS on the peer port over loopback sockets: members of one CA whose certificates name them connect;
 * a certificate of another CA, or one that names another member than the id claimed, is refused with a log
 * line saying why (design X2). Member i's name is {@code n<i>}.
 */
class PeerTlsTest {

    private static final String CLUSTER = "rota-test";
    private static final Duration TIMEOUT = Duration.ofSeconds(20);

    @TempDir
    Path dir;

    private final List<NettyPeerTransport> transports = new ArrayList<>();
    private final List<TlsContexts> contexts = new ArrayList<>();
    private final ListAppender<ILoggingEvent> handshakeLog = new ListAppender<>();
    private TestCertificates.Ca ca;

    @BeforeEach
    void certificates() {
        String missing = TestCertificates.unavailable();
        assumeTrue(missing == null, () -> "SKIPPED: TLS tests need openssl to make certificates: " + missing);
        ca = TestCertificates.ca(dir, "cluster-ca");
        handshakeLog.start();
        ((Logger) LoggerFactory.getLogger(HandshakeHandler.class)).addAppender(handshakeLog);
    }

    @AfterEach
    void stop() {
        ((Logger) LoggerFactory.getLogger(HandshakeHandler.class)).detachAppender(handshakeLog);
        transports.forEach(NettyPeerTransport::close);
        contexts.forEach(TlsContexts::close);
    }

    @Test
    void membersOfTheClusterCaConnectAndExchangeMessages() {
        Queue<Message> received2 = new ConcurrentLinkedQueue<>();
        NettyPeerTransport n1 = start(1, member(ca, "n1"), new ConcurrentLinkedQueue<>());
        NettyPeerTransport n2 = start(2, member(ca, "n2"), received2);
        introduce(n1, 1, n2, 2);

        Message.TimeoutNow message = new Message.TimeoutNow(3, 1, 2);
        assertTrue(n1.send(message));
        Await.until(TIMEOUT, () -> received2.contains(message), "n2 received n1's message over mutual TLS");
    }

    @Test
    void aPeerWithACertificateOfAnotherCaIsRefused() {
        TestCertificates.Ca other = TestCertificates.ca(dir.resolve("other"), "other-ca");
        NettyPeerTransport n1 = start(1, member(other, "n1"), new ConcurrentLinkedQueue<>());
        NettyPeerTransport n2 = start(2, member(ca, "n2"), new ConcurrentLinkedQueue<>());
        introduce(n1, 1, n2, 2);
        n1.send(new Message.TimeoutNow(3, 1, 2));

        String line = awaitRefusal("TLS handshake failed");
        assertTrue(n2.connectedPeers().isEmpty() && n1.connectedPeers().isEmpty(),
                "no connection after the refusal: " + line);
    }

    @Test
    void aPeerClaimingAnotherMembersIdIsRefused() {
        // n1 holds a good certificate of the cluster CA, but it names n3: it cannot speak as member 1.
        NettyPeerTransport n1 = start(1, member(ca, "n3"), new ConcurrentLinkedQueue<>());
        NettyPeerTransport n2 = start(2, member(ca, "n2"), new ConcurrentLinkedQueue<>());
        introduce(n1, 1, n2, 2);
        n1.send(new Message.TimeoutNow(3, 1, 2));

        String line = awaitRefusal("claims to be member 1");
        assertTrue(line.contains("(n1)") && line.contains("CN=n3"), "the line names both identities: " + line);
        assertEquals(0, n2.connectedPeers().size(), "n2 admitted the impostor");
    }

    private String awaitRefusal(String text) {
        Await.until(TIMEOUT, () -> refusal(text) != null, "a refusal line containing '" + text + "'");
        return refusal(text);
    }

    private String refusal(String text) {
        for (ILoggingEvent e : List.copyOf(handshakeLog.list)) {
            if (e.getFormattedMessage().contains(text)) {
                return e.getFormattedMessage();
            }
        }
        return null;
    }

    /** Member files of {@code issuer} for a certificate named {@code name} (CN and DNS SAN), trusting {@link #ca}. */
    private TlsFiles member(TestCertificates.Ca issuer, String name) {
        TestCertificates.Pair pair = issuer.issue(name + "-" + issuer.cert().getFileName(), name, List.of(name),
                List.of("127.0.0.1"));
        return new TlsFiles(pair.cert(), pair.key(), ca.cert(), true, TlsProvider.JDK);
    }

    private NettyPeerTransport start(long id, TlsFiles files, Queue<Message> received) {
        TransportConfig config = TransportConfig.builder(CLUSTER, id, new InetSocketAddress("127.0.0.1", 0))
                .reconnectBackoff(Duration.ofMillis(20), Duration.ofMillis(200)).connectTimeout(Duration.ofSeconds(2))
                .build();
        NettyPeerTransport t = new NettyPeerTransport(config);
        TlsContexts tls = TlsContexts.load(files, List.of(), false, "peer port");
        contexts.add(tls);
        t.setTls(tls, PeerIdentity.byMemberName(member -> "n" + member));
        t.start(received::add, peer -> { });
        transports.add(t);
        return t;
    }

    private static void introduce(NettyPeerTransport a, long aId, NettyPeerTransport b, long bId) {
        a.addPeer(bId, b.localAddress());
        b.addPeer(aId, a.localAddress());
    }
}
