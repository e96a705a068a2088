package io.rota.server;

import io.rota.client.cli.Rotactl;
import io.rota.server.RotactlRunner.Background;
import io.rota.server.RotactlRunner.Run;
import io.rota.testkit.Await;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.rota.server.RotactlRunner.assertOk;
import static io.rota.server.RotactlRunner.revision;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The etcdctl habits of rotactl against three in-JVM members (progress notifications every 300 ms instead
 * of 10 s, so the test need not wait): ranges, --from-key, server-side sorting and the --limit notice;
 * --hex in and out, escaped and base64 output, stdin values byte for byte; watch -- COMMAND with its
 * ROTA_WATCH_* variables and --progress-notify; endpoint hashkv agreeing across members; version; check perf
 * (its report and clean-up, not its verdict: performance is not asserted in tests); and the environment.
 */
@Tag("cluster")
class RotactlEtcdHabitsTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    @TempDir
    static Path dir;

    private static TestCluster cluster;

    @BeforeAll
    static void start() {
        cluster = new TestCluster(dir.resolve("cluster"), 3, Duration.ofMillis(300));
        cluster.awaitLeader();
    }

    @AfterAll
    static void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void getReadsRangesFromKeyAndSortsOnTheServerBeforeTheLimit() {
        assertOk(rotactl("put", "rng/a", "3"), "OK\n");
        assertOk(rotactl("put", "rng/b", "1"), "OK\n");
        assertOk(rotactl("put", "rng/c", "2"), "OK\n");
        assertOk(rotactl("get", "rng/a", "rng/c"), "rng/a\n3\nrng/b\n1\n");
        assertOk(rotactl("get", "rng/b", "rng/d", "--keys-only"), "rng/b\nrng/c\n");
        assertOk(rotactl("get", "rng/", "--prefix", "--sort-by", "value", "--print-value-only"), "1\n2\n3\n");
        assertOk(rotactl("get", "rng/", "--prefix", "--order", "DESCEND", "--keys-only"), "rng/c\nrng/b\nrng/a\n");
        assertOk(rotactl("get", "rng/", "--prefix", "--sort-by", "CREATE", "--order", "descend", "--keys-only",
                "-w", "simple"), "rng/c\nrng/b\nrng/a\n");

        Run limited = rotactl("get", "rng/", "--prefix", "--sort-by", "MODIFY", "--order", "DESCEND", "--limit", "2");
        assertEquals("rng/c\n2\nrng/b\n1\n", limited.out(), limited.toString());
        assertEquals("(2 of 3 keys shown: --limit 2; raise --limit, or narrow the range, to see the rest)\n",
                limited.err(), "the notice goes to stderr, so the last line of stdout stays a value");
        Run json = rotactl("get", "rng/", "--prefix", "--limit", "1", "-w", "json");
        assertTrue(json.out().endsWith("\"count\":3,\"more\":true}\n"), json.out());
        assertEquals("", json.err(), "JSON says it in count and more");

        // '~' sorts after every letter, so --from-key sees only these keys.
        assertOk(rotactl("put", "~from/1", "x"), "OK\n");
        assertOk(rotactl("put", "~from/2", "y"), "OK\n");
        assertOk(rotactl("get", "~from/2", "--from-key"), "~from/2\ny\n");
        assertOk(rotactl("get", "~from/", "--from-key", "--keys-only"), "~from/1\n~from/2\n");
    }

    @Test
    void hexEscapedAndBase64KeysAndValuesAndStdinByteForByte() {
        assertOk(rotactl("put", "--hex", "6865782f00ff", "\\x0a\\x0b"), "OK\n");
        assertOk(rotactl("get", "6865782f00ff", "--hex"), "\\x68\\x65\\x78\\x2f\\x00\\xff\n\\x0a\\x0b\n");
        assertOk(rotactl("get", "hex/", "--prefix"), "hex/\\x00\\xff\n\\n\\x0b\n");
        Run json = rotactl("get", "hex/", "--prefix", "-w", "json");
        assertTrue(json.out().contains("\"key\":\"" + Base64.getEncoder().encodeToString(new byte[] {'h', 'e', 'x', '/', 0, -1})
                + "\",") && json.out().contains("\"value\":\"Cgs=\""), json.out());
        assertOk(rotactl("put", "nl/a\nb", "one\\two\nlines"), "OK\n");
        Run table = rotactl("get", "nl/", "--prefix", "-w", "table");
        assertTrue(table.lines().get(3).startsWith("| nl/a\\nb | one\\\\two\\nlines |"), table.out());
        assertOk(rotactl("del", "6865782f00ff", "--hex"), "1\n");

        byte[] binary = {'v', 0, (byte) 0xfe, '\n'};
        assertEquals(0, rotactl(binary, "put", "stdin/bin").exitCode());
        assertOk(rotactl("get", "stdin/bin", "--print-value-only"), "v\\x00\\xfe\\n\n");
        assertTrue(rotactl("get", "stdin/bin", "-w", "json").out().contains("\"value\":\"dgD+Cg==\""));
        assertEquals(0, rotactl("line\n".getBytes(StandardCharsets.UTF_8), "put", "stdin/text").exitCode());
        assertOk(rotactl("get", "stdin/text", "--print-value-only"), "line\\n\n");
    }

    @Test
    void watchRunsACommandPerEventAndPrintsProgressNotifications() throws Exception {
        long from = revision(rotactl("get", "wc/", "--prefix", "-w", "json").out()) + 1;
        Path events = dir.resolve("events.txt");
        Background watch = new Background(cluster.endpoints(), "watch", "wc/", "--prefix", "--rev", Long.toString(from),
                "--", "sh", "-c", "printf '%s|%s|%s|%s\\n' \"$ROTA_WATCH_EVENT_TYPE\" \"$ROTA_WATCH_KEY\" "
                        + "\"$ROTA_WATCH_VALUE\" \"$ROTA_WATCH_REVISION\" >> " + events);
        assertOk(rotactl("put", "wc/1", "a b"), "OK\n");
        assertOk(rotactl("del", "wc/1"), "1\n");
        Await.until(WAIT, () -> lines(events).size() == 2, "the command ran once per event: " + lines(events));
        assertEquals(List.of("PUT|wc/1|a b|" + from, "DELETE|wc/1||" + (from + 1)), lines(events));
        Run stopped = watch.stop();
        assertEquals(0, stopped.exitCode(), stopped.toString());
        assertEquals("PUT\nwc/1\na b\nDELETE\nwc/1\n\n", stopped.out(), "each event is printed as well");

        Background failing = new Background(cluster.endpoints(), "watch", "wc/2", "--", "sh", "-c", "exit 3");
        Await.until(WAIT, () -> rotactl("put", "wc/2", "x").exitCode() == 0 && !failing.isRunning(),
                "a failing command ends the watch");
        Run failed = failing.awaitEnd();
        assertEquals(1, failed.exitCode(), failed.toString());
        assertTrue(failed.err().matches("Error: 'sh -c exit 3' exited with 3 for the event at revision (\\d+); the watch"
                + " stopped there: fix the command, then resume with --rev \\1\n"), failed.err());

        Background progress = new Background(cluster.endpoints(), "watch", "idle/", "--prefix", "--progress-notify");
        Await.until(WAIT, () -> progress.out().startsWith("progress notify: "), "a progress notification: " + progress.out());
        Run quiet = progress.stop();
        assertTrue(quiet.out().lines().allMatch(l -> l.matches("progress notify: \\d+")), quiet.out());
    }

    @Test
    void hashkvAgreesAcrossMembersAtARevision() throws Exception {
        assertOk(rotactl("put", "hash/a", "1"), "OK\n");
        long at = revision(rotactl("put", "hash/b", "2", "-w", "json").out());
        List<Run> seen = new ArrayList<>();
        Await.until(WAIT, () -> {
            Run r = rotactl("endpoint", "hashkv", "--rev", Long.toString(at));
            seen.add(r);
            return r.exitCode() == 0;
        }, "every member applied revision " + at + " and hashes it alike: " + seen);
        Run ok = seen.get(seen.size() - 1);
        assertEquals(3, ok.lines().size(), ok.out());
        Pattern row = Pattern.compile("127\\.0\\.0\\.1:\\d+, (\\d+), " + at);
        List<String> hashes = ok.lines().stream().map(l -> {
            Matcher m = row.matcher(l);
            assertTrue(m.matches(), l);
            return m.group(1);
        }).distinct().toList();
        assertEquals(1, hashes.size(), ok.out());

        Run table = rotactl("endpoint", "hashkv", "--rev", Long.toString(at), "-w", "table");
        assertTrue(table.lines().get(1).matches("\\| +ENDPOINT +\\| +HASH +\\| HASH REVISION \\| COMPACT REVISION \\| ERROR \\|"),
                table.out());
        Run json = rotactl("endpoint", "hashkv", "--rev", Long.toString(at), "-w", "json");
        assertTrue(json.out().contains("\"hash\":" + hashes.get(0) + ",\"hash_revision\":" + at), json.out());

        Run future = rotactl("endpoint", "hashkv", "--rev", "999999");
        assertEquals(1, future.exitCode(), future.toString());
        assertTrue(future.out().contains("is in the future"), future.out());
    }

    @Test
    void versionNamesTheClientAndEachMember() {
        for (String form : List.of("version", "--version")) {
            Run v = rotactl(form);
            assertEquals(0, v.exitCode(), v.toString());
            assertEquals("rotactl version: " + RotaServer.VERSION, v.lines().get(0));
            assertEquals(4, v.lines().size(), v.out());
            for (int i = 0; i < 3; i++) {
                assertEquals(cluster.endpoint(i) + ": server version " + RotaServer.VERSION + " (n" + (i + 1) + ")",
                        v.lines().get(i + 1));
            }
        }
    }

    @Test
    void checkPerfReportsEachCheckAndCleansUp() {
        assertOk(rotactl("put", "perf-busy/x", "1"), "OK\n");
        Run busy = rotactl("check", "perf", "--prefix", "perf-busy/", "--duration", "1s");
        assertEquals(1, busy.exitCode(), busy.toString());
        assertTrue(busy.err().startsWith("Error: the prefix 'perf-busy/' holds 1 keys;"), busy.err());

        Run perf = rotactl("check", "perf", "--duration", "2s", "--prefix", "perf/");
        List<String> out = perf.lines();
        assertTrue(out.size() >= 4, perf.toString());
        assertTrue(out.get(0).matches("(PASS|FAIL): Throughput is \\d+ writes/s \\(at least 135 wanted: 90% of 150\\)"),
                perf.out());
        assertTrue(out.get(1).matches("(PASS|FAIL): Slowest request took \\d+\\.\\d{6}s \\(under 500ms wanted\\)"), perf.out());
        assertTrue(out.get(2).matches("(PASS|FAIL): Stddev is \\d+\\.\\d{6}s \\(under 100ms wanted\\)"), perf.out());
        String verdict = out.get(out.size() - 1);
        assertEquals(verdict.equals("PASS") ? 0 : 1, perf.exitCode(), perf.toString());
        assertEquals(out.subList(0, out.size() - 1).stream().allMatch(l -> l.startsWith("PASS:")) ? "PASS" : "FAIL", verdict);
        assertTrue(perf.err().startsWith("check perf: 150 writes/s, 50 in flight, for 2s under perf/\n"), perf.err());
        assertOk(rotactl("get", "perf/", "--prefix", "--count-only"), "0\n");
    }

    /**
     * The cluster treats removing a non-member as done, so that a retried remove completes; rotactl must not
     * tell a user who typed a wrong id that it removed a member.
     */
    @Test
    void memberRemoveOfAnIdNotInTheClusterSaysSoAndRemovesNothing() {
        Run wrong = rotactl("member", "remove", "77");
        assertEquals(1, wrong.exitCode(), wrong.toString());
        assertEquals("Error: no member 77 in the cluster (it was never added, or is already removed); nothing"
                + " removed; its members: 1 n1, 2 n2, 3 n3 (rotactl member list)\n", wrong.err());
        assertEquals("", wrong.out());
        assertEquals(3, rotactl("member", "list").lines().size(), "every member is still there");
    }

    @Test
    void environmentVariablesSetTheGlobalOptions() {
        assertOk(rotactl("put", "env/k", "v"), "OK\n");
        Run json = RotactlRunner.run(Map.of("ROTA_ENDPOINTS", cluster.endpoints(), "ROTA_WRITE_OUT", "json",
                "ROTA_COMMAND_TIMEOUT", "3s", "ROTA_DIAL_TIMEOUT", "1s"), "", "get", "env/k");
        assertEquals(0, json.exitCode(), json.toString());
        assertTrue(json.out().contains("\"key\":\"ZW52L2s=\""), json.out());
        Run hex = RotactlRunner.run(Map.of("ROTA_ENDPOINTS", cluster.endpoints(), "ROTA_HEX", "true"), "",
                "get", "656e762f6b", "--print-value-only");
        assertOk(hex, "\\x76\n");
    }

    private static Run rotactl(String... args) {
        return RotactlRunner.run(cluster.endpoints(), "", args);
    }

    /** rotactl with {@code stdin} as raw bytes (RotactlRunner's stdin is text). */
    private static Run rotactl(byte[] stdin, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        List<String> all = new ArrayList<>(List.of("--endpoints", cluster.endpoints()));
        all.addAll(List.of(args));
        int code = Rotactl.commandLine(new PrintWriter(out), new PrintWriter(err), new ByteArrayInputStream(stdin), Map.of())
                .execute(all.toArray(String[]::new));
        return new Run(code, out.toString(), err.toString());
    }

    private static List<String> lines(Path file) {
        try {
            return Files.exists(file) ? Files.readAllLines(file) : List.of();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }


}
