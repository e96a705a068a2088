package io.rota.server;

import io.rota.testkit.Await;
import io.rota.testkit.Ports;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.ServerSocket;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** /health, /status and /metrics on a live cluster; a member that cannot bind its port exits with 1. */
@Tag("cluster")
class HttpTest {

    @RegisterExtension
    static final SharedCluster CLUSTER = new SharedCluster(Duration.ofSeconds(10));
    @TempDir
    static Path dir;
    private final HttpClient http = HttpClient.newHttpClient();

    private HttpResponse<String> get(int member, String path) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(CLUSTER.get().httpUri(member, path)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void healthStatusAndMetrics() throws Exception {
        int leader = CLUSTER.get().awaitLeader();
        Await.until(TestCluster.TIMEOUT, () -> {
            try {
                return get(0, "/health").statusCode() == 200;
            } catch (IOException | InterruptedException e) {
                throw new AssertionError(e);
            }
        }, "n1 healthy");
        assertEquals("ok", get(0, "/health").body().strip());

        String status = get(leader, "/status").body();
        assertTrue(status.contains("\"role\":\"leader\""), status);
        assertTrue(status.contains("\"name\":\"n" + (leader + 1) + "\""), status);
        assertTrue(status.contains("\"members\":[{\"id\":1,\"name\":\"n1\""), status);

        String metrics = get(leader, "/metrics").body();
        assertTrue(metrics.contains("# TYPE rota_raft_term gauge"), metrics);
        assertTrue(metrics.contains("rota_raft_role{role=\"leader\"} 1"), metrics);
        assertTrue(metrics.contains("rota_peer_sent_total{peer="), metrics);
        assertEquals(404, get(0, "/nope").statusCode());
    }

    @Test
    @DisplayName("issue 30: a path with a bad percent escape is a 400 with a reason, not a connection closed unanswered")
    void aBadEscapeIsABadRequest() throws IOException {
        java.net.URI base = CLUSTER.get().httpUri(0, "/");
        for (String path : new String[] {"/%ZZ", "/lab/kill?name=%", "/fault/clock?wall-offset-ms=%G1"}) {
            try (java.net.Socket socket = new java.net.Socket(base.getHost(), base.getPort())) {
                socket.setSoTimeout(10_000);
                socket.getOutputStream().write(("GET " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                        .getBytes(java.nio.charset.StandardCharsets.US_ASCII));
                String answer = new String(socket.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
                assertTrue(answer.startsWith("HTTP/1.1 400"), path + " -> " + answer);
                assertTrue(answer.contains("percent-encoding"), answer);
            }
        }
    }

    @Test
    void aMemberThatCannotListenExitsWithOne() throws IOException {
        try (ServerSocket taken = new ServerSocket(0)) {
            int peer = Ports.freePort();
            StringWriter err = new StringWriter();
            int code = RotaServer.run(new String[] {"server", "--name", "n1", "--data-dir", dir.resolve("x").toString(),
                    "--listen-client", "127.0.0.1:" + taken.getLocalPort(), "--listen-peer", "127.0.0.1:" + peer,
                    "--initial-cluster", "n1=127.0.0.1:" + peer}, new PrintWriter(new StringWriter()),
                    new PrintWriter(err, true));
            assertEquals(1, code, err.toString());
            assertTrue(err.toString().contains("cannot listen for clients"), err.toString());
        }
    }
}
