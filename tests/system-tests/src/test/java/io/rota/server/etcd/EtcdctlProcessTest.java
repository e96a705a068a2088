package io.rota.server.etcd;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.rota.etcd.api.ClusterGrpc;
import io.rota.etcd.api.KVGrpc;
import io.rota.etcd.api.KeyValue;
import io.rota.etcd.api.Member;
import io.rota.etcd.api.MemberListRequest;
import io.rota.etcd.api.PutRequest;
import io.rota.etcd.api.PutResponse;
import io.rota.etcd.api.RangeRequest;
import io.rota.etcd.api.RangeResponse;
import io.rota.server.RotaServer;
import io.rota.server.backup.BackupFile;
import io.rota.server.ServerConfig;
import io.rota.testkit.Await;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static io.rota.testkit.Ports.freePort;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * etcd's own CLI, etcdctl (v3 API; Debian's etcd-client package), against a three-member Rota with
 * {@code --listen-etcd} on every member: put/get with prefixes, ranges and options, del, txn from standard
 * input, watch from a revision with prev-kv, leases, lock and elect (etcdctl's client-side recipes on KV,
 * Lease and Watch; elect with a second candidate taking over), compaction, snapshot save, endpoint
 * status/health, alarm list/disarm, member list and member update. Each etcdctl test is skipped, saying so, where etcdctl is not installed
 * ({@code apt-get install etcd-client}). Two checks through generated stubs share the three members and
 * run everywhere: a put on a follower's etcd port is forwarded and applied once, and every member's member
 * list names every member's etcd URL. A failsafe test: it runs etcdctl processes.
 */
@Tag("process")
class EtcdctlProcessTest {

    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(30);

    @TempDir
    static Path dir;
    private static final List<RotaServer> servers = new ArrayList<>();
    private static final List<ManagedChannel> channels = new ArrayList<>();
    private static String etcdctl;
    private static String endpoints;

    @BeforeAll
    static void start() {
        etcdctl = find().orElse(null);
        Map<String, InetSocketAddress> cluster = new LinkedHashMap<>();
        for (int i = 1; i <= 3; i++) {
            cluster.put("n" + i, new InetSocketAddress("127.0.0.1", freePort()));
        }
        StringBuilder e = new StringBuilder();
        for (int i = 1; i <= 3; i++) {
            int etcdPort = freePort();
            RotaServer s = RotaServer.start(ServerConfig.builder("n" + i).dataDir(dir.resolve("n" + i))
                    .listenClient(new InetSocketAddress("127.0.0.1", 0)).listenPeer(cluster.get("n" + i))
                    .initialCluster(cluster).clusterId("etcdctl-test").heartbeatMs(50).electionMs(500)
                    .listenEtcd(new InetSocketAddress("127.0.0.1", etcdPort)).build());
            servers.add(s);
            channels.add(NettyChannelBuilder.forAddress(s.etcdAddress()).usePlaintext().build());
            e.append(i == 1 ? "" : ",").append("127.0.0.1:").append(etcdPort);
        }
        endpoints = e.toString();
        Await.until(Duration.ofSeconds(30), () -> servers.stream().anyMatch(s -> s.view().isLeader()),
                "a leader among the three members");
    }

    private static void assumeEtcdctl() {
        Assumptions.assumeTrue(etcdctl != null, "SKIPPED: etcdctl is not on the PATH; install it (Debian:"
                + " apt-get install etcd-client) to run etcd's own CLI against Rota");
    }

