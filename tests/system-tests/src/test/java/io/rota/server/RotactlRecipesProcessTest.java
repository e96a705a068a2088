package io.rota.server;

import io.rota.client.RotaClient;
import io.rota.client.recipes.FireSchedule;
import io.rota.client.recipes.JobRun;
import io.rota.client.recipes.JobState;
import io.rota.client.recipes.SingletonJob;
import io.rota.server.RotactlRunner.Background;
import io.rota.server.RotactlRunner.Run;
import io.rota.testkit.Await;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * rotactl's recipe commands — lock, elect, once, jobs history — against three real server processes, run
 * in-process with captured streams; the COMMANDs they run are real child processes ({@code sh -c ...}) that
 * leave their traces in files.
 */
@Tag("process")
class RotactlRecipesProcessTest {

    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final Pattern HELD = Pattern.compile("(rota/lock/[^/]+/([0-9a-f]+(?:-[0-9a-f]+)?))\nfencing token (\\d+)\n");

    @TempDir
    static Path dir;
    @RegisterExtension
    static final SharedProcessCluster CLUSTER = new SharedProcessCluster();

    @Test
    void lockRunsTheCommandWithItsFencingTokenAndReleasesTheLockAfter() throws Exception {
        Path first = dir.resolve("token-1");
        Path second = dir.resolve("token-2");
        String write = "echo \"$ROTA_FENCING_TOKEN $ROTA_LOCK_KEY\" > \"$0\"";
        assertEquals(0, rotactl("lock", "db", "--", "sh", "-c", write, first.toString()).exitCode());
        assertEquals(0, rotactl("lock", "db", "--timeout", "5s", "--", "sh", "-c", write, second.toString()).exitCode());
        String[] a = Files.readString(first).trim().split(" ");
        String[] b = Files.readString(second).trim().split(" ");
        assertTrue(a[1].startsWith("rota/lock/db/") && b[1].startsWith("rota/lock/db/"), a[1] + " " + b[1]);
        assertTrue(Long.parseLong(b[0]) > Long.parseLong(a[0]), "fencing tokens grow: " + a[0] + " then " + b[0]);

        Run failed = rotactl("lock", "db", "--", "sh", "-c", "exit 3");
        assertEquals(3, failed.exitCode(), "the command's exit code: " + failed);
        assertEquals("", failed.err(), "released after each run, so nobody waited: " + failed);

        // Without a command: prints key and token, holds until stopped; meanwhile others wait and say for whom.
        Background holder = background("lock", "db");
        Await.until(WAIT, () -> HELD.matcher(holder.out()).matches(), "the key and token: " + holder.out());
        Matcher held = HELD.matcher(holder.out());
        assertTrue(held.matches());
        assertTrue(Long.parseLong(held.group(3)) > Long.parseLong(b[0]), holder.out());
        Run timedOut = rotactl("lock", "db", "--timeout", "1s", "--", "true");
        assertEquals(1, timedOut.exitCode(), timedOut.toString());
        assertEquals("waiting for lock db held by " + held.group(1) + " (fencing token " + held.group(3) + ")\n"
                + "Error: lock db not acquired within 1s: another holder has it (see 'rotactl get rota/lock/db/ --prefix');"
                + " retry later or wait longer with --timeout\n", timedOut.err());
        Run stopped = holder.stop();
        assertEquals(0, stopped.exitCode(), stopped.toString());
        Run after = rotactl("lock", "db", "--timeout", "5s", "--", "true");
        assertEquals(0, after.exitCode(), after.toString());
        assertEquals("", after.err(), "Ctrl-C released the lock: " + after);

        Run json = rotactl("lock", "db", "--timeout", "5s", "-w", "json", "--", "true");
        assertEquals(0, json.exitCode(), json.toString());
        Background jsonHolder = background("lock", "db", "-w", "json");
        Await.until(WAIT, () -> jsonHolder.out().matches("\\{\"name\":\"db\",\"key\":\"rota/lock/db/[0-9a-f]+-[0-9a-f]+\","
                + "\"fencing_token\":\\d+,\"lease\":\"[0-9a-f]{16}\"}\n"), "a JSON holder: " + jsonHolder.out());
        assertEquals(0, jsonHolder.stop().exitCode());
    }

