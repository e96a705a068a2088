package io.rota.server.etcd;

import io.rota.server.RotaServer;
import io.rota.server.ServerConfig;
import io.rota.testkit.Await;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
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
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * etcd's own CLI, etcdctl (v3 API; Debian's etcd-client package), against a three-member Rota with
 * {@code --listen-etcd} on every member: put/get with prefixes, ranges and options, del, txn from standard
 * input, watch from a revision with prev-kv, leases, lock and elect (etcdctl's client-side recipes on KV,
 * Lease and Watch), endpoint status/health and member list. Skipped, saying so, where etcdctl is not
 * installed ({@code apt-get install etcd-client}). A failsafe test: it runs etcdctl processes.
 */
class EtcdctlProcessTest {

    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(30);

    @TempDir
    static Path dir;
    private static final List<RotaServer> servers = new ArrayList<>();
    private static String etcdctl;
    private static String endpoints;

    @BeforeAll
    static void start() {
        etcdctl = find().orElse(null);
        Assumptions.assumeTrue(etcdctl != null, "SKIPPED: etcdctl is not on the PATH; install it (Debian:"
                + " apt-get install etcd-client) to run etcd's own CLI against Rota");
        Map<String, InetSocketAddress> cluster = new LinkedHashMap<>();
        for (int i = 1; i <= 3; i++) {
            cluster.put("n" + i, new InetSocketAddress("127.0.0.1", freePort()));
        }
        StringBuilder e = new StringBuilder();
        for (int i = 1; i <= 3; i++) {
            int etcdPort = freePort();
            servers.add(RotaServer.start(ServerConfig.builder("n" + i).dataDir(dir.resolve("n" + i))
                    .listenClient(new InetSocketAddress("127.0.0.1", 0)).listenPeer(cluster.get("n" + i))
                    .initialCluster(cluster).clusterId("etcdctl-test").heartbeatMs(50).electionMs(500)
                    .listenEtcd(new InetSocketAddress("127.0.0.1", etcdPort)).build()));
            e.append(i == 1 ? "" : ",").append("127.0.0.1:").append(etcdPort);
        }
        endpoints = e.toString();
        Await.until(Duration.ofSeconds(30), () -> servers.stream().anyMatch(s -> s.view().isLeader()),
                "a leader among the three members");
    }

    @AfterAll
    static void stop() {
        servers.forEach(RotaServer::close);
    }

    private static Optional<String> find() {
        return Stream.of(System.getenv().getOrDefault("PATH", "").split(File.pathSeparator))
                .map(p -> Path.of(p, "etcdctl")).filter(Files::isExecutable).map(Path::toString).findFirst();
    }

    /** Run etcdctl with {@code args} (and {@code stdin}); its exit code must be 0; its output. */
    private static String ok(String stdin, String... args) throws IOException, InterruptedException {
        Result r = run(stdin, args);
        assertEquals(0, r.exit(), "etcdctl " + String.join(" ", args) + ":\n" + r.out());
        return r.out();
    }

    /** What an etcdctl run printed (standard output and error together) and its exit code. */
    record Result(int exit, String out) {
    }

    /** Run etcdctl with {@code args} (and {@code stdin}), whatever its exit code. */
    private static Result run(String stdin, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(etcdctl, "--endpoints=" + endpoints, "--command-timeout=20s"));
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
        return new Result(p.exitValue(), new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
    }

    /** Start etcdctl in the background, its output to {@code out}. */
    private static Process background(Path out, String... args) throws IOException {
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
    void endpointStatusHealthAndMemberList() throws Exception {
        String status = ok(null, "endpoint", "status", "-w", "table");
        assertTrue(status.contains("true"), "one member leads:\n" + status);
        assertEquals(3, ok(null, "endpoint", "health").lines().filter(l -> l.contains("is healthy")).count());
        String members = ok(null, "member", "list");
        assertEquals(3, members.lines().count(), members);
        assertTrue(members.contains("n1") && members.contains("n2") && members.contains("n3"), members);
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
            Result refused = run(null, "--user=carol:carol-pw", "put", "app-b/one", "1");
            assertTrue(refused.exit() != 0 && refused.out().contains("etcdserver: permission denied"), refused.out());
            Result anonymous = run(null, "get", "app-a/one");
            assertTrue(anonymous.exit() != 0 && anonymous.out().contains("etcdserver: user name is empty"),
                    anonymous.out());
            Result wrong = run(null, "--user=carol:nope", "get", "app-a/one");
            assertTrue(wrong.exit() != 0 && wrong.out().contains("authentication failed, invalid user ID or password"),
                    wrong.out());
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
