package io.rota.server;

import io.rota.client.RotaClient;
import io.rota.raft.core.Configuration;
import io.rota.raft.core.Entry;
import io.rota.raft.core.HardState;
import io.rota.raft.core.Ready;
import io.rota.raft.storage.RocksDbLogStore;
import io.rota.raft.storage.StorageConfig;
import io.rota.server.cluster.MemberIdentity;
import io.rota.server.cluster.MemberRefusedException;
import io.rota.testkit.Await;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static io.rota.testkit.Ports.freePort;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The bootstrap configuration is the log's first entry (issue 32 item 4, docs/design.md MF4): once a member
 * has bootstrapped, its data dir — not {@code --initial-cluster} — says who the members are, and a start
 * whose {@code --initial-cluster} names other members is refused with a message that says which to trust.
 * Before, a member of a young cluster (no snapshot yet) restarted with a one-member {@code --initial-cluster}
 * took it as its configuration and elected itself alone (§4.1: a server uses the configuration it holds).
 */
@Tag("cluster")
class BootstrapInLogTest {

    @TempDir
    Path root;

    @Test
    @DisplayName("§4.1: a member restarted with another --initial-cluster is refused (exit 3); with the original it rejoins")
    void aChangedInitialClusterIsRefusedAndTheDataDirWins() {
        try (TestCluster c = new TestCluster(root, 3, Duration.ofSeconds(10))) {
            try (RotaClient rota = RotaClient.connect(c.endpoints())) {
                rota.kv().put("acknowledged", "yes");
            }
            ServerConfig n3 = c.config(2);
            c.stop(2);

            // Alone, under its own id: before issue 32 this member, its log young (no snapshot), took {3} as its
            // configuration and elected itself.
            Map<String, InetSocketAddress> alone = Map.of("n3", n3.listenPeer());
            MemberRefusedException one = assertThrows(MemberRefusedException.class,
                    () -> RotaServer.start(n3.toBuilder().initialCluster(alone).memberIds(Map.of("n3", 3L)).build()));
            assertTrue(one.getMessage().contains("was bootstrapped as member 3 of {n1=1@127.0.0.1:")
                    && one.getMessage().contains("--initial-cluster now says {n3=3@")
                    && one.getMessage().contains("The data dir wins")
                    && one.getMessage().contains("rotactl member add/remove"), one.getMessage());

            // Other members around it, n3 keeping its id.
            Map<String, InetSocketAddress> others = new LinkedHashMap<>();
            others.put("n3", n3.listenPeer());
            others.put("n4", new InetSocketAddress("127.0.0.1", freePort()));
            others.put("n5", new InetSocketAddress("127.0.0.1", freePort()));
            assertThrows(MemberRefusedException.class, () -> RotaServer.start(n3.toBuilder().initialCluster(others)
                    .memberIds(Map.of("n3", 3L, "n4", 4L, "n5", 5L)).build()));

            // From the command line: refused, exit 3 (a supervisor must not restart it), one line.
            StringWriter err = new StringWriter();
            int code = RotaServer.run(new String[]{"server", "--name", "n3", "--data-dir", n3.dataDir().toString(),
                    "--listen-client", "127.0.0.1:0", "--listen-peer", ServerConfig.format(n3.listenPeer()),
                    "--cluster-id", n3.clusterId(), "--initial-cluster", "n3=3@" + ServerConfig.format(n3.listenPeer())},
                    new PrintWriter(new StringWriter()), new PrintWriter(err, true));
            assertEquals(RotaServer.EXIT_REFUSED, code, err.toString());
            assertTrue(err.toString().startsWith("rota server n3 (id 3) refused to run: the data dir "), err.toString());

            // The original flags: it rejoins and has what was acknowledged.
            c.start(2);
            try (RotaClient viaN3 = RotaClient.connect(c.endpoint(2))) {
                assertEquals("yes", viaN3.kv().get("acknowledged").first().orElseThrow().valueString());
            }
        }
    }

    @Test
    @DisplayName("upgrade: a data dir written before the bootstrap entry still starts, and records its --initial-cluster")
    void aDataDirFromBeforeTheBootstrapEntryStillStarts() {
        Path dir = root.resolve("old-n1");
        // What an older version left: an identity without the recorded cluster, a log whose entry 1 is a no-op.
        new MemberIdentity("old", 1, true).write(dir);
        try (RocksDbLogStore store = RocksDbLogStore.open(StorageConfig.defaults(dir))) {
            store.persist(new Ready(null, new HardState(2, 1, 1), null, List.of(Entry.noOp(1, 2)), List.of(),
                    List.of(), List.of(), List.of(), true, List.of()));
        }
        InetSocketAddress peer = new InetSocketAddress("127.0.0.1", freePort());
        ServerConfig config = ServerConfig.builder("n1").dataDir(dir)
                .listenClient(new InetSocketAddress("127.0.0.1", freePort())).listenPeer(peer)
                .initialCluster(Map.of("n1", peer)).clusterId("old").heartbeatMs(50).electionMs(500).build();
        List<RotaServer> started = new ArrayList<>();
        try {
            started.add(RotaServer.start(config));
            try (RotaClient rota = RotaClient.connect(ServerConfig.format(started.get(0).clientAddress()))) {
                rota.kv().put("after-upgrade", "1");
            }
            Await.until(Duration.ofSeconds(30), () -> started.get(0).view().status() != null
                    && started.get(0).view().status().configuration().equals(Configuration.of(1L)), "config {1}");
        } finally {
            started.forEach(RotaServer::close);
        }
        assertEquals("n1=1@" + ServerConfig.format(peer), MemberIdentity.read(dir).orElseThrow().initialCluster());
    }
}
