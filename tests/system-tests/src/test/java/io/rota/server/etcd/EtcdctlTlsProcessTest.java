package io.rota.server.etcd;

import io.rota.server.RotaServer;
import io.rota.server.ServerConfig;
import io.rota.server.ServerTls;
import io.rota.testkit.Await;
import io.rota.testkit.TestCertificates;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static io.rota.testkit.Ports.freePort;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * etcdctl against the etcd port of a member whose client port has TLS with {@code --client-cert-auth}: the
 * etcd port serves TLS with the same files, so etcdctl with {@code --cacert/--cert/--key} works, a plaintext
 * etcdctl and one without a client certificate are refused, and — with auth enabled — the certificate's CN
 * logs the client in as that user, as on the native port (design.md Y21). Skipped, saying so, without etcdctl
 * or openssl. A failsafe test: it runs etcdctl processes.
 */
@Tag("process")
class EtcdctlTlsProcessTest {

    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(30);

    @TempDir
    static Path dir;
    private static RotaServer server;
    private static String etcdctl;
    private static String endpoint;
    private static TestCertificates.Ca ca;
    private static TestCertificates.Pair root;
    private static TestCertificates.Pair erin;

    @BeforeAll
    static void start() {
        etcdctl = Stream.of(System.getenv().getOrDefault("PATH", "").split(File.pathSeparator))
                .map(p -> Path.of(p, "etcdctl")).filter(Files::isExecutable).map(Path::toString).findFirst().orElse(null);
        Assumptions.assumeTrue(etcdctl != null, "SKIPPED: etcdctl is not on the PATH; install it (Debian:"
                + " apt-get install etcd-client) to run etcd's own CLI against Rota's TLS etcd port");
        String noCerts = TestCertificates.unavailable();
        Assumptions.assumeTrue(noCerts == null, "SKIPPED: " + noCerts);
        ca = TestCertificates.ca(dir.resolve("pki"), "ca");
        TestCertificates.Pair member = ca.issue("n1", List.of("localhost"), List.of("127.0.0.1"));
        root = ca.issue("root", List.of(), List.of());
        erin = ca.issue("erin", List.of(), List.of());
        InetSocketAddress peer = new InetSocketAddress("127.0.0.1", freePort());
        int etcdPort = freePort();
        server = RotaServer.start(ServerConfig.builder("n1").dataDir(dir.resolve("n1"))
                .listenClient(new InetSocketAddress("127.0.0.1", 0)).listenPeer(peer)
                .initialCluster(Map.of("n1", peer)).clusterId("etcdctl-tls-test").heartbeatMs(50).electionMs(500)
                .tls(ServerTls.builder().clientPort(member.cert(), member.key()).trustedCaFile(ca.cert())
                        .clientCertAuth(true).build())
                .listenEtcd(new InetSocketAddress("127.0.0.1", etcdPort)).build());
        endpoint = "https://127.0.0.1:" + etcdPort;
        Await.until(Duration.ofSeconds(30), () -> server.view().isLeader(), "the member to lead");
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    record Result(int exit, String out) {
    }

    private static Result run(List<String> flags, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(etcdctl, "--endpoints=" + endpoint, "--command-timeout=10s",
                "--dial-timeout=5s"));
        cmd.addAll(flags);
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().put("ETCDCTL_API", "3");
        Process p = pb.start();
        p.getOutputStream().close();
        if (!p.waitFor(COMMAND_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("etcdctl " + String.join(" ", args) + " did not finish in " + COMMAND_TIMEOUT);
        }
        return new Result(p.exitValue(), new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
    }

    private static List<String> tls(TestCertificates.Pair client) {
        return List.of("--cacert=" + ca.cert(), "--cert=" + client.cert(), "--key=" + client.key());
    }

    private static String ok(List<String> flags, String... args) throws IOException, InterruptedException {
        Result r = run(flags, args);
        assertEquals(0, r.exit(), "etcdctl " + String.join(" ", args) + ":\n" + r.out());
        return r.out();
    }

    @Test
    void tlsWithClientCertificatesThenCommonNameAsUser() throws Exception {
        assertEquals("OK\n", ok(tls(erin), "put", "tls/a", "1"));
        assertTrue(ok(tls(erin), "get", "tls/a").contains("1"));

        // Refusals are retried by etcdctl until its timeouts: short ones keep the test quick.
        List<String> quick = List.of("--dial-timeout=2s", "--command-timeout=3s");
        Result plaintext = run(quick, "get", "tls/a");
        assertTrue(plaintext.exit() != 0, "a plaintext client is refused:\n" + plaintext.out());
        List<String> caOnly = new ArrayList<>(quick);
        caOnly.add("--cacert=" + ca.cert());
        Result noCertificate = run(caOnly, "get", "tls/a");
        assertTrue(noCertificate.exit() != 0, "a client without a certificate is refused:\n" + noCertificate.out());

        // Auth on: the certificate's CN is the user, as etcd does with --client-cert-auth.
        ok(tls(erin), "user", "add", "root", "--new-user-password=root-pw");
        ok(tls(erin), "user", "grant-role", "root", "root");
        ok(tls(erin), "user", "add", "erin", "--new-user-password=erin-pw");
        ok(tls(erin), "role", "add", "tls-reader");
        ok(tls(erin), "role", "grant-permission", "tls-reader", "read", "tls/", "--prefix=true");
        ok(tls(erin), "user", "grant-role", "erin", "tls-reader");
        ok(tls(erin), "auth", "enable");
        try {
            assertTrue(ok(tls(erin), "get", "tls/a").contains("1"), "erin (by certificate) reads tls/");
            Result refused = run(tls(erin), "put", "tls/a", "2");
            assertTrue(refused.exit() != 0 && refused.out().contains("etcdserver: permission denied"), refused.out());
            assertEquals("OK\n", ok(tls(root), "put", "tls/a", "3"), "root (by certificate) writes");
        } finally {
            ok(tls(root), "auth", "disable");
        }
    }
}
