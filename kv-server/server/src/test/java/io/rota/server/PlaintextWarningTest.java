package io.rota.server;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** rota server warns at start for each port that listens beyond loopback without TLS (issue 33 item 7). */
class PlaintextWarningTest {

    private static final InetSocketAddress PEER = new InetSocketAddress("0.0.0.0", 7101);

    private static ServerConfig.Builder member(InetSocketAddress client, InetSocketAddress http) {
        return ServerConfig.builder("n1").dataDir(Path.of("data")).listenClient(client).listenPeer(PEER)
                .initialCluster(Map.of("n1", new InetSocketAddress("10.0.0.1", 7101)))
                .advertisePeer(new InetSocketAddress("10.0.0.1", 7101))
                .advertiseClient(new InetSocketAddress("10.0.0.1", 7001)).http(http);
    }

    @Test
    @DisplayName("each plaintext port on a non-loopback address gets one warning naming the port and the flags that fix it")
    void plaintextBeyondLoopbackIsNamed() {
        List<String> warnings = PlaintextWarning.of(member(new InetSocketAddress("0.0.0.0", 7001),
                new InetSocketAddress("0.0.0.0", 7201)).build());
        assertEquals(3, warnings.size(), warnings.toString());
        assertTrue(warnings.get(0).contains("client port listens on 0.0.0.0:7001") && warnings.get(0).contains("--cert-file"),
                warnings.get(0));
        assertTrue(warnings.get(1).contains("peer port") && warnings.get(1).contains("--peer-cert-file"), warnings.get(1));
        assertTrue(warnings.get(2).contains("HTTP port") && warnings.get(2).contains("127.0.0.1"), warnings.get(2));
    }

    @Test
    @DisplayName("loopback ports and TLS ports get none")
    void loopbackAndTlsAreQuiet(@TempDir Path dir) throws java.io.IOException {
        for (String f : List.of("c.pem", "c.key", "p.pem", "p.key", "ca.pem")) {
            java.nio.file.Files.writeString(dir.resolve(f), "");   // the flags' files must exist; not read here
        }
        ServerConfig loopback = ServerConfig.builder("n1").dataDir(Path.of("data"))
                .listenClient(new InetSocketAddress("127.0.0.1", 7001)).listenPeer(new InetSocketAddress("127.0.0.1", 7101))
                .initialCluster(Map.of("n1", new InetSocketAddress("127.0.0.1", 7101)))
                .http(new InetSocketAddress("127.0.0.1", 7201)).build();
        assertEquals(List.of(), PlaintextWarning.of(loopback));
        ServerConfig tls = member(new InetSocketAddress("0.0.0.0", 7001), new InetSocketAddress("0.0.0.0", 7201))
                .tls(ServerTls.builder().clientPort(dir.resolve("c.pem"), dir.resolve("c.key"))
                        .peerPort(dir.resolve("p.pem"), dir.resolve("p.key"), dir.resolve("ca.pem")).build()).build();
        assertEquals(List.of(), PlaintextWarning.of(tls));
    }
}
