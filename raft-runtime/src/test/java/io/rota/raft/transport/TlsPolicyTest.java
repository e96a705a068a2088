package io.rota.raft.transport;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.ssl.SslHandler;
import io.rota.testkit.TestCertificates;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Issue 33, item 8: etcd's TLS knobs as {@link TlsContexts} applies them at the handshake — the cipher-suite
 * list, the version range, the allowed client CN and host name, and a CRL (reloaded when its file changes).
 * A server context of the CA "ca" with client certificates required shakes hands with a client context
 * in memory (two EmbeddedChannels), as the client, etcd, HTTP and peer ports all build theirs.
 */
class TlsPolicyTest {

    private static final String SUITE_128 = "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256";
    private static final String SUITE_256 = "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384";

    @TempDir
    Path dir;
    private TestCertificates.Ca ca;
    private TestCertificates.Pair server;

    @BeforeEach
    void certificates() {
        String missing = TestCertificates.unavailable();
        assumeTrue(missing == null, () -> "SKIPPED: TLS tests need openssl to make certificates: " + missing);
        ca = TestCertificates.ca(dir, "ca");
        server = ca.issue("server", List.of("localhost"), List.of("127.0.0.1"));
    }

    @Test
    void aCipherSuiteOutsideTheListIsNotNegotiated() {
        TlsPolicy onlyAes128 = policy(List.of(SUITE_128), "TLS1.2", "TLS1.2", null, null, null);
        TlsPolicy onlyAes256 = policy(List.of(SUITE_256), "TLS1.2", "TLS1.2", null, null, null);
        TestCertificates.Pair alice = ca.issue("alice", List.of(), List.of());

        assertFalse(handshake(serverTls(onlyAes128), clientTls(alice, onlyAes256)), "no suite in common");
        assertTrue(handshake(serverTls(onlyAes128), clientTls(alice, onlyAes128)));
    }

    @Test
    void aTls12OnlyClientIsRefusedWithMinimumTls13() {
        TestCertificates.Pair alice = ca.issue("alice", List.of(), List.of());
        TlsPolicy tls13 = policy(List.of(), "TLS1.3", "TLS1.3", null, null, null);
        TlsPolicy tls12 = policy(List.of(), "TLS1.2", "TLS1.2", null, null, null);

        assertFalse(handshake(serverTls(tls13), clientTls(alice, tls12)));
        assertTrue(handshake(serverTls(tls13), clientTls(alice, TlsPolicy.DEFAULT)));
    }

    @Test
    void anUnknownSuiteOrVersionIsRefusedNamingIt() {
        IllegalArgumentException suite = assertThrows(IllegalArgumentException.class,
                () -> policy(List.of("TLS_NOT_A_SUITE"), "TLS1.2", "TLS1.3", null, null, null));
        assertTrue(suite.getMessage().contains("TLS_NOT_A_SUITE"), suite.getMessage());
        IllegalArgumentException version = assertThrows(IllegalArgumentException.class,
                () -> policy(List.of(), "TLS1.1", "TLS1.3", null, null, null));
        assertTrue(version.getMessage().contains("TLS1.1"), version.getMessage());
    }

    @Test
    void aClientCertificateWithAnotherCnThanTheAllowedOneIsRefused() {
        TlsPolicy onlyAlice = policy(List.of(), "TLS1.2", "TLS1.3", null, "alice", null);

        assertFalse(handshake(serverTls(onlyAlice), clientTls(ca.issue("bob", List.of(), List.of()), TlsPolicy.DEFAULT)));
        assertTrue(handshake(serverTls(onlyAlice), clientTls(ca.issue("alice", List.of(), List.of()), TlsPolicy.DEFAULT)));
    }

    @Test
    void aClientCertificateWithoutTheAllowedHostnameIsRefused() {
        TlsPolicy onlyApp = policy(List.of(), "TLS1.2", "TLS1.3", null, null, "app.example.com");

        assertFalse(handshake(serverTls(onlyApp), clientTls(ca.issue("other", List.of("other.example.com"), List.of()),
                TlsPolicy.DEFAULT)));
        assertTrue(handshake(serverTls(onlyApp), clientTls(ca.issue("app", List.of("app.example.com"), List.of()),
                TlsPolicy.DEFAULT)));
    }

