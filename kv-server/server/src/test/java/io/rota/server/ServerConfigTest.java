package io.rota.server;

import io.rota.raft.core.Configuration;
import io.rota.raft.core.RaftOptions;
import io.rota.raft.node.NodeConfig;
import io.rota.raft.transport.TransportConfig;
import io.rota.server.api.ClientServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * ServerConfig: the flags' defaults, every rule between flags refused in flag terms, and the core
 * configurations it derives — valid for every accepted combination, so an operator never meets a core field.
 */
class ServerConfigTest {

    private static final InetSocketAddress N1 = new InetSocketAddress("127.0.0.1", 7101);
    private static final Map<String, InetSocketAddress> CLUSTER = new LinkedHashMap<>();

    static {
        CLUSTER.put("n1", N1);
        CLUSTER.put("n2", new InetSocketAddress("127.0.0.1", 7102));
        CLUSTER.put("n3", new InetSocketAddress("127.0.0.1", 7103));
    }

    /** The required flags of member n1; every other one at its default. */
    private static ServerConfig.Builder n1() {
        return ServerConfig.builder("n1").dataDir(Path.of("data")).listenClient(new InetSocketAddress("127.0.0.1", 0))
                .listenPeer(N1).initialCluster(CLUSTER);
    }

    @Test
    void theDefaultsAreTheFlagsDefaultsWithTheirHistoricValues() {
        ServerConfig c = n1().build();
        // The values before the builder existed (issue 12 changes no default); issue 32 changed one: the
        // cluster id is no longer "rota" for every cluster but derived at start (clusterIdsAreDerived...).
        assertNull(c.clusterId());
        assertEquals(100, c.heartbeatMs());
        assertEquals(1000, c.electionMs());
        assertEquals(10_000, c.snapshotCount());
        assertEquals(1_572_864, c.maxRequestBytes());
        assertEquals(Duration.ofSeconds(5), c.requestTimeout());
        assertEquals(Duration.ofSeconds(10), c.watchProgressInterval());
        assertNull(c.http());
        assertFalse(c.faultInjection());
        assertEquals(c, c.toBuilder().build());
    }

    @Test
    void theDefaultFlagsGiveTheCoreItsOwnDefaults() {
        ServerConfig c = n1().build();
        assertEquals(NodeConfig.DEFAULT_TICK, c.tick());
        NodeConfig node = c.nodeConfig();
        Map<Long, String> addresses = Map.of(1L, "127.0.0.1:7101", 2L, "127.0.0.1:7102", 3L, "127.0.0.1:7103");
        assertEquals(NodeConfig.defaults(1, Configuration.of(1L, 2L, 3L), addresses), node);
    }

    @Test
    void theDerivedConfigurationsAreTheOnesRotaServerBuiltBefore() {
        ServerConfig c = n1().build();
        TransportConfig transport = c.transportConfig();
        assertEquals(1, transport.selfId());
        assertEquals(Map.of(2L, CLUSTER.get("n2"), 3L, CLUSTER.get("n3")), Map.copyOf(transport.peers()));
        assertEquals(TransportConfig.DEFAULT_MAX_FRAME_BYTES, transport.maxFrameBytes(), "8 MiB > 2 x 1.5 MiB");
        ClientServer.Settings settings = c.clientSettings("v");
        assertEquals(1_572_864 + 4096, settings.maxFrameBytes());
        assertEquals(Duration.ofMillis(100), settings.retryInterval(), "one tick");
        assertEquals(Duration.ofSeconds(2), settings.readAttemptTimeout(), "two election timeouts");
        assertEquals(2, settings.minLeaseTtlSeconds(), "1.5 s rounded up");
        assertEquals(2 * (64 * 1024 * 1024 + 4096),
                n1().maxRequestBytes(64 << 20).build().transportConfig().maxFrameBytes(), "twice the client frame");
    }

    @Test
    void theSmallestAndLargestAcceptedFlagsGiveValidCoreConfigurations() {
        ServerConfig fast = n1().heartbeatMs(10).electionMs(50).snapshotCount(1).maxRequestBytes(1024).build();
        RaftOptions raft = assertDoesNotThrow(fast::nodeConfig).raft();
        assertEquals(5, raft.electionTicks());
        assertEquals(1, raft.heartbeatTicks());
        assertDoesNotThrow(fast::transportConfig);
        assertDoesNotThrow(() -> fast.clientSettings("v"));
        ServerConfig slow = n1().heartbeatMs(1000).electionMs(60_000).maxRequestBytes(64 << 20).build();
        assertDoesNotThrow(slow::nodeConfig);
        assertDoesNotThrow(slow::transportConfig);
        assertDoesNotThrow(() -> slow.clientSettings("v"));
    }