    @AfterAll
    static void stop() throws InterruptedException {
        for (ManagedChannel c : channels) {
            c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        servers.forEach(RotaServer::close);
    }

    private static Optional<String> find() {
        return Stream.of(System.getenv().getOrDefault("PATH", "").split(File.pathSeparator))
                .map(p -> Path.of(p, "etcdctl")).filter(Files::isExecutable).map(Path::toString).findFirst();
    }

    /** Run etcdctl with {@code args} (and {@code stdin}); its exit code must be 0; its output. */
    private static String ok(String stdin, String... args) throws IOException, InterruptedException {
        Run r = run(stdin, args);
        assertEquals(0, r.exit(), "etcdctl " + String.join(" ", args) + ":\n" + r.output());
        return r.output();
    }

    /** {@link #ok} inside an {@link Await} condition. */
    private static String polled(String... args) {
        try {
            return ok(null, args);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /** What one etcdctl run came to. */
    private record Run(int exit, String output) {
    }

    /** Run etcdctl with {@code args} (and {@code stdin}) to its end; the three endpoints unless args name some. */
    private static Run run(String stdin, String... args) throws IOException, InterruptedException {
        assumeEtcdctl();
        List<String> cmd = new ArrayList<>(List.of(etcdctl, "--command-timeout=20s"));
        if (!args[0].startsWith("--endpoints=")) {
            cmd.add("--endpoints=" + endpoints);
        }
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().put("ETCDCTL_API", "3");
        Process p = pb.start();
        if (stdin != null) {
            p.getOutputStream().write(stdin.getBytes(StandardCharsets.UTF_8));
        }
        p.getOutputStream().close();
        if (!p.waitFor(COMMAND_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("etcdctl " + String.join(" ", args) + " did not finish in " + COMMAND_TIMEOUT);
        }
        return new Run(p.exitValue(), new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
    }

    /** Start etcdctl in the background, its output to {@code out}. */
    private static Process background(Path out, String... args) throws IOException {
        assumeEtcdctl();
        List<String> cmd = new ArrayList<>(List.of(etcdctl, "--endpoints=" + endpoints));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile());
        pb.environment().put("ETCDCTL_API", "3");
        return pb.start();
    }

    private static String read(Path f) {
        try {
            return Files.readString(f);
        } catch (IOException e) {
            return "";
        }
    }

    @Test
    void kvCommands() throws Exception {
        assertEquals("OK\n", ok(null, "put", "app/a", "1"));
        ok(null, "put", "app/b", "2");
        ok(null, "put", "app/c", "3");
        assertEquals("app/a\n1\napp/b\n2\napp/c\n3\n", ok(null, "get", "--prefix", "app/"));
        assertEquals("app/a\n1\napp/b\n2\n", ok(null, "get", "app/a", "app/c"));
        assertEquals("app/c\n3\n", ok(null, "get", "--prefix", "app/", "--sort-by=KEY", "--order=DESCEND",
                "--limit=1"));
        assertEquals("app/a\n\napp/b\n\napp/c\n\n", ok(null, "get", "--prefix", "app/", "--keys-only"));
        assertEquals("app/b\n2\n", ok(null, "get", "app/b", "--consistency=s"));
        assertTrue(ok(null, "get", "app/a", "-w", "json").contains("\"raft_term\""));
        assertEquals("2\n", ok(null, "del", "app/a", "app/c"));   // [app/a, app/c): a and b
        assertEquals("1\napp/c\n3\n", ok(null, "del", "--prefix", "app/", "--prev-kv"));
    }

    @Test
    void txnFromStandardInput() throws Exception {
        ok(null, "put", "txn/k", "v1");
        assertEquals("SUCCESS\n\nOK\n\ntxn/k\nv2\n", ok("value(\"txn/k\") = \"v1\"\n\nput txn/k v2\nget txn/k\n\n"
                + "get txn/k\n\n", "txn"));
        assertEquals("FAILURE\n\ntxn/k\nv2\n", ok("value(\"txn/k\") = \"v1\"\n\nput txn/k v3\n\nget txn/k\n\n", "txn"));
    }

    @Test
    void watchFromARevisionWithPrevKv() throws Exception {
        ok(null, "put", "watch/k", "v1");
        String json = ok(null, "get", "watch/k", "-w", "json");
        long rev = Long.parseLong(json.replaceAll("(?s).*\"mod_revision\":(\\d+).*", "$1"));
        ok(null, "put", "watch/k", "v2");
        Path out = dir.resolve("watch.out");
        Process watch = background(out, "watch", "watch/k", "--rev=" + rev, "--prev-kv");
        try {
            Await.until(Duration.ofSeconds(20), () -> read(out).contains("v1\nPUT\nwatch/k\nv1\nwatch/k\nv2"),
                    "the history from revision " + rev + " with prev-kv, got:\n" + read(out));
            ok(null, "put", "watch/k", "v3");
            Await.until(Duration.ofSeconds(20), () -> read(out).contains("watch/k\nv2\nwatch/k\nv3"),
                    "the live put, got:\n" + read(out));
        } finally {
            watch.destroy();
        }
    }

    @Test
    void leaseGrantTimeToLiveKeepAliveRevoke() throws Exception {
        String granted = ok(null, "lease", "grant", "30");
        String id = granted.split(" ")[1];
        ok(null, "put", "lease/k", "v", "--lease=" + id);
        assertTrue(ok(null, "lease", "timetolive", id, "--keys").contains("attached keys([lease/k])"));
        assertTrue(ok(null, "lease", "list").contains(id));
        assertTrue(ok(null, "lease", "keep-alive", "--once", id).contains("keepalived with TTL(30)"));
        assertTrue(ok(null, "lease", "revoke", id).contains("revoked"));
        assertEquals("", ok(null, "get", "lease/k"));
        assertTrue(ok(null, "lease", "timetolive", id).contains("already expired"));
    }

    @Test
    void lockAndElect() throws Exception {
        assertEquals("held\n", ok(null, "lock", "locks/one", "echo", "held"));
        Path out = dir.resolve("elect.out");
        Process candidate = background(out, "elect", "elections/one", "alice");
        try {
            Await.until(Duration.ofSeconds(20), () -> read(out).contains("alice"), "alice to lead, got: " + read(out));
            String leader = ok(null, "get", "--prefix", "elections/one");
            assertTrue(leader.endsWith("alice\n"), leader);
        } finally {
            candidate.destroy();
        }
    }

    @Test
    void electWithASecondCandidateTakingOver() throws Exception {
        Path aliceOut = dir.resolve("alice.out");
        Path bobOut = dir.resolve("bob.out");
        Path observerOut = dir.resolve("observer.out");
        Process alice = background(aliceOut, "elect", "elections/two", "alice");
        Process bob = null;
        Process observer = null;
        try {
            Await.until(Duration.ofSeconds(20), () -> read(aliceOut).contains("alice"), "alice to lead, got: "
                    + read(aliceOut));
            observer = background(observerOut, "elect", "-l", "elections/two");
            Await.until(Duration.ofSeconds(20), () -> read(observerOut).contains("alice"),
                    "the observer to see alice, got: " + read(observerOut));
            bob = background(bobOut, "elect", "elections/two", "bob");
            Await.until(Duration.ofSeconds(20), () -> polled("get", "--prefix", "elections/two/", "--keys-only")
                    .lines().filter(l -> !l.isEmpty()).count() == 2, "bob to queue behind alice");
            assertFalse(read(bobOut).contains("bob"), "bob led while alice did: " + read(bobOut));
            alice.destroy();   // etcdctl resigns on a signal; its lease would end the leadership anyway
            Await.until(Duration.ofSeconds(30), () -> read(bobOut).contains("bob"), "bob to take over, got: "
                    + read(bobOut));
            Await.until(Duration.ofSeconds(20), () -> read(observerOut).contains("bob"),
                    "the observer to see bob, got: " + read(observerOut));
        } finally {
            alice.destroy();
            if (bob != null) {
                bob.destroy();
            }
            if (observer != null) {
                observer.destroy();
            }
        }
    }

    @Test
    void compactionThenAReadBelowIsCompacted() throws Exception {
        ok(null, "put", "compact/k", "v1");
        long old = modRevision("compact/k");
        ok(null, "put", "compact/k", "v2");
        long at = modRevision("compact/k");
        assertEquals("compacted revision " + at + "\n", ok(null, "compaction", Long.toString(at)));
        assertEquals("compact/k\nv2\n", ok(null, "get", "compact/k", "--rev=" + at));
        Run below = run(null, "get", "compact/k", "--rev=" + old);
        assertNotEquals(0, below.exit(), below.output());
        assertTrue(below.output().contains("required revision has been compacted"), below.output());
    }

    private static long modRevision(String key) throws IOException, InterruptedException {
        return Long.parseLong(ok(null, "get", key, "-w", "json").replaceAll("(?s).*\"mod_revision\":(\\d+).*", "$1"));
    }

    @Test
    void snapshotSaveWritesARotaBackup() throws Exception {
        ok(null, "put", "snap/k", "v");
        Path file = dir.resolve("etcdctl-snapshot.db");
        // etcdctl saves from one endpoint only.
        String out = ok(null, "--endpoints=" + endpoints.split(",")[0], "snapshot", "save", file.toString());
        assertTrue(out.contains("Snapshot saved at " + file), out);
        BackupFile backup = BackupFile.read(file);
        assertTrue(backup.image().getKvsList().stream().anyMatch(kv -> kv.getKey().toStringUtf8().equals("snap/k")),
                "the saved image holds the key");
    }

    @Test
    void endpointStatusHealthAndMemberList() throws Exception {
        String status = ok(null, "endpoint", "status", "-w", "table");
        assertTrue(status.contains("true"), "one member leads:\n" + status);
        assertEquals(3, ok(null, "endpoint", "health").lines().filter(l -> l.contains("is healthy")).count());
        assertEquals("", ok(null, "alarm", "list"), "no alarm is armed");
        assertEquals("", ok(null, "alarm", "disarm"), "disarming lists what is still armed: nothing");
        Await.until(Duration.ofSeconds(20), () -> everyMemberWithItsClientUrl(polled("member", "list")),
                "every member with its etcd URL as client URL in etcdctl member list");
    }

    /** Whether an etcdctl member list names every member, each with its etcd URL as its client URL. */
    private static boolean everyMemberWithItsClientUrl(String members) {
        return members.lines().count() == 3 && servers.stream().allMatch(s -> members.lines().anyMatch(l ->
                l.contains(", " + s.config().name() + ", ")
                        && l.contains("http://127.0.0.1:" + s.etcdAddress().getPort())));
    }

    /**
     * etcdctl's {@code member update}: to the address the member has (harmless on the shared members: nobody
     * redials), answered as etcd answers it, the list unchanged; an unknown id is etcd's "member not found".
     */
    @Test
    void memberUpdateToTheSameAddressAndAnUnknownId() throws Exception {
        String name = servers.get(2).config().name();
        // A member's name comes from the configuration, its client URL from its publication as the answering
        // member has applied it, which can come later; and etcdctl may ask any of the endpoints. Wait until every
        // member answers with every URL, or "before" can lack one that "after" has (stop 28's CI run).
        for (String endpoint : endpoints.split(",")) {
            Await.until(Duration.ofSeconds(20),
                    () -> everyMemberWithItsClientUrl(polled("--endpoints=" + endpoint, "member", "list")),
                    "every member with its client URL, as " + endpoint + " lists them");
        }
        String before = ok(null, "member", "list");
        String line = before.lines().filter(l -> l.contains(", " + name + ", ")).findFirst().orElseThrow();
        String[] fields = line.split(", ");   // ID, status, name, peer URLs, client URLs, is learner
        String updated = ok(null, "member", "update", fields[0], "--peer-urls=" + fields[3]);
        // etcdctl pads the id to 16 characters (%16x): "Member                3 updated in cluster 9b2a...".
        assertTrue(updated.strip().matches("Member +" + fields[0] + " updated in cluster [0-9a-f]+"), updated);
        assertEquals(before, ok(null, "member", "list"), "the same address: the same list");

        Run unknown = run(null, "member", "update", "badcafe", "--peer-urls=http://127.0.0.1:1");
        assertNotEquals(0, unknown.exit(), unknown.output());
        assertTrue(unknown.output().contains("etcdserver: member not found"), unknown.output());
    }

    // ---- through generated stubs: no etcdctl needed -------------------------------------------------------

    private static KVGrpc.KVBlockingStub kv(int member) {
        return KVGrpc.newBlockingStub(channels.get(member)).withDeadlineAfter(20, TimeUnit.SECONDS);
    }

    @Test
    @DisplayName("a Put on a follower's etcd port is forwarded to the leader and applied exactly once")
    void putOnAFollowerIsForwardedAndAppliedOnce() {
        int f = 0;
        while (servers.get(f).view().isLeader()) {
            f++;
        }
        ByteString key = ByteString.copyFromUtf8("fwd/k");
        PutResponse put = kv(f).put(PutRequest.newBuilder().setKey(key).setValue(ByteString.copyFromUtf8("v"))
                .setPrevKv(true).build());
        assertFalse(put.hasPrevKv(), "the key was new");
        long revision = put.getHeader().getRevision();
        for (int i = 0; i < servers.size(); i++) {
            // A linearizable read on every member: one version, created by that put.
            RangeResponse r = kv(i).range(RangeRequest.newBuilder().setKey(key).build());
            KeyValue kv = r.getKvs(0);
            assertEquals(1, kv.getVersion(), "applied once, on member " + (i + 1));
            assertEquals(revision, kv.getCreateRevision());
            assertEquals(revision, kv.getModRevision());
        }
    }

    @Test
    @DisplayName("MemberList names every member with its peer URL and its etcd URL as client URL, from any member")
    void memberListNamesEveryMembersEtcdUrl() {
        for (int i = 0; i < servers.size(); i++) {
            ClusterGrpc.ClusterBlockingStub cluster = ClusterGrpc.newBlockingStub(channels.get(i));
            Await.until(Duration.ofSeconds(20), () -> cluster.withDeadlineAfter(10, TimeUnit.SECONDS)
                    .memberList(MemberListRequest.getDefaultInstance()).getMembersList().stream()
                    .allMatch(m -> m.getClientURLsCount() == 1), "every member's etcd URL in member " + (i + 1)
                    + "'s list");
            List<Member> members = cluster.withDeadlineAfter(10, TimeUnit.SECONDS)
                    .memberList(MemberListRequest.getDefaultInstance()).getMembersList();
            assertEquals(3, members.size());
            for (Member m : members) {
                RotaServer s = servers.get((int) m.getID() - 1);
                assertEquals(List.of("http://127.0.0.1:" + s.etcdAddress().getPort()), m.getClientURLsList());
                assertEquals(List.of("http://127.0.0.1:" + s.config().advertisedPeer().getPort()), m.getPeerURLsList());
            }
        }
    }

    /**
     * etcdctl's user, role and auth commands against Rota, then {@code --user} calls allowed and refused as
     * etcd refuses them. Auth is disabled again at the end (the members are shared with the other tests).
     */
    @Test
    void userRoleAndAuthWithUserFlag() throws Exception {
        ok(null, "user", "add", "root", "--new-user-password=root-pw");
        ok(null, "user", "grant-role", "root", "root");
        ok(null, "role", "add", "app-a-rw");
        ok(null, "role", "grant-permission", "app-a-rw", "readwrite", "app-a/", "--prefix=true");
        ok(null, "user", "add", "carol", "--new-user-password=carol-pw");
        ok(null, "user", "grant-role", "carol", "app-a-rw");
        ok(null, "auth", "enable");
        try {
            assertEquals("OK\n", ok(null, "--user=carol:carol-pw", "put", "app-a/one", "1"));
            assertTrue(ok(null, "--user=carol:carol-pw", "get", "app-a/one").contains("1"));
            Run refused = run(null, "--user=carol:carol-pw", "put", "app-b/one", "1");
            assertTrue(refused.exit() != 0 && refused.output().contains("etcdserver: permission denied"), refused.output());
            Run anonymous = run(null, "get", "app-a/one");
            assertTrue(anonymous.exit() != 0 && anonymous.output().contains("etcdserver: user name is empty"),
                    anonymous.output());
            Run wrong = run(null, "--user=carol:nope", "get", "app-a/one");
            assertTrue(wrong.exit() != 0 && wrong.output().contains("authentication failed, invalid user ID or password"),
                    wrong.output());
            assertTrue(ok(null, "--user=root:root-pw", "user", "list").contains("carol"));
            assertTrue(ok(null, "--user=root:root-pw", "role", "get", "app-a-rw").contains("app-a/"));
        } finally {
            ok(null, "--user=root:root-pw", "auth", "disable");
        }
        ok(null, "user", "delete", "carol");
        ok(null, "role", "delete", "app-a-rw");
        ok(null, "user", "delete", "root");
    }
}
