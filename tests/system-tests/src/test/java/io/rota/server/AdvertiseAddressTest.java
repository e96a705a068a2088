package io.rota.server;

import io.rota.client.ClusterMember;
import io.rota.client.RotaClient;
import io.rota.testkit.Await;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static io.rota.testkit.Ports.freePort;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Listen versus advertise, as a pod or a member behind NAT runs: three members bind every interface
 * ({@code 0.0.0.0}) and are known to each other and to clients by a name ({@code localhost}, which the
 * members look up when they dial). They elect a leader and commit through the named addresses, and the
 * member list shows what each advertised, never the bind address.
 */
@Tag("cluster")
class AdvertiseAddressTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @Test
    void membersBoundToEveryInterfaceDialAndPublishTheirAdvertisedNames(@TempDir Path root) {
        Map<String, InetSocketAddress> cluster = new LinkedHashMap<>();
        int[] peerPorts = new int[3];
        int[] clientPorts = new int[3];
        for (int i = 0; i < 3; i++) {
            peerPorts[i] = freePort();
            clientPorts[i] = freePort();
            cluster.put("n" + (i + 1), InetSocketAddress.createUnresolved("localhost", peerPorts[i]));
        }
        List<RotaServer> servers = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                String name = "n" + (i + 1);
                servers.add(RotaServer.start(ServerConfig.builder(name).dataDir(root.resolve(name))
                        .listenPeer(new InetSocketAddress("0.0.0.0", peerPorts[i])).advertisePeer(cluster.get(name))
                        .listenClient(new InetSocketAddress("0.0.0.0", clientPorts[i]))
                        .advertiseClient(InetSocketAddress.createUnresolved("localhost", clientPorts[i]))
                        .initialCluster(cluster).clusterId("advertise").heartbeatMs(50).electionMs(500).build()));
            }
            try (RotaClient rota = RotaClient.builder().endpoints("127.0.0.1:" + clientPorts[0])
                    .callTimeout(Duration.ofSeconds(10)).build()) {
                rota.kv().put("dialled-by-name", "yes");
                Await.until(TIMEOUT, () -> rota.cluster().memberList().stream()
                        .allMatch(m -> m.clientAddress().startsWith("localhost:")), "every member published");
                List<ClusterMember> members = rota.cluster().memberList();
                assertEquals(3, members.size(), members.toString());
                for (ClusterMember m : members) {
                    int i = (int) m.id() - 1;
                    assertEquals("localhost:" + peerPorts[i], m.peerAddress(), m.toString());
                    assertEquals("localhost:" + clientPorts[i], m.clientAddress(), m.toString());
                }
            }
        } finally {
            servers.forEach(RotaServer::close);
        }
    }
}
