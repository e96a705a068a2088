package io.rota.server;

import io.rota.client.AddedMember;
import io.rota.client.RotaClient;
import io.rota.server.cluster.MemberIdentity;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static io.rota.testkit.Ports.freePort;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every cluster its own id (issue 32 item 8, docs/design.md MF9): without {@code --cluster-id}, a new cluster's
 * id is derived from its {@code --initial-cluster} and token, the same on every bootstrap member and recorded in
 * each data dir; {@code member add} answers with it for the new member, and /status shows it. Before, every
 * cluster was "rota", so a member of one could talk to another started on the same addresses.
 */
@Tag("cluster")
class ClusterIdTest {

    @TempDir
    Path root;
    private final List<RotaServer> running = new ArrayList<>();

    @AfterEach
    void stopAll() {
        running.forEach(RotaServer::close);
    }

    @Test
    void aNewClusterDerivesOneIdOnEveryMemberAndMemberAddAndStatusGiveIt() throws Exception {
        Map<String, InetSocketAddress> cluster = new LinkedHashMap<>();
        for (int i = 1; i <= 3; i++) {
            cluster.put("n" + i, new InetSocketAddress("127.0.0.1", freePort()));
        }
        for (String name : cluster.keySet()) {
            running.add(RotaServer.start(ServerConfig.builder(name).dataDir(root.resolve(name))
                    .listenClient(new InetSocketAddress("127.0.0.1", freePort())).listenPeer(cluster.get(name))
                    .http(new InetSocketAddress("127.0.0.1", freePort())).initialCluster(cluster)
                    .initialClusterToken("test-" + root.getFileName()).heartbeatMs(50).electionMs(500).build()));
        }
        String id = running.get(0).config().clusterId();
        assertTrue(id.matches("rota-[0-9a-f]{16}"), id);
        for (RotaServer s : running) {
            assertEquals(id, s.config().clusterId());
            assertEquals(id, MemberIdentity.read(s.config().dataDir()).orElseThrow().clusterId());
        }
        StringBuilder endpoints = new StringBuilder();
        running.forEach(s -> endpoints.append(endpoints.length() == 0 ? "" : ",").append("127.0.0.1:")
                .append(s.clientAddress().getPort()));
        try (RotaClient rota = RotaClient.builder().endpoints(endpoints.toString())
                .callTimeout(Duration.ofSeconds(10)).build()) {
            rota.kv().put("k", "v");   // the members admitted each other: one id
            AddedMember added = rota.cluster().addMember("n4", "127.0.0.1:" + freePort(), "", true);
            assertEquals(id, added.clusterId(), "the new member's --cluster-id");
        }
        HttpResponse<String> status = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(
                "http://127.0.0.1:" + running.get(0).httpAddress().getPort() + "/status")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertTrue(status.body().contains("\"cluster_id\":\"" + id + "\""), status.body());

        // A joining member without --cluster-id has nothing to derive it from: a bad command line, exit 2.
        StringWriter err = new StringWriter();
        String n4Peer = "127.0.0.1:" + freePort();
        int code = RotaServer.run(new String[]{"server", "--name", "n4", "--data-dir", root.resolve("n4").toString(),
                "--listen-client", "127.0.0.1:0", "--listen-peer", n4Peer, "--initial-cluster",
                "n1=1@" + ServerConfig.format(cluster.get("n1")) + ",n4=4@" + n4Peer, "--initial-cluster-state",
                "existing"}, new PrintWriter(new StringWriter()), new PrintWriter(err, true));
        assertEquals(RotaServer.EXIT_USAGE, code, err.toString());
        assertTrue(err.toString().contains("give its --cluster-id too"), err.toString());
    }
}
