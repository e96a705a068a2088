package io.rota.shedlock;

import io.rota.client.RotaClient;
import io.rota.server.RotaServer;
import io.rota.server.ServerConfig;
import io.rota.testkit.Await;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static io.rota.testkit.Ports.freePort;

/**
 * Three real Rota members in this JVM on 127.0.0.1 (free ports, a temp data directory each), for the provider's
 * tests. Heartbeat 50 ms, election 500 ms, as the server's own in-process tests.
 */
final class InProcessCluster implements AutoCloseable {

    private final Path dir;
    private final List<RotaServer> servers = new ArrayList<>();
    private final String endpoints;

    InProcessCluster() {
        try {
            dir = Files.createTempDirectory("rota-shedlock");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Map<String, InetSocketAddress> peers = new LinkedHashMap<>();
        for (int i = 1; i <= 3; i++) {
            peers.put("n" + i, new InetSocketAddress("127.0.0.1", freePort()));
        }
        StringBuilder clients = new StringBuilder();
        for (int i = 1; i <= 3; i++) {
            InetSocketAddress client = new InetSocketAddress("127.0.0.1", freePort());
            servers.add(RotaServer.start(ServerConfig.builder("n" + i).dataDir(dir.resolve("n" + i))
                    .listenClient(client).listenPeer(peers.get("n" + i)).initialCluster(peers)
                    .clusterId("shedlock-" + dir.getFileName()).heartbeatMs(50).electionMs(500)
                    .http(new InetSocketAddress("127.0.0.1", freePort())).requestTimeout(Duration.ofSeconds(5))
                    .build()));
            clients.append(i == 1 ? "" : ",").append("127.0.0.1:").append(client.getPort());
        }
        endpoints = clients.toString();
        Await.until(Duration.ofSeconds(30), () -> servers.stream().anyMatch(s -> s.view().isLeader()),
                "a leader among the three members");
    }

    /** A new client of the three members (the caller closes it). */
    RotaClient connect() {
        return RotaClient.builder().endpoints(endpoints).callTimeout(Duration.ofSeconds(10)).build();
    }

    @Override
    public void close() {
        servers.forEach(RotaServer::close);
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
