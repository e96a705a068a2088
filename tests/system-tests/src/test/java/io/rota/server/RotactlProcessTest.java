package io.rota.server;

import io.rota.server.RotactlRunner.Background;
import io.rota.server.RotactlRunner.Run;
import io.rota.testkit.Await;
import io.rota.testkit.RepositoryRoot;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.TestMethodOrder;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.rota.server.RotactlRunner.assertOk;
import static io.rota.server.RotactlRunner.revision;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every rotactl command against three real server processes, run in-process with captured streams (and
 * once through {@code scripts/rotactl} as a real process): outputs in each format, exit codes, and the
 * errors a user must understand (unknown lease, missing key, unreachable cluster, a member down).
 * The last test kills a member, so the order is fixed.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Tag("process")
class RotactlProcessTest {

    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final Pattern GRANTED = Pattern.compile("lease ([0-9a-f]{16}) granted with TTL\\((\\d+)s\\)");

    @RegisterExtension
    static final SharedProcessCluster CLUSTER = new SharedProcessCluster();

    @Test
    @Order(1)
    void putGetDelInEveryFormat() {
        assertOk(rotactl("put", "cfg/a", "one"), "OK\n");
        assertOk(rotactl("put", "cfg/b", "two words", "--prev-kv"), "OK\n");
        long before = revision(rotactl("get", "cfg/b", "-w", "json").out());
        assertOk(rotactl("put", "cfg/b", "2", "--prev-kv"), "OK\ncfg/b\ntwo words\n");

        Run get = rotactl("get", "cfg/b", "-w", "simple");
        assertOk(get, "cfg/b\n2\n");
        assertEquals("2", get.lines().get(get.lines().size() - 1), "the value is alone on the last line");

        Run json = rotactl("get", "cfg/a", "-w", "json");
        assertEquals(0, json.exitCode(), json.toString());
        assertTrue(json.out().matches("\\{\"header\":\\{\"revision\":\\d+},\"kvs\":\\[\\{\"key\":\"Y2ZnL2E=\",\"create_revision\":\\d+,"
                + "\"mod_revision\":\\d+,\"version\":1,\"value\":\"b25l\"}],\"count\":1,\"more\":false}\n"), json.out());

        Run table = rotactl("get", "cfg/", "--prefix", "-w", "table");
        assertEquals(0, table.exitCode(), table.toString());
        assertEquals(6, table.lines().size(), table.out());
        assertTrue(table.lines().get(1).matches("\\| +KEY +\\| +VALUE +\\| CREATE_REVISION \\| MOD_REVISION \\| VERSION \\| +LEASE +\\|"),
                table.out());
        assertTrue(table.lines().get(4).matches("\\| cfg/b \\| 2 +\\| +\\d+ \\| +\\d+ \\| +2 \\| - +\\|"), table.out());

        assertOk(rotactl("get", "cfg/", "--prefix", "--keys-only"), "cfg/a\ncfg/b\n");
        assertOk(rotactl("get", "cfg/", "--prefix", "--print-value-only"), "one\n2\n");
        assertOk(rotactl("get", "cfg/", "--prefix", "--count-only"), "2\n");
        Run limited = rotactl("get", "cfg/", "--prefix", "--limit", "1");
        assertEquals("cfg/a\none\n", limited.out(), limited.toString());
        assertEquals("(1 of 2 keys shown: --limit 1; raise --limit, or narrow the range, to see the rest)\n", limited.err());
        assertOk(rotactl("get", "cfg/", "--prefix", "--serializable", "--endpoints", CLUSTER.get().endpoint(2)),
                "cfg/a\none\ncfg/b\n2\n");
        assertOk(rotactl("get", "cfg/b", "--rev", Long.toString(before)), "cfg/b\ntwo words\n");
        assertOk(rotactl("get", "cfg/missing"), "");

        Run del = rotactl("del", "cfg/missing");
        assertEquals(1, del.exitCode(), del.toString());
        assertEquals("Error: key \"cfg/missing\" not found; nothing deleted\n", del.err());
        assertEquals("", del.out());
        assertOk(rotactl("del", "cfg/", "--prefix", "--prev-kv"), "2\ncfg/a\none\ncfg/b\n2\n");
        assertEquals(1, rotactl("del", "cfg/", "--prefix").exitCode());
    }

