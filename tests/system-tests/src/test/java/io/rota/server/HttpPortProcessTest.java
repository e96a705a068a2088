package io.rota.server;

import io.netty.handler.ssl.JdkSslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import io.rota.client.Auth;
import io.rota.client.RotaClient;
import io.rota.testkit.ProcessCluster;
import io.rota.testkit.TestCertificates;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The HTTP port inside RBAC (issue 33 item 3, docs/security.md "The HTTP port") on a real member process with
 * TLS, client certificates required and auth enabled: anonymous and non-root callers are refused everything but
 * /health and /metrics, root (by certificate CN or password) is served, no wildcard CORS, a foreign Host is
 * refused, one address's idle event streams do not lock out another's, and /fault/clock answers root only.
 *
 * <p>Requests go over raw TLS sockets: the JDK's HTTP client will not send a chosen Host header nor bind a
 * chosen source address. Every test client holds a certificate of the cluster's CA: {@value TlsCluster#CLIENT_CN}
 * (names no user), {@code alice} (a user without the root role) or {@code root}.
 */
@Tag("process")
class HttpPortProcessTest {

    private static final Duration DEADLINE = Duration.ofSeconds(30);
    private static final List<String> DATA_PAGES = List.of("/status", "/dashboard/state", "/dashboard/events");

    private static Path dir;
    private static ProcessCluster cluster;
    private static SSLSocketFactory anonymous;
    private static SSLSocketFactory alice;
    private static SSLSocketFactory root;
    private static int port;

    @BeforeAll
    static void setUp() throws IOException {
        String missing = TlsCluster.unavailable();
        assumeTrue(missing == null, () -> "SKIPPED: needs openssl to make certificates: " + missing);
        dir = Files.createTempDirectory("rota-HttpPortProcessTest");
        TlsCluster certs = new TlsCluster(dir.resolve("tls"));
        anonymous = sockets(certs.ca, certs.client);
        alice = sockets(certs.ca, certs.ca.issue("alice-client", "alice", List.of(), List.of()));
        root = sockets(certs.ca, certs.ca.issue("root-client", "root", List.of(), List.of()));
        cluster = ProcessCluster.prepare(dir, 1, null, "--unsafe-fault-injection").memberArgs(certs::memberFlags);
        cluster.startAll();
        cluster.awaitLeader();
        port = cluster.httpPort(0);
        try (RotaClient admin = RotaClient.builder().endpoints(cluster.endpoints()).tls(certs.clientOptions())
                .credentials("root", "root-pw").callTimeout(DEADLINE).build()) {
            Auth auth = admin.auth();
            AuthProcessTest.once(() -> auth.addUser("root", "root-pw".toCharArray()));
            AuthProcessTest.once(() -> auth.grantRole("root", "root"));
            AuthProcessTest.once(() -> auth.addRole("reader"));
            auth.grantPermission("reader", Auth.Permission.prefix(Auth.PermissionType.READ, "app/"));
            AuthProcessTest.once(() -> auth.addUser("alice", "alice-pw".toCharArray()));
            AuthProcessTest.once(() -> auth.grantRole("alice", "reader"));
            auth.enable();
        }
        cluster.httpCredentials("root", "root-pw");
    }

    @AfterAll
    static void tearDown() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    @DisplayName("with auth on, a caller with no user, a non-root user (by CN or password) and a wrong password get 403")
    void anonymousAndNonRootAreRefused() throws IOException {
        for (String path : DATA_PAGES) {
            assertRefused(get(anonymous, null, "GET", path), path + " without a user");
            assertRefused(get(alice, null, "GET", path), path + " as CN alice");
            assertRefused(get(anonymous, null, "GET", path, basic("alice", "alice-pw")), path + " as alice by password");
            assertRefused(get(anonymous, null, "GET", path, basic("root", "WRONG")), path + " with a wrong password");
        }
        assertTrue(get(anonymous, null, "GET", "/", basic("alice", "alice-pw")).startsWith("HTTP/1.1 403"));
        assertTrue(get(anonymous, null, "GET", "/health").startsWith("HTTP/1.1 200"), "/health answers anyone");
        assertTrue(get(anonymous, null, "GET", "/metrics").startsWith("HTTP/1.1 200"), "/metrics answers anyone");
    }

    private static void assertRefused(String answer, String what) {
        assertTrue(answer.startsWith("HTTP/1.1 403"), what + ": " + answer);
        assertTrue(answer.contains("needs a root user"), what + ": " + answer);
    }

    @Test
    @DisplayName("root is served: by its certificate's CN, and by its password (HTTP Basic)")
    void rootIsServed() throws IOException {
        for (String path : DATA_PAGES) {
            assertTrue(get(root, null, "GET", path).startsWith("HTTP/1.1 200"), path + " as CN root");
            assertTrue(get(anonymous, null, "GET", path, basic("root", "root-pw")).startsWith("HTTP/1.1 200"),
                    path + " as root by password");
        }
    }

    @Test
    @DisplayName("no Access-Control-Allow-Origin: * — a stranger's origin gets none, a member's own origin is echoed")
    void noWildcardCors() throws IOException {
        String stranger = get(root, null, "GET", "/dashboard/state", "Origin: http://evil.example");
        assertTrue(stranger.startsWith("HTTP/1.1 200"), stranger);
        assertFalse(stranger.toLowerCase().contains("access-control-allow-origin"), stranger);
        String member = get(root, null, "GET", "/dashboard/state", "Origin: http://127.0.0.1:" + port);
        assertTrue(member.contains("access-control-allow-origin: http://127.0.0.1:" + port), member);
    }

