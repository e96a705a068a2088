package io.rota.spring;

import io.rota.client.RotaClient;
import io.rota.server.RotaServer;
import io.rota.server.ServerConfig;
import io.rota.testkit.Await;
import io.rota.testkit.Ports;

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

/** A real Rota cluster of three members in this JVM (fast elections), on ephemeral ports and a temp dir. */
final class InJvmCluster implements AutoCloseable {

    private final Path dir;
    private final List<RotaServer> servers = new ArrayList<>();
    private final List<String> endpoints = new ArrayList<>();

    InJvmCluster() {
        try {
            dir = Files.createTempDirectory("rota-spring-test");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Map<String, InetSocketAddress> peers = new LinkedHashMap<>();
        for (int i = 1; i <= 3; i++) {
            peers.put("n" + i, new InetSocketAddress("127.0.0.1", Ports.freePort()));
        }
        for (int i = 1; i <= 3; i++) {
            InetSocketAddress client = new InetSocketAddress("127.0.0.1", Ports.freePort());
            endpoints.add("127.0.0.1:" + client.getPort());
            servers.add(RotaServer.start(ServerConfig.builder("n" + i).dataDir(dir.resolve("n" + i))
                    .listenClient(client).listenPeer(peers.get("n" + i)).initialCluster(peers)
                    .clusterId("spring-" + dir.getFileName()).heartbeatMs(50).electionMs(500)
                    .http(new InetSocketAddress("127.0.0.1", Ports.freePort()))
                    .requestTimeout(Duration.ofSeconds(5)).build()));
        }
        try (RotaClient probe = RotaClient.connect(endpoints())) {
            Await.until(Duration.ofSeconds(30), () -> {
                try {
                    probe.kv().put("spring-test/ready", "yes");
                    return true;
                } catch (RuntimeException notYet) {
                    return false;
                }
            }, "a leader that accepts writes");
        }
    }

    /** {@code host:port,host:port,host:port}. */
    String endpoints() {
        return String.join(",", endpoints);
    }

    @Override
    public void close() {
        for (RotaServer s : servers) {
            s.close();
        }
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