    @Test
    void aRevokedCertificateIsRefusedAndANewCrlIsLoadedWhenItsFileChanges() throws Exception {
        TestCertificates.Pair alice = ca.issue("alice", List.of(), List.of());
        TestCertificates.Pair bob = ca.issue("bob", List.of(), List.of());
        Path crl = dir.resolve("crl.pem");
        revoke(List.of(), crl);   // an empty CRL first
        TlsPolicy withCrl = policy(List.of(), "TLS1.2", "TLS1.3", crl, null, null);
        try (TlsContexts serverTls = serverTls(withCrl)) {
            assertTrue(handshake(serverTls, clientTls(bob, TlsPolicy.DEFAULT)), "not revoked yet");

            revoke(List.of(bob), crl);
            serverTls.reloadIfChanged();

            assertFalse(handshake(serverTls, clientTls(bob, TlsPolicy.DEFAULT)), "revoked");
            assertTrue(handshake(serverTls, clientTls(alice, TlsPolicy.DEFAULT)), "others still accepted");
        }
    }

    @Test
    void aRevokedPeerCertificateIsRefusedOnBothSides() throws Exception {
        TestCertificates.Pair n1 = ca.issue("n1", List.of(), List.of());
        TestCertificates.Pair n2 = ca.issue("n2", List.of(), List.of());
        Path crl = dir.resolve("peer-crl.pem");
        revoke(List.of(n2), crl);
        TlsPolicy peer = new TlsPolicy(List.of(), "TLS1.2", "TLS1.3", crl, null, null, true);

        TlsContexts n1Tls = TlsContexts.load(new TlsFiles(n1.cert(), n1.key(), ca.cert(), true, TlsProvider.JDK, peer),
                List.of(), false, "peer port");
        TlsContexts n2Tls = TlsContexts.load(new TlsFiles(n2.cert(), n2.key(), ca.cert(), true, TlsProvider.JDK, peer),
                List.of(), false, "peer port");

        assertFalse(handshake(n1Tls.server(), n2Tls.client()), "n1 accepting revoked n2");
        assertFalse(handshake(n2Tls.server(), n1Tls.client()), "n1 dialling revoked n2");
    }

    @Test
    void aPeerCertificateWithoutTheAllowedCnIsRefusedOnBothSides() {
        TestCertificates.Pair member = ca.issue("n1", "member", List.of("n1"), List.of());
        TestCertificates.Pair other = ca.issue("n2", "not-a-member", List.of("n2"), List.of());
        TlsPolicy peer = new TlsPolicy(List.of(), "TLSv1.2", "TLSv1.3", null, "member", null, true);
        TlsContexts good = TlsContexts.load(new TlsFiles(member.cert(), member.key(), ca.cert(), true, TlsProvider.JDK,
                peer), List.of(), false, "peer port");
        TlsContexts bad = TlsContexts.load(new TlsFiles(other.cert(), other.key(), ca.cert(), true, TlsProvider.JDK,
                peer), List.of(), false, "peer port");

        assertFalse(handshake(good.server(), bad.client()), "accepting a peer without the CN");
        assertFalse(handshake(bad.server(), good.client()), "dialling a peer without the CN");
        assertTrue(handshake(good.server(), good.client()));
    }

