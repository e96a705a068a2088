package io.rota.server;

import io.rota.server.cluster.MemberIdentity;
import io.rota.testkit.Ports;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Bad command lines exit with code 2 and one line that says what is wrong; a member that must not be restarted
 * exits 3, one that failed to start exits 1 (the statuses a supervisor acts on).
 */
class CommandLineTest {

    @TempDir
    Path dir;

    private String[] args(String... overrides) {
        List<String> a = new ArrayList<>(List.of("server", "--name", "n1", "--data-dir", dir.toString(),
                "--listen-client", "127.0.0.1:0", "--listen-peer", "127.0.0.1:7101",
                "--initial-cluster", "n1=127.0.0.1:7101,n2=127.0.0.1:7102,n3=127.0.0.1:7103"));
        for (int i = 0; i < overrides.length; i += 2) {
            int at = a.indexOf(overrides[i]);
            if (at >= 0) {
                a.set(at + 1, overrides[i + 1]);
            } else {
                a.add(overrides[i]);
                a.add(overrides[i + 1]);
            }
        }
        return a.toArray(String[]::new);
    }

    private static void assertRefused(String[] args, String expected) {
        StringWriter err = new StringWriter();
        int code = RotaServer.run(args, new PrintWriter(new StringWriter()), new PrintWriter(err, true));
        String message = err.toString().strip();
        assertEquals(2, code, message);
        assertEquals(1, message.lines().count(), "one line: " + message);
        assertTrue(message.contains(expected), message);
    }

