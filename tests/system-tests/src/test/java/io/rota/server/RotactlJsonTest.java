package io.rota.server;

import io.rota.server.RotactlRunner.Background;
import io.rota.server.RotactlRunner.Run;
import io.rota.testkit.Await;
import io.rota.testkit.JsonText;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static io.rota.testkit.Ports.freePort;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 34: every rotactl command under {@code -w json}, against three in-JVM members, read back with the
 * project's JSON reader: one object per result (per line for streams), errors one object on stderr with the
 * exit code of the human format, and {@code member add --learner --promote-when-caught-up}. The field names
 * are docs/rotactl.md's table.
 */
@Tag("cluster")
class RotactlJsonTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    static Path dir;

    private static TestCluster cluster;
    private static RotaServer joined;

    @BeforeAll
    static void start() {
        cluster = new TestCluster(dir.resolve("cluster"), 3, Duration.ofMillis(300));
        cluster.awaitLeader();
    }

    @AfterAll
    static void stop() {
        if (joined != null) {
            joined.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void keysValuesTransactionsAndWatchesAreOneObjectPerResult() throws InterruptedException {
        Map<String, Object> put = one(ok("put", "js/a", "1", "-w", "json"));
        long rev = (Long) map(put, "header").get("revision");
        Map<String, Object> get = one(ok("get", "js/", "--prefix", "-w", "json"));
        assertEquals(1L, get.get("count"));
        assertEquals("anMvYQ==", map(list(get, "kvs").get(0)).get("key"), "keys in base64, as etcdctl");
        Map<String, Object> txn = one(run("\nput js/b 2\n\n", "txn", "-w", "json"));
        assertEquals(Boolean.TRUE, txn.get("succeeded"));
        Map<String, Object> del = one(ok("del", "js/b", "-w", "json"));
        assertEquals(1L, del.get("deleted"));

        Background watch = new Background(cluster.endpoints(), "watch", "jw/", "--prefix", "--rev",
                Long.toString(rev), "-w", "json");
        ok("put", "jw/1", "x");
        ok("put", "jw/2", "y");
        Await.until(WAIT, () -> watch.out().lines().count() >= 2, "two events");
        Run ended = watch.stop();
        for (String line : ended.out().lines().toList()) {
            assertEquals("PUT", JsonText.parseObject(line).get("type"), line);
        }
    }

    @Test
    void leasesEndpointsMembersAndMaintenanceAreJson() {
        Map<String, Object> lease = one(ok("lease", "grant", "30", "-w", "json"));
        String id = (String) lease.get("id");
        assertEquals(30L, lease.get("ttl"));
        assertEquals(id, one(ok("lease", "keep-alive", id, "--once", "-w", "json")).get("id"));
        assertEquals(30L, one(ok("lease", "timetolive", id, "-w", "json")).get("granted_ttl"));
        assertTrue(list(one(ok("lease", "list", "-w", "json")), "leases").contains(id));
        assertEquals(Boolean.TRUE, one(ok("lease", "revoke", id, "-w", "json")).get("revoked"));

        assertEquals(3, list(one(ok("endpoint", "status", "-w", "json")), "endpoints").size());
        assertEquals(Boolean.TRUE, map(list(one(ok("endpoint", "health", "-w", "json")), "endpoints").get(0))
                .get("health"));
        // Members may hash different revisions while the last put is applied: a note on stderr, not an error.
        assertEquals(3, list(one(run("", "endpoint", "hashkv", "-w", "json")), "endpoints").size());
        assertEquals("0.1.0", one(ok("version", "-w", "json")).get("rotactl"));
        Map<String, Object> members = one(ok("member", "list", "--progress", "-w", "json"));
        assertTrue(map(members, "header").containsKey("cluster_id"), members.toString());
        assertTrue(list(members, "members").size() >= 3, members.toString());
        assertEquals(List.of(), list(one(ok("alarm", "list", "-w", "json")), "alarms"));
        long now = (Long) map(one(ok("put", "js/compact", "1", "-w", "json")), "header").get("revision");
        assertEquals(now, one(ok("compaction", Long.toString(now), "-w", "json")).get("compact_revision"));

        Path backup = dir.resolve("backup.db");
        Map<String, Object> saved = one(run("", "--endpoints", cluster.endpoint(1), "snapshot", "save",
                backup.toString(), "-w", "json"));
        assertEquals(backup.toString(), saved.get("file"));
        assertEquals(saved.get("sha256"), one(ok("snapshot", "status", backup.toString(), "-w", "json"))
                .get("sha256"));
        assertEquals(Boolean.FALSE, one(ok("auth", "status", "-w", "json")).get("enabled"));
        assertTrue(one(ok("user", "add", "js-user", "--new-user-password", "pw", "-w", "json"))
                .containsKey("done"));
        assertEquals("js-user", one(ok("user", "get", "js-user", "-w", "json")).get("name"));
        assertTrue(list(one(ok("user", "list", "-w", "json")), "users").stream()
                .anyMatch(u -> "js-user".equals(map(u).get("name"))));
        one(ok("role", "add", "js-role", "-w", "json"));
        assertTrue(list(one(ok("role", "list", "-w", "json")), "roles").contains("js-role"));
        assertEquals("js-role", one(ok("role", "get", "js-role", "-w", "json")).get("name"));
    }

    @Test
    void recipesPrintTheirResultsAndNotesAsJson() throws InterruptedException {
        Background holder = new Background(cluster.endpoints(), "lock", "js-lock", "-w", "json");
        Await.until(WAIT, () -> !holder.out().isEmpty(), "the lock held");
        Map<String, Object> held = JsonText.parseObject(holder.out().strip());
        assertEquals("js-lock", held.get("name"));
        assertTrue((Long) held.get("fencing_token") > 0, held.toString());
        Run timedOut = RotactlRunner.run(cluster.endpoints(), "", "lock", "js-lock", "--timeout", "1s", "-w", "json");
        assertEquals(1, timedOut.exitCode(), timedOut.toString());
        List<String> err = timedOut.err().lines().toList();
        assertEquals("waiting", JsonText.parseObject(err.get(0)).get("note"), timedOut.err());
        assertEquals(held.get("key"), JsonText.parseObject(err.get(0)).get("holder"));
        assertEquals("LOCK_TIMEOUT", JsonText.parseObject(err.get(err.size() - 1)).get("error"), timedOut.err());
        holder.stop();

        Run once = RotactlRunner.run(cluster.endpoints(), "", "once", "js-once", "-w", "json", "--", "true");
        assertEquals(0, once.exitCode(), once.toString());
        assertEquals("DONE", one(ok("once", "js-once", "--status", "-w", "json")).get("state"));
        Run reset = RotactlRunner.run(cluster.endpoints(), "", "once", "js-once", "--reset", "-w", "json");
        assertEquals("DONE", JsonText.parseObject(reset.out().strip()).get("state"));
        assertEquals("reset", JsonText.parseObject(reset.err().strip()).get("note"), reset.err());

        Background listener = new Background(cluster.endpoints(), "elect", "js-elect", "--listen", "-w", "json");
        Await.until(WAIT, () -> !listener.out().isEmpty(), "the election observed");
        assertEquals(Boolean.FALSE, JsonText.parseObject(listener.out().lines().findFirst().orElseThrow())
                .get("leader"));
        listener.stop();

        Run noJobs = RotactlRunner.run(cluster.endpoints(), "", "jobs", "list", "--prefix", "js-none", "-w", "json");
        assertEquals(1, noJobs.exitCode(), noJobs.toString());
        assertEquals("FAILED", JsonText.parseObject(noJobs.err().strip()).get("error"));
    }

    @Test
    @DisplayName("errors: one object on stderr, nothing on stdout, the exit code of the human format")
    void errorsAreOneObjectOnStderr() {
        Run missing = RotactlRunner.run(cluster.endpoints(), "", "lease", "revoke", "abcdef", "-w", "json");
        Run human = RotactlRunner.run(cluster.endpoints(), "", "lease", "revoke", "abcdef");
        assertEquals(human.exitCode(), missing.exitCode());
        assertEquals(1, missing.exitCode());
        Map<String, Object> error = JsonText.parseObject(missing.err().strip());
        assertEquals("LEASE_NOT_FOUND", error.get("error"));
        assertEquals(human.err().strip(), "Error: " + error.get("message"));
        assertEquals("", missing.out());

        Run usage = RotactlRunner.run(cluster.endpoints(), "", "member", "add", "x", "--peer-urls", "127.0.0.1:1",
                "--promote-when-caught-up", "-w", "json");
        assertEquals(2, usage.exitCode(), usage.toString());
        String message = (String) JsonText.parseObject(usage.err().strip()).get("message");
        assertTrue(message.contains("--promote-when-caught-up") && message.contains("--learner"), message);
    }

    @Test
    @DisplayName("member add --learner --promote-when-caught-up: its record first, progress on stderr, then the voter")
    void aLearnerIsPromotedOnceCaughtUp() throws InterruptedException {
        InetSocketAddress peer = new InetSocketAddress("127.0.0.1", freePort());
        Background add = new Background(cluster.endpoints(), "member", "add", "j4", "--peer-urls",
                "127.0.0.1:" + peer.getPort(), "--learner", "--promote-when-caught-up", "--catch-up-timeout", "60s",
                "-w", "json");
        Await.until(WAIT, () -> !add.out().isEmpty(), "the learner added");
        Map<String, Object> added = JsonText.parseObject(add.out().lines().findFirst().orElseThrow());
        assertEquals(Boolean.TRUE, map(added, "member").get("is_learner"), added.toString());
        // Start it from the record alone, as scripts/cluster.sh does.
        Map<String, InetSocketAddress> members = new LinkedHashMap<>();
        Map<String, Long> ids = new LinkedHashMap<>();
        for (String m : ((String) added.get("initial_cluster")).split(",")) {
            String name = m.substring(0, m.indexOf('='));
            String idAndPeer = m.substring(m.indexOf('=') + 1);
            String address = idAndPeer.substring(idAndPeer.indexOf('@') + 1);
            ids.put(name, Long.parseLong(idAndPeer.substring(0, idAndPeer.indexOf('@'))));
            members.put(name, new InetSocketAddress("127.0.0.1", Integer.parseInt(address.split(":")[1])));
        }
        joined = RotaServer.start(ServerConfig.builder("j4").dataDir(dir.resolve("j4"))
                .listenClient(new InetSocketAddress("127.0.0.1", freePort())).listenPeer(peer)
                .initialCluster(members).memberIds(ids).initialClusterState(ServerConfig.ClusterState.EXISTING)
                .clusterId((String) added.get("cluster_id")).heartbeatMs(50).electionMs(500)
                .maxRequestBytes(64 * 1024).requestTimeout(Duration.ofSeconds(5)).build());
        Run done = add.awaitEnd();
        assertEquals(0, done.exitCode(), done.toString());
        List<String> out = done.out().lines().toList();
        assertEquals(2, out.size(), done.out());
        Map<String, Object> promoted = JsonText.parseObject(out.get(1));
        assertEquals(added.get("id"), map(promoted, "member").get("id"));
        assertEquals(Boolean.FALSE, map(promoted, "member").get("is_learner"), promoted.toString());
        for (String note : done.err().lines().toList()) {
            assertEquals("catching_up", JsonText.parseObject(note).get("note"), done.err());
        }

        // Never started: still a learner at the deadline, and the error says so.
        Run late = RotactlRunner.run(cluster.endpoints(), "", "member", "add", "j5", "--peer-urls",
                "127.0.0.1:" + freePort(), "--learner", "--promote-when-caught-up", "--catch-up-timeout", "2s",
                "-w", "json");
        assertEquals(1, late.exitCode(), late.toString());
        List<String> err = late.err().lines().toList();
        Map<String, Object> error = JsonText.parseObject(err.get(err.size() - 1));
        assertEquals("NOT_CAUGHT_UP", error.get("error"));
        assertTrue(((String) error.get("message")).contains("still a learner"), error.toString());
        assertFalse(JsonText.parseObject(late.out().strip()).get("id").toString().isEmpty());
    }

    private static Run ok(String... args) {
        Run r = RotactlRunner.run(cluster.endpoints(), "", args);
        assertEquals(0, r.exitCode(), String.join(" ", args) + ": " + r);
        assertEquals("", r.err(), String.join(" ", args) + ": " + r);
        return r;
    }

    private static Run run(String stdin, String... args) {
        Run r = args.length > 0 && args[0].equals("--endpoints") ? RotactlRunner.run(Map.of(), stdin, args)
                : RotactlRunner.run(cluster.endpoints(), stdin, args);
        assertEquals(0, r.exitCode(), String.join(" ", args) + ": " + r);
        return r;
    }

    /** The one JSON object a run printed, on one line. */
    private static Map<String, Object> one(Run r) {
        List<String> lines = r.out().lines().toList();
        assertEquals(1, lines.size(), r.out());
        return JsonText.parseObject(lines.get(0));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object o) {
        return (Map<String, Object>) o;
    }

    private static Map<String, Object> map(Map<String, Object> o, String field) {
        assertTrue(o.containsKey(field), field + " in " + o);
        return map(o.get(field));
    }

    @SuppressWarnings("unchecked")
    private static List<Object> list(Map<String, Object> o, String field) {
        assertTrue(o.containsKey(field), field + " in " + o);
        return (List<Object>) o.get(field);
    }
}