    @Test
    @Order(2)
    void txnRunsOneBranchAndRejectsBadSyntaxWithTheLine() {
        String txn = """
                version("job/owner") = "0"

                put job/owner "app 1"
                get job/owner

                get job/owner
                """;
        assertOk(rotactlIn(txn, "txn"), "SUCCESS\n\nOK\n\njob/owner\napp 1\n");
        assertOk(rotactlIn(txn, "txn"), "FAILURE\n\njob/owner\napp 1\n");
        Run json = rotactlIn("value(\"job/owner\") = \"app 1\"\n\ndel job/owner\n", "txn", "-w", "json");
        assertEquals(0, json.exitCode(), json.toString());
        assertTrue(json.out().contains("\"succeeded\":true,\"responses\":[{\"response_delete_range\":{\"header\":"),
                json.out());
        assertTrue(json.out().contains("\"deleted\":1"), json.out());

        Run bad = rotactlIn("mod(\"k\") > \"0\"\n\nput k\n", "txn");
        assertEquals(2, bad.exitCode(), bad.toString());
        assertEquals("Error: txn line 3: put takes KEY VALUE (quote a value with spaces), got 'put k';"
                + " see 'rotactl txn --help'\n", bad.err());
    }

    @Test
    @Order(3)
    void watchPrintsEachEventAsItComesUntilStopped() throws Exception {
        long from = revision(rotactl("get", "w/", "--prefix", "-w", "json").out()) + 1;
        Background watch = background("watch", "w/", "--prefix", "--prev-kv", "--rev", Long.toString(from));
        assertOk(rotactl("put", "w/1", "a"), "OK\n");
        assertOk(rotactl("put", "w/1", "b"), "OK\n");
        assertOk(rotactl("del", "w/1"), "1\n");
        String expected = "PUT\nw/1\na\nPUT\nw/1\na\nw/1\nb\nDELETE\nw/1\nb\nw/1\n\n";
        Await.until(WAIT, () -> watch.out().equals(expected), "the watch prints three events: " + watch.out());
        Run stopped = watch.stop();
        assertEquals(0, stopped.exitCode(), stopped.toString());
        assertEquals(expected, stopped.out());

        Background json = background("watch", "w/2", "--rev", Long.toString(from), "-w", "json");
        assertOk(rotactl("put", "w/2", "x\"y"), "OK\n");
        Await.until(WAIT, () -> json.out().contains("\"value\":\"eCJ5\""), "a JSON event: " + json.out());
        Run jsonRun = json.stop();
        assertTrue(jsonRun.out().matches("\\{\"type\":\"PUT\",\"kv\":\\{\"key\":\"dy8y\",.*}\n"), jsonRun.out());
    }

    @Test
    @Order(4)
    void leaseGrantPutKeepAliveTimeToLiveListRevoke() throws Exception {
        Run grant = rotactl("lease", "grant", "2");
        assertEquals(0, grant.exitCode(), grant.toString());
        Matcher m = GRANTED.matcher(grant.out().trim());
        assertTrue(m.matches(), grant.out());
        String id = m.group(1);
        long ttl = Long.parseLong(m.group(2));
        // Kept alive from the start: a 2 s TTL is shorter than the next five calls can take
        // on a loaded machine (the lease then expired before 'keep-alive --once' and the test failed).
        Background keepAlive = background("lease", "keep-alive", id);
        long start = System.nanoTime();

        assertOk(rotactl("put", "svc/app-1", "alive", "--lease", id), "OK\n");
        Run ttlKeys = rotactl("lease", "timetolive", id, "--keys");
        assertEquals(0, ttlKeys.exitCode(), ttlKeys.toString());
        assertTrue(ttlKeys.out().matches("lease " + id + " granted with TTL\\(" + ttl + "s\\), remaining\\(\\d+s\\), "
                + "attached keys\\(\\[svc/app-1]\\)\n"), ttlKeys.out());
        Run list = rotactl("lease", "list");
        assertTrue(list.out().startsWith("found ") && list.lines().contains(id), list.out());
        assertTrue(rotactl("lease", "list", "-w", "json").out().contains("\"" + id + "\""));
        assertOk(rotactl("lease", "keep-alive", "--once", id), "lease " + id + " keepalived with TTL(" + ttl + ")\n");

        // Kept alive past twice its TTL, the key stays; revoked, the keep-alive says the lease is lost.
        String renewal = "lease " + id + " keepalived with TTL(" + ttl + ")";
        Await.until(WAIT, () -> keepAlive.out().lines().filter(renewal::equals).count() >= 3
                && System.nanoTime() - start > TimeUnit.SECONDS.toNanos(2 * ttl), "renewals: " + keepAlive.out());
        assertOk(rotactl("get", "svc/app-1", "--print-value-only"), "alive\n");
        assertOk(rotactl("lease", "revoke", id), "lease " + id + " revoked\n");
        Run lost = keepAlive.awaitEnd();
        assertEquals(1, lost.exitCode(), lost.toString());
        assertEquals("Error: lease " + id + " is lost: it was revoked or expired, and its keys are deleted\n", lost.err());
        assertOk(rotactl("get", "svc/app-1"), "");

        String notFound = "Error: lease " + id + " not found: it was never granted, was revoked or expired";
        for (Run r : List.of(rotactl("lease", "timetolive", id), rotactl("lease", "revoke", id),
                rotactl("lease", "keep-alive", id), rotactl("put", "k", "v", "--lease", id))) {
            assertEquals(1, r.exitCode(), r.toString());
            assertTrue(r.err().startsWith(notFound), r.err());
        }
        assertTrue(!rotactl("lease", "list").lines().contains(id));
    }