    @Test
    void crossFlagRulesNameTheFlags() {
        assertRefused("--election-ms", "--election-ms must be a multiple of --heartbeat-ms",
                () -> n1().heartbeatMs(100).electionMs(1050).build());
        assertRefused("--election-ms", "--election-ms must be at least 5 times --heartbeat-ms",
                () -> n1().heartbeatMs(200).electionMs(800).build());
        assertRefused("--name", "--name n9 is not in --initial-cluster", () -> ServerConfig.builder("n9")
                .dataDir(Path.of("data")).listenClient(new InetSocketAddress("127.0.0.1", 0)).listenPeer(N1)
                .initialCluster(CLUSTER).build());
        assertRefused("--listen-peer", "--listen-peer 127.0.0.1:9999 differs from n1's entry",
                () -> n1().listenPeer(new InetSocketAddress("127.0.0.1", 9999)).build());
        assertRefused("--listen-client", "--listen-client and --listen-peer must differ",
                () -> n1().listenClient(N1).build());
        assertRefused("--http", "--http must differ from --listen-client and --listen-peer",
                () -> n1().http(N1).build());
    }

    @Test
    void aMemberBindsOneAddressAndAdvertisesAnother() {
        // A pod binds every interface and is known to its peers by its stable DNS name.
        Map<String, InetSocketAddress> cluster = new LinkedHashMap<>();
        cluster.put("rota-0", InetSocketAddress.createUnresolved("rota-0.rota.prod.svc.cluster.local", 7101));
        cluster.put("rota-1", InetSocketAddress.createUnresolved("rota-1.rota.prod.svc.cluster.local", 7101));
        ServerConfig c = ServerConfig.builder("rota-0").dataDir(Path.of("data"))
                .listenClient(new InetSocketAddress("0.0.0.0", 7001)).listenPeer(new InetSocketAddress("0.0.0.0", 7101))
                .advertisePeer(cluster.get("rota-0"))
                .advertiseClient(InetSocketAddress.createUnresolved("rota-0.rota.prod.svc.cluster.local", 7001))
                .http(new InetSocketAddress("0.0.0.0", 7201)).initialCluster(cluster).build();
        assertEquals("rota-0.rota.prod.svc.cluster.local:7101", ServerConfig.format(c.advertisedPeer()));
        assertEquals("rota-0.rota.prod.svc.cluster.local:7001", c.advertisedClient(7001));
        assertEquals("rota-0.rota.prod.svc.cluster.local:7201", c.advertisedHttp(7001, 7201));
        assertEquals(new InetSocketAddress("0.0.0.0", 7101), c.transportConfig().listenAddress());
        assertTrue(c.transportConfig().peers().get(2L).isUnresolved(), "a peer name is looked up at each dial");
        assertEquals(c, c.toBuilder().build());
        // Without advertise flags, the bind addresses are the published ones (as before).
        assertEquals(N1, n1().build().advertisedPeer());
        assertEquals("127.0.0.1:4242", n1().build().advertisedClient(4242));
    }

    @Test
    void advertiseRulesNameTheFlags() {
        InetSocketAddress anywhere = new InetSocketAddress("0.0.0.0", 7101);
        assertRefused("--advertise-peer", "--advertise-peer 127.0.0.2:7101 differs from n1's entry 127.0.0.1:7101",
                () -> n1().listenPeer(anywhere).advertisePeer(new InetSocketAddress("127.0.0.2", 7101)).build());
        assertRefused("--listen-peer", "--listen-peer 0.0.0.0:7101 differs from n1's entry 127.0.0.1:7101 in"
                + " --initial-cluster: the other members dial that address (to bind one address and advertise"
                + " another, give --advertise-peer 127.0.0.1:7101)", () -> n1().listenPeer(anywhere).build());
        assertDoesNotThrow(() -> n1().listenPeer(anywhere).advertisePeer(N1).build());
        Map<String, InetSocketAddress> wildcard = new LinkedHashMap<>(CLUSTER);
        wildcard.put("n2", new InetSocketAddress("0.0.0.0", 7102));
        assertRefused("--initial-cluster", "--initial-cluster n2 is 0.0.0.0:7102, a bind-anywhere address",
                () -> n1().initialCluster(wildcard).build());
        assertRefused("--advertise-client", "--listen-client 0.0.0.0:7001 binds every interface: give"
                + " --advertise-client", () -> n1().listenClient(new InetSocketAddress("0.0.0.0", 7001)).build());
        assertRefused("--advertise-client", "--advertise-client must be an address clients can dial",
                () -> n1().advertiseClient(InetSocketAddress.createUnresolved("0.0.0.0", 7001)).build());
    }

    @Test
    void anElectionTimeoutThatOverflowsFiveHeartbeatsIsRefused() {
        // 5 x 500,000,000 overflows an int: computed in int, the rule let this through to a two-tick
        // election timeout. It is computed in long.
        assertRefused("--election-ms", "--election-ms must be at least 5 times --heartbeat-ms",
                () -> n1().heartbeatMs(500_000_000).electionMs(1_000_000_000).build());
    }