    /** Runs {@code rota} with {@code args}: the exit status and what it wrote on stderr. */
    private static Exit run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = RotaServer.run(args, new PrintWriter(out, true), new PrintWriter(err, true));
        return new Exit(code, out.toString(), err.toString().strip());
    }

    private record Exit(int code, String out, String err) {
    }

    @Test
    void aDataDirOfAnotherClusterExits3SoNoSupervisorRestartsIt() {
        new MemberIdentity("another-cluster", 1, true).write(dir);
        // Without --cluster-id the data dir's recorded id is taken (design MF9); a named one must agree.
        Exit exit = run(args("--cluster-id", "rota"));
        assertEquals(3, exit.code(), "the documented status (deploy/systemd/rota@.service): " + exit.err());
        assertEquals(1, exit.err().lines().count(), "one line: " + exit.err());
        assertTrue(exit.err().startsWith("rota server n1 (id 1) refused to run: data dir ")
                && exit.err().contains("belongs to member 1 of cluster 'another-cluster'"), exit.err());
    }

    @Test
    void aStartThatFailsExits1SoASupervisorRestartsIt() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            String peer = "127.0.0.1:" + Ports.freePort();
            Exit exit = run(args("--listen-client", "127.0.0.1:" + taken.getLocalPort(), "--listen-peer", peer,
                    "--initial-cluster", "n1=" + peer));
            assertEquals(1, exit.code(), "the documented status (deploy/systemd/rota@.service): " + exit.err());
            assertTrue(exit.err().startsWith("rota server n1 failed to start: "), exit.err());
        }
    }

    @Test
    void theHelpListsTheExitStatuses() {
        Exit help = run("server", "--help");
        assertEquals(0, help.code(), help.err());
        String text = help.out().replaceAll("\\s+", " ");   // as wrapped for the terminal
        assertTrue(text.contains("Exit status: 1 failed; restart it") && text.contains(" 2 a bad command line")
                && text.contains(" 3 refused; do not restart it") && text.contains(" 143 stopped by SIGTERM"),
                help.out());
    }

    @Test
    void thePerUserQuotasAreInTheHelpWithTheirDefaultsAndZeroIsRefused() {
        String text = run("server", "--help").out().replaceAll("\\s+", " ");
        assertTrue(text.contains("--max-leases-per-user") && text.contains("(default: 10000)")
                && text.contains("--max-sessions-per-user") && text.contains("(default: 1000)"), text);
        assertRefused(args("--max-leases-per-user", "0"), "--max-leases-per-user must be at least 1, got 0");
        assertRefused(args("--max-sessions-per-user", "0"), "--max-sessions-per-user must be at least 1, got 0");
    }

    @Test
    void tokenLifetimeAndBcryptCostAreInTheHelpAndOutOfRangeValuesAreRefused() {
        String text = run("server", "--help").out().replaceAll("\\s+", " ");
        assertTrue(text.contains("--auth-token-ttl") && text.contains("(default: 300, as etcd's)")
                && text.contains("--bcrypt-cost") && text.contains("(default: 10, as etcd's;"), text);
        assertRefused(args("--auth-token-ttl", "0"), "--auth-token-ttl must be at least 1 second, got 0");
        assertRefused(args("--auth-token-ttl", "9223372036854775807"),
                "--auth-token-ttl must be at most 31536000 seconds (a year), got 9223372036854775807");
        assertRefused(args("--bcrypt-cost", "3"), "--bcrypt-cost must be between 4 and 31, got 3");
        assertRefused(args("--bcrypt-cost", "32"), "--bcrypt-cost must be between 4 and 31, got 32");
    }

    @Test
    void aNameOutsideTheInitialClusterIsRefused() {
        assertRefused(args("--name", "n9"), "--name n9 is not in --initial-cluster");
    }

    @Test
    void aPeerAddressThatDiffersFromTheClusterEntryIsRefused() {
        assertRefused(args("--listen-peer", "127.0.0.1:9999"), "differs from n1's entry");
    }

    @Test
    void anElectionTimeoutThatIsNotAMultipleOfTheHeartbeatIsRefused() {
        assertRefused(args("--election-ms", "250"), "--election-ms must be a multiple of --heartbeat-ms");
    }

    @Test
    void anElectionTimeoutUnderFiveHeartbeatsIsRefused() {
        assertRefused(args("--heartbeat-ms", "200", "--election-ms", "800"),
                "--election-ms must be at least 5 times --heartbeat-ms (as etcd requires), got --election-ms 800"
                        + " and --heartbeat-ms 200");
    }

    @Test
    void aHeartbeatBelowTenMillisecondsIsRefused() {
        assertRefused(args("--heartbeat-ms", "5", "--election-ms", "50"), "--heartbeat-ms must be at least 10, got 5");
    }

    @Test
    void httpOnThePeerAddressIsRefused() {
        assertRefused(args("--http", "127.0.0.1:7101"), "--http must differ from --listen-client and --listen-peer");
    }

    @Test
    void aMalformedInitialClusterEntryIsRefused() {
        assertRefused(args("--initial-cluster", "n1=127.0.0.1:7101,n2"), "--initial-cluster entries must be name=host:port");
    }

    @Test
    void clientAndPeerOnTheSameAddressAreRefused() {
        assertRefused(args("--listen-client", "127.0.0.1:7101"), "--listen-client and --listen-peer must differ");
    }

    @Test
    void aMalformedAddressIsRefused() {
        assertRefused(args("--listen-client", "localhost"), "--listen-client 'localhost': it has no port");
    }

    @Test
    void aMissingFlagIsRefused() {
        assertRefused(new String[] {"server", "--name", "n1"}, "Missing required options");
    }

    @Test
    void membersAreNumberedByTheirPositionInTheInitialCluster() {
        Map<String, InetSocketAddress> cluster = new LinkedHashMap<>();
        cluster.put("b", new InetSocketAddress("127.0.0.1", 7101));
        cluster.put("a", new InetSocketAddress("127.0.0.1", 7102));
        ServerConfig config = ServerConfig.builder("a").dataDir(dir).listenClient(new InetSocketAddress("127.0.0.1", 0))
                .listenPeer(cluster.get("a")).initialCluster(cluster).clusterId("c").heartbeatMs(100).electionMs(1000)
                .snapshotCount(10_000).maxRequestBytes(1 << 20).requestTimeout(Duration.ofSeconds(5))
                .watchProgressInterval(Duration.ofSeconds(10)).build();
        assertEquals(2, config.memberId());
        assertEquals(1, config.idOf("b"));
        assertEquals(1500, config.minLeaseTtlMs(), "1.5 x election timeout");
    }

    @Test
    void aBadInitialClusterStateIsRefused() {
        assertRefused(args("--initial-cluster-state", "joining"), "--initial-cluster-state must be new or existing");
    }

    @Test
    void explicitIdsAreAllOrNone() {
        assertRefused(args("--initial-cluster", "n1=1@127.0.0.1:7101,n2=127.0.0.1:7102"),
                "--initial-cluster must give an id to every member or to none");
        assertRefused(args("--initial-cluster", "n1=x@127.0.0.1:7101"), "has an id that is not a number");
        assertRefused(args("--initial-cluster", "n1=0@127.0.0.1:7101"), "has an id that is not a number of 1 or more");
        assertRefused(args("--initial-cluster", "n1=127.0.0.1:7101,n 2=127.0.0.1:71020"),
                "--initial-cluster name 'n 2' has a character other than letters");
        assertRefused(args("--initial-cluster", "n1=127.0.0.1:7101,n2=127.0.0.1:71020"),
                "--initial-cluster n2 '127.0.0.1:71020': port 71020 is out of range 1–65535");
        assertRefused(args("--initial-cluster", "n1=1@127.0.0.1:7101,n2=1@127.0.0.1:7102"), "the same id");
    }

    @Test
    void aJoiningMemberHasItsExplicitIdAndIsNoVoterOfItsBootstrapConfiguration() {
        Map<String, InetSocketAddress> cluster = new LinkedHashMap<>();
        cluster.put("n1", new InetSocketAddress("127.0.0.1", 7101));
        cluster.put("n4", new InetSocketAddress("127.0.0.1", 7104));
        ServerConfig config = ServerConfig.builder("n4").dataDir(dir).listenClient(new InetSocketAddress("127.0.0.1", 0))
                .listenPeer(cluster.get("n4")).initialCluster(cluster).memberIds(Map.of("n1", 1L, "n4", 4L))
                .initialClusterState(ServerConfig.ClusterState.EXISTING).build();
        assertEquals(4, config.memberId());
        assertEquals(java.util.Set.of(1L), config.nodeConfig().raft().configuration().voters(),
                "it learns the real configuration from the leader");
        assertEquals(java.util.Set.of(1L), config.transportConfig().peers().keySet());
    }
}