    @Test
    @DisplayName("a Host this member is not known by (DNS rebinding) is refused with 421 naming the flag; /health answers")
    void foreignHostIsRefused() throws IOException {
        String answer = get(root, "evil.example", "GET", "/status");
        assertTrue(answer.startsWith("HTTP/1.1 421"), answer);
        assertTrue(answer.contains("--http-host-allowlist"), answer);
        assertTrue(get(root, "evil.example", "GET", "/health").startsWith("HTTP/1.1 200"));
        assertTrue(get(root, "localhost", "GET", "/status").startsWith("HTTP/1.1 200"));
    }

    @Test
    @DisplayName("16 idle event streams from one address do not lock another address out of the feed")
    void idleStreamsFromOneAddressDoNotLockOutAnother() throws IOException {
        List<Socket> idle = new ArrayList<>();
        try {
            int accepted = 0;
            for (int i = 0; i < 16; i++) {
                Socket s = open(root, "127.0.0.1", "/dashboard/events");
                idle.add(s);
                if (statusLine(s.getInputStream()).startsWith("HTTP/1.1 200")) {
                    accepted++;
                }
            }
            assertTrue(accepted <= 4, accepted + " streams from one address");
            try (Socket other = open(root, "127.0.0.2", "/dashboard/events")) {
                String status = statusLine(other.getInputStream());
                assertTrue(status.startsWith("HTTP/1.1 200"), "another address's stream: " + status);
            }
        } finally {
            for (Socket s : idle) {
                s.close();
            }
        }
    }

    @Test
    @DisplayName("/fault/clock answers root only when auth is on")
    void faultClockNeedsRoot() throws IOException {
        assertRefused(get(anonymous, null, "POST", "/fault/clock?wall-offset-ms=5", basic("alice", "alice-pw")),
                "/fault/clock as alice");
        assertRefused(get(anonymous, null, "GET", "/fault/clock"), "/fault/clock without a user");
        String answer = get(root, null, "GET", "/fault/clock");
        assertTrue(answer.startsWith("HTTP/1.1 200") && answer.contains("\"wallOffsetMs\":0"), answer);
    }

    // ---- raw HTTPS ---------------------------------------------------------------------------------------

    private static SSLSocketFactory sockets(TestCertificates.Ca ca, TestCertificates.Pair pair) {
        try {
            return ((JdkSslContext) SslContextBuilder.forClient().sslProvider(SslProvider.JDK)
                    .trustManager(ca.cert().toFile()).keyManager(pair.cert().toFile(), pair.key().toFile())
                    .build()).context().getSocketFactory();
        } catch (SSLException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String basic(String user, String password) {
        return "Authorization: Basic " + Base64.getEncoder().encodeToString((user + ":" + password)
                .getBytes(StandardCharsets.UTF_8));
    }

    /** One request ({@code Connection: close}) and its whole answer, header names lower-cased. */
    private static String get(SSLSocketFactory tls, String host, String method, String path, String... headers)
            throws IOException {
        try (Socket s = connect(tls, "127.0.0.1")) {
            send(s, host, method, path, headers);
            String answer = head(s.getInputStream());
            if (!(path.equals("/dashboard/events") && answer.startsWith("HTTP/1.1 200"))) {
                answer += new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            }
            return lowerHeaderNames(answer);
        }
    }

    /** An open request whose answer the caller reads (or does not). */
    private static Socket open(SSLSocketFactory tls, String from, String path) throws IOException {
        Socket s = connect(tls, from);
        send(s, null, "GET", path);
        return s;
    }

    private static Socket connect(SSLSocketFactory tls, String from) throws IOException {
        Socket plain = new Socket();
        plain.bind(new InetSocketAddress(from, 0));
        plain.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
        plain.setSoTimeout(10_000);
        SSLSocket s = (SSLSocket) tls.createSocket(plain, "127.0.0.1", port, true);
        s.startHandshake();
        return s;
    }

    private static void send(Socket s, String host, String method, String path, String... headers) throws IOException {
        StringBuilder request = new StringBuilder(method + " " + path + " HTTP/1.1\r\nHost: "
                + (host == null ? "127.0.0.1:" + port : host) + "\r\nConnection: close\r\n");
        for (String h : headers) {
            request.append(h).append("\r\n");
        }
        s.getOutputStream().write(request.append("\r\n").toString().getBytes(StandardCharsets.UTF_8));
        s.getOutputStream().flush();
    }

    private static String statusLine(InputStream in) throws IOException {
        return head(in).lines().findFirst().orElse("");
    }

    /** The status line and headers (an event stream's answer does not end). */
    private static String head(InputStream in) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int b;
        while ((b = in.read()) >= 0) {
            out.write(b);
            if (out.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n")) {
                break;
            }
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    private static String lowerHeaderNames(String answer) {
        int end = answer.indexOf("\r\n\r\n");
        String head = end < 0 ? answer : answer.substring(0, end);
        StringBuilder out = new StringBuilder();
        for (String line : head.split("\r\n")) {
            int colon = line.indexOf(':');
            out.append(colon > 0 && !line.startsWith("HTTP/") ? line.substring(0, colon).toLowerCase() + line.substring(colon)
                    : line).append("\r\n");
        }
        return out + (end < 0 ? "" : answer.substring(end));
    }
}