    @Test
    void singleFlagRulesNameTheFlag() {
        assertRefused("--heartbeat-ms", "--heartbeat-ms must be at least 10, got 5", () -> n1().heartbeatMs(5).build());
        assertRefused("--snapshot-count", "--snapshot-count must be at least 1", () -> n1().snapshotCount(0).build());
        assertRefused("--max-request-bytes", "--max-request-bytes must be between 1024 and 67108864",
                () -> n1().maxRequestBytes(1023).build());
        assertRefused("--max-request-bytes", "--max-request-bytes must be between 1024 and 67108864",
                () -> n1().maxRequestBytes((64 << 20) + 1).build());
        assertRefused("--cluster-id", "--cluster-id must not be blank", () -> n1().clusterId(" ").build());
        assertRefused("--name", "--name 'n 1' has a character other than letters", () -> ServerConfig.builder("n 1").build());
        assertRefused("--data-dir", "--data-dir is required", () -> n1().dataDir(null).build());
        assertRefused("--initial-cluster", "--initial-cluster is empty", () -> n1().initialCluster(Map.of()).build());
    }

    @Test
    void tlsFlagsThatDoNotFitTogetherAreRefusedNamingTheFlag() throws Exception {
        Path pem = java.nio.file.Files.createTempFile("rota-tls", ".pem");
        try {
            assertRefused("--key-file", "--cert-file and --key-file go together",
                    () -> ServerTls.builder().clientPort(pem, null).build());
            assertRefused("--client-cert-auth", "--client-cert-auth needs --trusted-ca-file",
                    () -> ServerTls.builder().clientPort(pem, pem).clientCertAuth(true).build());
            assertRefused("--trusted-ca-file", "--trusted-ca-file checks client certificates on a TLS client port",
                    () -> ServerTls.builder().trustedCaFile(pem).build());
            assertRefused("--peer-trusted-ca-file", "--peer-cert-file, --peer-key-file and --peer-trusted-ca-file go"
                    + " together", () -> ServerTls.builder().peerPort(pem, pem, null).build());
            assertRefused("--cert-file", "--cert-file /nonexistent/rota.pem does not exist",
                    () -> ServerTls.builder().clientPort(Path.of("/nonexistent/rota.pem"), pem).build());
            ServerTls both = ServerTls.builder().clientPort(pem, pem).trustedCaFile(pem).clientCertAuth(true)
                    .peerPort(pem, pem, pem).build();
            assertTrue(both.clientFiles().requireClientCert() && both.peerFiles().requireClientCert(),
                    "client certificates required where asked, and always between members");
            assertEquals(both, both.toBuilder().build());
            assertNull(ServerTls.NONE.clientFiles());
            assertNull(n1().build().tls().peerFiles(), "plaintext by default");
        } finally {
            java.nio.file.Files.delete(pem);
        }
    }

    private static void assertRefused(String flag, String message, Executable build) {
        FlagException e = assertThrows(FlagException.class, build);
        assertEquals(flag, e.flag());
        assertTrue(e.getMessage().startsWith(message), e.getMessage());
        assertEquals(1, e.getMessage().lines().count(), "one line: " + e.getMessage());
    }

    @Test
    void clusterIdsAreDerivedFromTheInitialClusterAndTokenAndTheRecordedOneWins() {
        ServerConfig n1 = n1().build();
        ServerConfig n2 = ServerConfig.builder("n2").dataDir(Path.of("data2"))
                .listenClient(new InetSocketAddress("127.0.0.1", 0)).listenPeer(CLUSTER.get("n2"))
                .initialCluster(CLUSTER).build();
        String derived = n1.withEffectiveClusterId(java.util.Optional.empty()).clusterId();
        assertTrue(derived.matches("rota-[0-9a-f]{16}"), derived);
        assertEquals(derived, n2.withEffectiveClusterId(java.util.Optional.empty()).clusterId(), "every bootstrap member agrees");
        assertFalse(derived.equals(n1().initialClusterToken("another").build().derivedClusterId()), "another token");
        Map<String, InetSocketAddress> moved = new LinkedHashMap<>(CLUSTER);
        moved.put("n3", new InetSocketAddress("127.0.0.1", 7203));
        assertFalse(derived.equals(n1().initialCluster(moved).build().derivedClusterId()), "another member list");
        // The data dir's id wins over the default (a data dir from before issue 32 keeps "rota"); a given one stays.
        assertEquals("rota", n1.withEffectiveClusterId(java.util.Optional.of("rota")).clusterId());
        assertEquals("prod", n1().clusterId("prod").build().withEffectiveClusterId(java.util.Optional.of("rota")).clusterId());
        // A joining member has nothing to derive from: it is given the id member add printed.
        ServerConfig joiner = n1().initialClusterState(ServerConfig.ClusterState.EXISTING).build();
        assertRefused("--cluster-id", "--initial-cluster-state existing joins a running cluster: give its --cluster-id",
                () -> joiner.withEffectiveClusterId(java.util.Optional.empty()));
    }
}