    @Test
    @Order(5)
    void endpointStatusHealthAndMemberList() {
        Run status = rotactl("endpoint", "status");
        assertEquals(0, status.exitCode(), status.toString());
        assertEquals(3, status.lines().size(), status.out());
        for (int i = 0; i < 3; i++) {
            assertTrue(status.lines().get(i).matches(Pattern.quote(CLUSTER.get().endpoint(i)) + ", " + (i + 1) + ", n" + (i + 1)
                    + ", [^,]+, (true|false), \\d+, \\d+, \\d+, \\d+, "), status.out());
        }
        assertEquals(1, status.lines().stream().filter(l -> l.contains(", true, ")).count(), status.out());
        Run json = rotactl("endpoint", "status", "-w", "json");
        assertEquals(1, json.out().split("\"is_leader\":true", -1).length - 1, json.out());
        assertEquals(3, json.out().split("\"raft_term\":", -1).length - 1, json.out());
        Run table = rotactl("endpoint", "status", "-w", "table", "--cluster");
        assertEquals(7, table.lines().size(), table.out());

        Run health = rotactl("endpoint", "health");
        assertEquals(0, health.exitCode(), health.toString());
        assertTrue(health.lines().stream().allMatch(l -> l.matches(".* is healthy: linearizable read took \\d+(ms|\\.?\\d*s)")),
                health.out());

        Run members = rotactl("member", "list");
        assertEquals(0, members.exitCode(), members.toString());
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            expected.add((i + 1) + ", started, n" + (i + 1) + ", 127.0.0.1:" + CLUSTER.get().peerPort(i) + ", "
                    + CLUSTER.get().endpoint(i) + ", false");
        }
        assertEquals(expected, members.lines());
        assertTrue(rotactl("member", "list", "-w", "json").out().contains("{\"id\":2,\"name\":\"n2\","));