    @Test
    void losingTheLockTerminatesTheCommandAndExitsWith1() throws Exception {
        Path pidFile = dir.resolve("lost.pid");
        Background run = background("lock", "lost", "--ttl", "3", "--", "sh", "-c", "echo $$ > \"$0\"; exec sleep 60",
                pidFile.toString());
        Await.until(WAIT, () -> Files.exists(pidFile) && !readOrEmpty(pidFile).isBlank(), "the command started");
        long pid = Long.parseLong(readOrEmpty(pidFile).trim());
        Run keys = rotactl("get", "rota/lock/lost/", "--prefix", "--keys-only");
        assertEquals(1, keys.lines().size(), keys.toString());
        String key = keys.lines().get(0);
        // The key ends with the holder's session lease id in hex, "-" and a sequence; 'lease list' prints ids
        // with 16 digits.
        String id = key.substring(key.lastIndexOf('/') + 1).split("-")[0];
        String lease = String.format("%016x", Long.parseLong(id, 16));
        assertTrue(rotactl("lease", "list").lines().contains(lease), "the holder's lease is listed");

        long start = System.nanoTime();
        assertEquals(0, rotactl("lease", "revoke", lease).exitCode());
        Run lost = run.awaitEnd();
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertEquals(1, lost.exitCode(), lost.toString());
        assertTrue(lost.err().startsWith("Error: lost the lock lost ("), lost.err());
        assertTrue(lost.err().contains(": terminated 'sh -c echo $$ > \"$0\"; exec sleep 60 " + pidFile + "'"), lost.err());
        assertEquals(1, lost.err().lines().count(), lost.err());
        assertFalse(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false), "the command is gone");
        assertTrue(took.compareTo(Duration.ofSeconds(10)) < 0, "terminated within " + took);
        assertEquals(0, rotactl("lock", "lost", "--timeout", "5s", "--", "true").exitCode(), "the lock is free");
    }

    @Test
    void concurrentLockCommandsNeverOverlap() throws Exception {
        Path log = dir.resolve("overlap.log");
        String critical = "echo \"start $1\" >> \"$0\"; sleep 0.2; echo \"end $1\" >> \"$0\"";
        List<Background> runs = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            runs.add(background("lock", "overlap", "--", "sh", "-c", critical, log.toString(), "r" + i));
        }
        for (Background r : runs) {
            Run done = r.awaitEnd();
            assertEquals(0, done.exitCode(), done.toString());
        }
        List<String> lines = Files.readAllLines(log);
        assertEquals(8, lines.size(), lines.toString());
        for (int i = 0; i < lines.size(); i += 2) {
            String who = lines.get(i).substring("start ".length());
            assertEquals("start " + who, lines.get(i), "no overlap: " + lines);
            assertEquals("end " + who, lines.get(i + 1), "no overlap: " + lines);
        }
    }

    @Test
    void electOneLeaderThenTheNextWhenItResigns() throws Exception {
        Background listener = background("elect", "sched", "--listen");
        Await.until(WAIT, () -> listener.out().equals("no leader\n"), "nobody leads yet: " + listener.out());
        Background first = background("elect", "sched", "app-1");
        Await.until(WAIT, () -> first.out().lines().count() == 3, "app-1 elected: " + first.out());
        List<String> one = first.out().lines().toList();
        assertTrue(one.get(0).startsWith("rota/election/sched/") && one.get(1).equals("app-1")
                && one.get(2).matches("epoch \\d+"), first.out());
        Background second = background("elect", "sched", "app-2");
        Await.until(WAIT, () -> rotactl("get", "rota/election/sched/", "--prefix", "--keys-only").lines().size() == 2,
                "app-2 campaigns");
        assertEquals("", second.out(), "one leader at a time");

        Run resigned = first.stop();
        assertEquals(0, resigned.exitCode(), resigned.toString());
        Await.until(WAIT, () -> second.out().lines().count() == 3, "app-2 elected after app-1 resigned: " + second.out());
        List<String> two = second.out().lines().toList();
        assertEquals("app-2", two.get(1));
        assertTrue(epoch(two.get(2)) > epoch(one.get(2)), "epochs grow: " + one + " " + two);

        Await.until(WAIT, () -> listener.out().contains("app-2"), "the listener sees app-2: " + listener.out());
        assertEquals(0, second.stop().exitCode());
        Await.until(WAIT, () -> listener.out().endsWith("no leader\n") && listener.out().lines().count() > 7,
                "the listener sees nobody leading again: " + listener.out());
        Run listened = listener.stop();
        assertEquals(0, listened.exitCode(), listened.toString());
        assertEquals(String.join("\n", "no leader", one.get(0), "app-1", one.get(2), two.get(0), "app-2", two.get(2),
                "no leader") + "\n", listened.out());
    }

    @Test
    void onceRunsTheCommandOnceAndRecordsTheOutcome() throws Exception {
        Path log = dir.resolve("once.log");
        String append = "echo \"ran $ROTA_ONCE_KEY\" >> \"$0\"";
        assertEquals(0, rotactl("once", "report/1", "--", "sh", "-c", append, log.toString()).exitCode());
        Run again = rotactl("once", "report/1", "--", "sh", "-c", append, log.toString());
        assertEquals(0, again.exitCode(), again.toString());
        assertEquals("report/1 already done: exit 0\n", again.out());
        assertEquals(List.of("ran report/1"), Files.readAllLines(log), "the command ran once");
        Run status = rotactl("once", "report/1", "--status");
        assertTrue(status.out().matches("report/1: DONE \\(exit 0\\) by pid-\\d+ at \\S+\n"), status.out());

        assertEquals(4, rotactl("once", "report/2", "--", "sh", "-c", "exit 4").exitCode(), "the command's code");
        Run failed = rotactl("once", "report/2", "--", "sh", "-c", append, log.toString());
        assertEquals(1, failed.exitCode(), failed.toString());
        assertTrue(failed.err().startsWith("Error: report/2 failed earlier (exit 4, by pid-"), failed.err());
        assertTrue(failed.err().contains("'rotactl once report/2 --retry-failed -- COMMAND'"), failed.err());
        assertTrue(rotactl("once", "report/2", "--status", "-w", "json").out().contains("\"state\":\"FAILED\""));
        assertEquals(List.of("ran report/1"), Files.readAllLines(log), "a failed record is not run again");
        // Issue 31, item 3: a deliberate retry instead of deleting an internal key, with the claim's fencing token.
        String withToken = "echo \"ran $ROTA_ONCE_KEY token $ROTA_FENCING_TOKEN\" >> \"$0\"";
        Run retried = rotactl("once", "report/2", "--retry-failed", "--", "sh", "-c", withToken, log.toString());
        assertEquals(0, retried.exitCode(), retried.toString());
        String ranAgain = Files.readAllLines(log).get(1);
        assertTrue(ranAgain.matches("ran report/2 token \\d+"), ranAgain);
        long token = Long.parseLong(ranAgain.substring("ran report/2 token ".length()));
        String done = rotactl("once", "report/2", "--status", "-w", "json").out();
        long doneAt = Long.parseLong(done.substring(done.indexOf("\"revision\":") + 11, done.lastIndexOf('}')));
        assertTrue(token > 4 && doneAt > token, "the token is the retry's claim revision, before its DONE: " + done);
        assertEquals(0, rotactl("once", "report/2", "--retry-failed", "--", "false").exitCode(), "DONE is not re-run");
        Run reset = rotactl("once", "report/2", "--reset");
        assertEquals(0, reset.exitCode(), reset.toString());
        assertTrue(reset.out().startsWith("report/2: DONE (exit 0) by pid-"), reset.out());
        assertTrue(reset.err().startsWith("reset report/2: the record above is deleted"), reset.err());
        assertEquals(0, rotactl("once", "report/2", "--", "sh", "-c", append, log.toString()).exitCode());
        assertEquals(3, Files.readAllLines(log).size(), "runs again after --reset");

        Path started = dir.resolve("once.started");
        Background busy = background("once", "report/3", "--", "sh", "-c", "touch \"$0\"; exec sleep 60", started.toString());
        Await.until(WAIT, () -> Files.exists(started), "the first claimer runs");
        Run elsewhere = rotactl("once", "report/3", "--", "true");
        assertEquals(1, elsewhere.exitCode(), elsewhere.toString());
        assertTrue(elsewhere.err().startsWith("Error: report/3 is in progress elsewhere (claimed by pid-"), elsewhere.err());
        Run notReset = rotactl("once", "report/3", "--reset");
        assertEquals(1, notReset.exitCode(), notReset.toString());
        assertTrue(notReset.err().startsWith("Error: report/3 is in progress (claimed by pid-"), notReset.err());
        Run interrupted = busy.stop();
        assertEquals(143, interrupted.exitCode(), "SIGTERM ended the command: " + interrupted);
        assertEquals("report/3: no record (never claimed, its claimer died, or its retention ended)\n",
                rotactl("once", "report/3", "--status").out(), "SIGTERM released the claim");
        assertEquals("report/4: no record (never claimed, its claimer died, or its retention ended)\n",
                rotactl("once", "report/4", "--status").out());
    }

    @Test
    void jobsHistoryShowsTheRunsOfASingletonJob() throws Exception {
        List<JobRun> history;
        try (RotaClient rota = RotaClient.connect(CLUSTER.get().endpoints());
             SingletonJob job = SingletonJob.builder(rota, "report", FireSchedule.fixedRate(Duration.ofMillis(500)),
                     ctx -> { }).instanceId("app-1").lockTtl(Duration.ofSeconds(2))
                     .pollInterval(Duration.ofMillis(100)).start()) {
            Await.until(WAIT, () -> job.history().stream().filter(r -> r.state() == JobState.DONE).count() >= 3,
                    "three runs");
            job.close();
            history = job.history();
        }
        Run simple = rotactl("jobs", "history", "report");
        assertEquals(0, simple.exitCode(), simple.toString());
        assertEquals(history.size(), simple.lines().size(), simple.out());
        assertTrue(simple.lines().stream().filter(l -> l.matches("\\S+Z, \\d+, app-1, DONE, \\S+Z, \\S+Z, ok")).count() >= 3,
                simple.out());
        Run limited = rotactl("jobs", "history", "report", "--limit", "2");
        assertEquals(simple.lines().subList(simple.lines().size() - 2, simple.lines().size()), limited.lines());
        Run table = rotactl("jobs", "history", "report", "-w", "table");
        assertEquals(history.size() + 4, table.lines().size(), table.out());
        assertTrue(table.lines().get(1).contains("FIRE TIME") && table.lines().get(1).contains("OUTCOME"), table.out());
        assertTrue(rotactl("jobs", "history", "report", "-w", "json").out().startsWith("{\"runs\":[{\"job\":\"report\","));

        Run unknown = rotactl("jobs", "history", "never-ran");
        assertEquals(1, unknown.exitCode(), unknown.toString());
        assertTrue(unknown.err().contains("no recorded runs of job 'never-ran' under rota/jobs/; jobs there: ")
                && unknown.err().contains("report"), unknown.toString());
        Run list = rotactl("jobs", "list");
        assertEquals(0, list.exitCode(), list.toString());
        assertTrue(list.lines().stream().anyMatch(l -> l.matches("report, \\S+Z, \\d+, app-1, DONE, ok")), list.out());
    }

    @Test
    void jobsListAndHistoryFindAJobUnderTheApplicationsOwnPrefix() throws Exception {
        try (RotaClient rota = RotaClient.connect(CLUSTER.get().endpoints());
             SingletonJob job = SingletonJob.builder(rota, "nightly", FireSchedule.fixedRate(Duration.ofMillis(500)),
                     ctx -> { }).instanceId("app-2").prefix("demo/42/jobs").lockTtl(Duration.ofSeconds(2))
                     .pollInterval(Duration.ofMillis(100)).start()) {
            Await.until(WAIT, () -> job.history().stream().anyMatch(r -> r.state() == JobState.DONE), "a run");
        }
        Run notThere = rotactl("jobs", "history", "nightly");
        assertEquals(1, notThere.exitCode(), notThere.toString());
        assertTrue(notThere.err().contains("no recorded runs of job 'nightly' under rota/jobs/"), notThere.toString());
        Run history = rotactl("jobs", "history", "nightly", "--prefix", "demo/42/jobs");
        assertEquals(0, history.exitCode(), history.toString());
        assertTrue(history.lines().stream().anyMatch(l -> l.matches("\\S+Z, \\d+, app-2, DONE, \\S+Z, \\S+Z, ok")),
                history.out());
        Run list = rotactl("jobs", "list", "--prefix", "demo/42/jobs/", "-w", "json");
        assertEquals(0, list.exitCode(), list.toString());
        assertTrue(list.out().startsWith("{\"jobs\":[{\"job\":\"nightly\",\"last_run\":{\"job\":\"nightly\","), list.out());
        Run empty = rotactl("jobs", "list", "--prefix", "nothing/here");
        assertEquals(1, empty.exitCode(), empty.toString());
        assertTrue(empty.err().contains("no job has run under nothing/here/ yet"), empty.toString());
    }

    // Issue 11, hole 6: the command outlived safe-until by the 2 s SIGTERM grace (killed at safe-until + 2 s).
    @Test
    void lockStopsItsCommandBySafeUntilWhenKeepAlivesStop() throws Exception {
        Path pidFile = dir.resolve("stubborn.pid");
        // A command that ignores SIGTERM: only SIGKILL stops it.
        Background run = background("lock", "stubborn", "--ttl", "3", "--", "sh", "-c",
                "trap '' TERM; echo $$ > \"$0\"; while true; do sleep 0.1; done", pidFile.toString());
        Await.until(WAIT, () -> Files.exists(pidFile) && !readOrEmpty(pidFile).isBlank(), "the command started");
        ProcessHandle child = ProcessHandle.of(Long.parseLong(readOrEmpty(pidFile).trim())).orElseThrow();
        long pausedAt;
        try {
            for (int i = 0; i < 3; i++) {
                CLUSTER.get().pause(i);   // no keep-alive is confirmed from now on
            }
            pausedAt = System.nanoTime();
            // The last confirmed keep-alive was sent before pausedAt, so safe-until <= pausedAt + TTL - margin
            // (3 s - 10% - 2 x 100 ms = 2.5 s); allow 300 ms for the kill itself.
            Await.until(WAIT, () -> !child.isAlive(), "the command stopped");
        } finally {
            for (int i = 0; i < 3; i++) {
                CLUSTER.get().resume(i);
            }
        }
        Duration lived = Duration.ofNanos(System.nanoTime() - pausedAt);
        assertTrue(lived.compareTo(Duration.ofMillis(2_800)) <= 0,
                "the command ran " + lived.toMillis() + " ms after the keep-alives stopped, past safe-until");
        Run lost = run.awaitEnd();
        assertEquals(1, lost.exitCode(), lost.toString());
        assertTrue(lost.err().startsWith("Error: lost the lock stubborn (safe-until passed"), lost.err());
        CLUSTER.get().awaitLeader();
    }

    // Issue 11, hole 6: a lost claim left the command running to its end.
    @Test
    void onceStopsItsCommandWhenTheClaimIsLost() throws Exception {
        Path pidFile = dir.resolve("once-lost.pid");
        Background run = background("once", "lost/1", "--", "sh", "-c", "echo $$ > \"$0\"; exec sleep 60",
                pidFile.toString());
        Await.until(WAIT, () -> Files.exists(pidFile) && !readOrEmpty(pidFile).isBlank(), "the command started");
        long pid = Long.parseLong(readOrEmpty(pidFile).trim());
        try (RotaClient rota = RotaClient.connect(CLUSTER.get().endpoints())) {
            long lease = rota.kv().get("rota/once/lost/1").first().orElseThrow().lease();
            rota.leases().revoke(lease);   // the claim is gone: another process may claim and run it now
        }
        Run lost = run.awaitEnd();
        assertEquals(1, lost.exitCode(), lost.toString());
        assertTrue(lost.err().startsWith("Error: lost the claim on lost/1 ("), lost.err());
        assertTrue(lost.err().contains("terminated 'sh -c"), lost.err());
        assertFalse(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false), "the command is gone");
        assertEquals("lost/1: no record (never claimed, its claimer died, or its retention ended)\n",
                rotactl("once", "lost/1", "--status").out(), "nothing recorded for a claim that was not ours");
    }

    private static long epoch(String line) {
        return Long.parseLong(line.substring("epoch ".length()));
    }

    private static String readOrEmpty(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            return "";
        }
    }

    private static Run rotactl(String... args) {
        return RotactlRunner.run(CLUSTER.get().endpoints(), "", args);
    }

    private static Background background(String... args) {
        return new Background(CLUSTER.get().endpoints(), args);
    }
}