    @Test
    void aCrlOfAnotherCaIsRefusedNamingTheFile() throws Exception {
        TestCertificates.Ca other = TestCertificates.ca(dir.resolve("other"), "other-ca");
        Path crl = dir.resolve("other-crl.pem");
        gencrl(other, List.of(), crl);
        TlsPolicy withCrl = policy(List.of(), "TLS1.2", "TLS1.3", crl, null, null);

        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> serverTls(withCrl));
        assertTrue(e.getMessage().contains(crl.toString()), e.getMessage());
    }

    // --- helpers

    private static TlsPolicy policy(List<String> suites, String min, String max, Path crl, String cn, String host) {
        return new TlsPolicy(suites, TlsPolicy.version(min, "minimum"), TlsPolicy.version(max, "maximum"), crl, cn,
                host, false);
    }

    private TlsContexts serverTls(TlsPolicy policy) {
        return TlsContexts.load(new TlsFiles(server.cert(), server.key(), ca.cert(), true, TlsProvider.JDK, policy),
                List.of(), true, "test port");
    }

    private TlsContexts clientTls(TestCertificates.Pair pair, TlsPolicy policy) {
        return TlsContexts.load(new TlsFiles(pair.cert(), pair.key(), ca.cert(), false, TlsProvider.JDK, policy),
                List.of(), false, "test client");
    }

    private static boolean handshake(TlsContexts serverTls, TlsContexts clientTls) {
        return handshake(serverTls.server(), clientTls.client());
    }

    /** Whether both sides complete a TLS handshake, bytes carried in memory. */
    private static boolean handshake(io.netty.handler.ssl.SslContext server, io.netty.handler.ssl.SslContext client) {
        SslHandler s = server.newHandler(ByteBufAllocator.DEFAULT);
        SslHandler c = client.newHandler(ByteBufAllocator.DEFAULT, "localhost", 443);
        EmbeddedChannel serverSide = new EmbeddedChannel(s);
        EmbeddedChannel clientSide = new EmbeddedChannel(c);
        for (int rounds = 0; rounds < 100 && (shuttle(clientSide, serverSide) | shuttle(serverSide, clientSide)); rounds++) {
            serverSide.runPendingTasks();
            clientSide.runPendingTasks();
        }
        boolean ok = s.handshakeFuture().isSuccess() && c.handshakeFuture().isSuccess();
        serverSide.finishAndReleaseAll();
        clientSide.finishAndReleaseAll();
        return ok;
    }

    private static boolean shuttle(EmbeddedChannel from, EmbeddedChannel to) {
        boolean moved = false;
        for (ByteBuf bytes; (bytes = from.readOutbound()) != null; moved = true) {
            if (to.isOpen()) {
                try {
                    to.writeInbound(bytes);
                } catch (RuntimeException handshakeFailed) {
                    // the failure is in the handler's future
                }
            } else {
                bytes.release();
            }
        }
        return moved;
    }

    /** Writes a CRL of {@link #ca} revoking {@code revoked} to {@code out}. */
    private void revoke(List<TestCertificates.Pair> revoked, Path out) throws Exception {
        gencrl(ca, revoked, out);
    }

    private static void gencrl(TestCertificates.Ca ca, List<TestCertificates.Pair> revoked, Path out) throws Exception {
        Path db = Files.createTempDirectory(ca.dir(), "crl-db");
        Files.writeString(db.resolve("index.txt"), "");
        Files.writeString(db.resolve("crlnumber"), "01\n");
        Path config = db.resolve("ca.cnf");
        Files.writeString(config, "[ ca ]\ndefault_ca = rota\n[ rota ]\ndatabase = " + db.resolve("index.txt")
                + "\ncrlnumber = " + db.resolve("crlnumber") + "\ndefault_md = sha256\ndefault_crl_days = 2\n",
                StandardCharsets.US_ASCII);
        for (TestCertificates.Pair pair : revoked) {
            openssl("ca", "-config", config.toString(), "-keyfile", ca.key().toString(), "-cert", ca.cert().toString(),
                    "-revoke", pair.cert().toString());
        }
        openssl("ca", "-config", config.toString(), "-keyfile", ca.key().toString(), "-cert", ca.cert().toString(),
                "-gencrl", "-out", out.toString());
    }

    private static void openssl(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("openssl"));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS), "openssl did not finish");
        assertEquals(0, p.exitValue(), "openssl " + String.join(" ", args) + ": " + output);
    }
}