        // member update to the address n3 has: harmless on the shared cluster, the list unchanged.
        String n3Peer = "127.0.0.1:" + CLUSTER.get().peerPort(2);
        Run update = rotactl("member", "update", "3", "--peer", n3Peer);
        assertEquals(0, update.exitCode(), update.toString());
        assertEquals("Member 3 updated: peer " + n3Peer, update.lines().get(0), update.out());
        assertEquals(expected, rotactl("member", "list").lines());
        Run unknown = rotactl("member", "update", "99", "--peer", "127.0.0.1:1");
        assertNotEquals(0, unknown.exitCode(), unknown.toString());
        assertTrue(unknown.err().contains("no member 99 in the cluster"), unknown.err());
        Run bad = rotactl("member", "update", "3", "--peer", "nowhere");
        assertNotEquals(0, bad.exitCode(), bad.toString());
        assertTrue(bad.err().contains("'nowhere'"), bad.err());
    }

    @Test
    @Order(6)
    void anUnreachableClusterIsNamed() throws IOException {
        int closed;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closed = s.getLocalPort();
        }
        // The command timeout is long: every cause below is reported at once, long before it.
        Run r = run(Map.of(), "", "get", "k", "--endpoints", "127.0.0.1:" + closed, "--command-timeout", "1m");
        assertEquals(1, r.exitCode(), r.toString());
        assertEquals("Error: cannot reach the cluster at 127.0.0.1:" + closed + " (from --endpoints): UNAVAILABLE: no"
                + " member reachable, nothing was sent to a member (127.0.0.1:" + closed + ": connection refused: nothing"
                + " listens there); is the cluster running (scripts/cluster.sh start), and are these its members' client"
                + " ports?\n", r.err());

        String peer = "127.0.0.1:" + CLUSTER.get().peerPort(0);
        String http = "127.0.0.1:" + CLUSTER.get().httpPort(0);
        Run wrongPorts = run(Map.of(), "", "put", "k", "v", "--endpoints", peer + "," + http, "--command-timeout", "1m");
        assertEquals(1, wrongPorts.exitCode(), wrongPorts.toString());
        assertTrue(wrongPorts.err().contains(peer + ": not a Rota client port: it closed the connection on our first"
                + " request without answering (a member's peer port does"), wrongPorts.err());
        assertTrue(wrongPorts.err().contains(http + ": not a Rota client port: it answered with bytes that are not a"
                + " Rota frame ('HTTP/1.1"), wrongPorts.err());
        assertEquals(1, wrongPorts.err().lines().count(), wrongPorts.err());

        Run unknownHost = run(Map.of("ROTA_ENDPOINTS", "no-such-host.invalid:7001"), "", "get", "k",
                "--command-timeout", "1m");
        assertEquals(1, unknownHost.exitCode(), unknownHost.toString());
        assertTrue(unknownHost.err().startsWith("Error: cannot reach the cluster at no-such-host.invalid:7001 (from"
                + " ROTA_ENDPOINTS): UNAVAILABLE: no member reachable, nothing was sent to a member"
                + " (no-such-host.invalid:7001: unknown host)"), unknownHost.err());
    }

    @Test
    @Order(6)
    void sizeLimitsAreBadValuesThatNameTheLimit() {
        Run key = rotactl("put", "k".repeat(9000), "v");
        assertEquals(2, key.exitCode(), key.toString());
        assertTrue(key.err().startsWith("Error: REQUEST_TOO_LARGE: a key of 9000 bytes is over the cluster's key limit"
                + " of 8192 bytes (8 KiB)"), key.err());

        Run value = RotactlRunner.run(CLUSTER.get().endpoints(), "v".repeat(1_400_000), "put", "big");
        assertEquals(2, value.exitCode(), value.toString());
        assertTrue(value.err().startsWith("Error: REQUEST_TOO_LARGE: a value of 1400000 bytes is over the cluster's"
                + " value limit of 1048576 bytes (1 MiB)"), value.err());

        Run frame = RotactlRunner.run(CLUSTER.get().endpoints(), "v".repeat(10_000_000), "put", "huge");
        assertEquals(2, frame.exitCode(), frame.toString());
        assertTrue(frame.err().startsWith("Error: REQUEST_TOO_LARGE: a request of "), frame.err());
        assertTrue(frame.err().contains("bytes is over this member's limit of " + (ServerConfig.DEFAULT_MAX_REQUEST_BYTES
                + ServerConfig.FRAME_ENVELOPE_BYTES) + " bytes per request (its --max-request-bytes"), frame.err());
        assertOk(rotactl("put", "after-the-refusals", "ok"), "OK\n");
    }

    @Test
    @Order(7)
    void theLauncherScriptRunsTheJar() throws Exception {
        Path jar = Path.of(System.getProperty("rotactl.jar",
                RepositoryRoot.resolve("tools", "rotactl", "target", "rotactl.jar").toString()));
        assertTrue(Files.isRegularFile(jar), "needs the packaged " + jar.toAbsolutePath() + ": run ./mvnw -B verify");
        Path script = RepositoryRoot.resolve("scripts", "rotactl");
        Process p = new ProcessBuilder("bash", script.toString(), "--endpoints", CLUSTER.get().endpoints(),
                "put", "launcher", "works").redirectErrorStream(true).start();
        assertTrue(p.waitFor(30, TimeUnit.SECONDS), "scripts/rotactl did not finish in 30 s");
        assertEquals("OK\n", new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
        assertEquals(0, p.exitValue());
        assertOk(rotactl("get", "launcher"), "launcher\nworks\n");
    }

    @Test
    @Order(8)
    void endpointStatusReportsAKilledMemberAndFails() {
        int leader = CLUSTER.get().awaitLeader();
        int victim = (leader + 1) % 3;
        CLUSTER.get().kill(victim);
        Run status = rotactl("endpoint", "status");
        assertEquals(1, status.exitCode(), status.toString());
        assertEquals(3, status.lines().size(), status.out());
        assertEquals(CLUSTER.get().endpoint(victim) + ", -, -, -, -, -, -, -, -, UNAVAILABLE: connection refused",
                status.lines().get(victim));
        assertEquals("Error: 1 of 3 endpoints did not answer: " + CLUSTER.get().endpoint(victim)
                + "; is every member running? (scripts/cluster.sh status)\n", status.err());
        assertEquals(1, rotactl("endpoint", "health").exitCode());
        assertOk(rotactl("put", "still", "works"), "OK\n");
    }

    private static Run rotactl(String... args) {
        return rotactlIn("", args);
    }

    private static Run rotactlIn(String stdin, String... args) {
        return RotactlRunner.run(CLUSTER.get().endpoints(), stdin, args);
    }

    private static Run run(Map<String, String> env, String stdin, String... args) {
        return RotactlRunner.run(env, stdin, args);
    }

    private static Background background(String... args) {
        return new Background(CLUSTER.get().endpoints(), args);
    }
}
