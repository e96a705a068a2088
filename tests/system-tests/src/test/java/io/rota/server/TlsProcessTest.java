package io.rota.server;

import io.rota.client.RotaClient;
import io.rota.client.RotaException;
import io.rota.client.TlsOptions;
import io.rota.testkit.Await;
import io.rota.testkit.ProcessCluster;
import io.rota.testkit.TestCertificates;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Transport security on real member processes (docs/security.md): three members with TLS on the client port
 * ({@code --client-cert-auth}) and mutual TLS between them. One cluster for every check, to keep the default
 * suite short: writes through every member (a follower forwards to the leader over TLS), rotactl with
 * {@code --cacert --cert --key}, a client without a certificate and one with a certificate of another CA
 * refused (and logged), the HTTP port speaking HTTPS (/health and /metrics to anyone with the CA, the rest
 * only with a client certificate, plaintext refused), and a client port certificate rotated without a
 * restart; and two impostor member processes on the peer port (a certificate of another CA, and one of the
 * cluster CA claiming another member's id) refused with a log line, as PeerTlsTest shows on bare transports.
 */
@Tag("process")
class TlsProcessTest {

    private static final Duration DEADLINE = Duration.ofSeconds(30);

    @TempDir
    Path dir;

    @Test
    void tlsClusterServesItsClientsRefusesStrangersAndRotatesCertificates() throws Exception {
        String missing = TlsCluster.unavailable();
        assumeTrue(missing == null, () -> "SKIPPED: TLS process tests need openssl to make certificates: " + missing);
        TlsCluster certs = new TlsCluster(dir.resolve("tls"));
        // Members 0-2 are the cluster; members added later are the impostors below, with their own flags.
        Map<Integer, List<String>> impostorFlags = new java.util.concurrent.ConcurrentHashMap<>();
        try (ProcessCluster cluster = ProcessCluster.prepare(dir, 3, null)
                .memberArgs(i -> i < 3 ? certs.memberFlags(i) : impostorFlags.get(i))) {
            cluster.startAll();
            cluster.awaitLeader();

            // Every member takes a write: a follower forwards it to the leader's TLS client port.
            try (RotaClient rota = RotaClient.builder().endpoints(cluster.endpoints()).tls(certs.clientOptions())
                    .callTimeout(DEADLINE).build()) {
                for (int i = 0; i < 3; i++) {
                    try (RotaClient viaOne = RotaClient.builder().endpoints(cluster.endpoint(i))
                            .tls(certs.clientOptions()).callTimeout(DEADLINE).build()) {
                        viaOne.kv().put("tls/" + i, "v" + i);
                    }
                }
                assertEquals("v2", rota.kv().get("tls/2").first().orElseThrow().valueString());
            }

            // rotactl's global TLS flags, a round trip.
            List<String> tls = List.of("--cacert", certs.ca.cert().toString(), "--cert", certs.client.cert().toString(),
                    "--key", certs.client.key().toString());
            RotactlRunner.Run put = rotactl(cluster, tls, "put", "tls/rotactl", "hello");
            assertEquals(0, put.exitCode(), put.err());
            RotactlRunner.Run get = rotactl(cluster, tls, "get", "tls/rotactl", "--print-value-only");
            assertEquals("hello", get.out().trim(), get.err());

            // No client certificate: the handshake fails, the call fails at once, the member logs why.
            RotaException noCert = assertThrows(RotaException.class, () -> call(cluster,
                    TlsOptions.builder().trustedCaFile(certs.ca.cert()).build()));
            assertTrue(noCert.getMessage().contains(cluster.endpoint(0)), noCert.getMessage());
            awaitLog(cluster, "Refusing client", "certificate");

            // A certificate of another CA: refused the same way.
            TestCertificates.Ca other = TestCertificates.ca(dir.resolve("other"), "other-ca");
            TestCertificates.Pair intruder = other.issue("intruder", TlsCluster.CLIENT_CN, List.of(), List.of());
            assertThrows(RotaException.class, () -> call(cluster, TlsOptions.builder().trustedCaFile(certs.ca.cert())
                    .clientCertificate(intruder.cert(), intruder.key()).build()));

            // Impostors on the peer port, as real processes (§ mutual TLS, docs/security.md): a member process
            // whose peer certificate comes from another CA, and one whose certificate is the cluster CA's but
            // names the impostor itself (n5) while it claims to be member 2 (it is second in its --initial-cluster).
            // Both are refused with a line that says why; the cluster keeps serving.
            TestCertificates.Pair strangerPeer = other.issue("stranger-peer", "n4", List.of("n4", "localhost"),
                    List.of("127.0.0.1"));
            int stranger = impostor(cluster, impostorFlags, strangerPeer, other.cert());
            // Of two members the lower id dials, so an impostor claiming id 2 dials n3: n3 refuses it and says why.
            awaitLog(cluster, 2, "Refusing peer connection", "TLS handshake failed", "the dialler's certificate was refused");
            cluster.kill(stranger);
            String own = ProcessCluster.name(cluster.size());   // the name the next member process starts under
            TestCertificates.Pair ownCert = certs.ca.issue(own, own, List.of(own, "localhost"), List.of("127.0.0.1"));
            int claimant = impostor(cluster, impostorFlags, ownCert, certs.ca.cert());
            try {
                awaitLog(cluster, 2, "Refusing peer connection", "claims to be member 2", "(n2)", "CN=" + own);
            } catch (AssertionError e) {
                throw new AssertionError(e.getMessage() + "; the impostor's log:\n"
                        + String.join("\n", Files.readAllLines(cluster.logFile(claimant), StandardCharsets.UTF_8)), e);
            }
            cluster.kill(claimant);
            try (RotaClient viaN1 = RotaClient.builder().endpoints(cluster.endpoint(0)).tls(certs.clientOptions())
                    .callTimeout(DEADLINE).build()) {
                viaN1.kv().put("tls/after-impostors", "ok");
                assertEquals("ok", viaN1.kv().get("tls/after-impostors").first().orElseThrow().valueString());
            }

            // The HTTP port is HTTPS with the member's client-port certificate: probes need only the CA for
            // /health and /metrics; status and the dashboard need a client certificate; plaintext gets nothing.
            int http = cluster.httpPort(0);
            assertEquals(200, certs.httpsGetStatus(http, "/health", false));
            assertEquals(200, certs.httpsGetStatus(http, "/metrics", false));
            assertEquals(403, certs.httpsGetStatus(http, "/status", false));
            assertEquals(403, certs.httpsGetStatus(http, "/dashboard/state", false));
            assertEquals(200, certs.httpsGetStatus(http, "/status", true));
            assertEquals(0, ProcessCluster.httpGetOnPort(http, "/health").status(), "plaintext HTTP is refused");

            // Rotation: new files on n1's client port; new connections get the new certificate, no restart.
            int port = cluster.clientPort(0);
            String before = certs.servedSerial(port);
            TestCertificates.Pair next = certs.ca.issue("n1-next", "n1", List.of("n1", "localhost"),
                    List.of("127.0.0.1"));
            TlsCluster.copy(next.key(), certs.clientKeyFile(0));
            TlsCluster.copy(next.cert(), certs.clientCertFile(0));
            Await.until(DEADLINE, () -> next.serial().equals(served(certs, port)),
                    "n1's client port serves the rotated certificate " + next.serial());
            assertNotEquals(before, next.serial());
            awaitLog(cluster, "reloaded", next.serial());
            try (RotaClient viaN1 = RotaClient.builder().endpoints(cluster.endpoint(0)).tls(certs.clientOptions())
                    .callTimeout(DEADLINE).build()) {
                viaN1.kv().put("tls/after-rotation", "ok");
            }
            assertTrue(cluster.isAlive(0), "n1 kept running through the rotation");
        }
    }

    /**
     * Starts one more member process that dials n1 and n3 as member 2 (its --initial-cluster lists it second)
     * with {@code peer} as its peer certificate, trusting {@code trusted}; its index, to kill it by PID.
     */
    private static int impostor(ProcessCluster cluster, Map<Integer, List<String>> flags, TestCertificates.Pair peer,
                                 Path trusted) {
        int i = cluster.addMember();
        flags.put(i, List.of("--peer-cert-file", peer.cert().toString(), "--peer-key-file", peer.key().toString(),
                "--peer-trusted-ca-file", trusted.toString()));
        String initial = "n1=127.0.0.1:" + cluster.peerPort(0) + "," + ProcessCluster.name(i) + "=127.0.0.1:"
                + cluster.peerPort(i) + ",n3=127.0.0.1:" + cluster.peerPort(2);
        cluster.startMember(i, initial);
        return i;
    }

    private static void call(ProcessCluster cluster, TlsOptions options) {
        try (RotaClient c = RotaClient.builder().endpoints(cluster.endpoint(0)).tls(options)
                .callTimeout(Duration.ofSeconds(10)).build()) {
            c.kv().put("tls/stranger", "x");
        }
    }

    private static RotactlRunner.Run rotactl(ProcessCluster cluster, List<String> tls, String... args) {
        List<String> all = new java.util.ArrayList<>(List.of("--endpoints", cluster.endpoints(),
                "--command-timeout", "20s"));
        all.addAll(tls);
        all.addAll(List.of(args));
        return RotactlRunner.run(Map.of(), "", all.toArray(String[]::new));
    }

    /** Waits until member n1's log has a line holding every one of {@code parts}. */
    private static void awaitLog(ProcessCluster cluster, String... parts) {
        awaitLog(cluster, 0, parts);
    }

    /** Waits until member {@code i}'s log has a line holding every one of {@code parts}. */
    private static void awaitLog(ProcessCluster cluster, int i, String... parts) {
        Await.until(DEADLINE, () -> logLines(cluster, i).stream()
                .anyMatch(l -> java.util.Arrays.stream(parts).allMatch(l::contains)),
                ProcessCluster.name(i) + "'s log has a line with " + List.of(parts));
    }

    private static List<String> logLines(ProcessCluster cluster, int i) {
        try {
            return Files.readAllLines(cluster.logFile(i), StandardCharsets.UTF_8);
        } catch (java.io.IOException e) {
            return List.of();
        }
    }

    /** The serial a new connection is served, or null while the port does not answer. */
    private static String served(TlsCluster certs, int port) {
        try {
            return certs.servedSerial(port);
        } catch (java.io.IOException e) {
            return null;
        }
    }
}
