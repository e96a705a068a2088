package io.rota.server;

import io.rota.server.RotactlRunner.Background;
import io.rota.server.RotactlRunner.Run;
import io.rota.testkit.Await;
import io.rota.testkit.RepositoryRoot;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A terminal's Ctrl-C during {@code rotactl once KEY -- CMD} and {@code rotactl lock NAME -- CMD}: the packaged
 * rotactl runs as a real process in a process group of its own (as a shell's foreground job), and SIGINT goes to
 * that whole group ({@code kill -INT -PGID}), as the terminal sends it. The COMMAND, in a group of its own, must
 * be stopped as a whole — its background child ignores SIGINT, as an asynchronous command of a non-interactive
 * shell does — before the once claim or the lock is released, and the interrupt must not be reported
 * as the cluster being down.
 */
@Tag("process")
class RotactlSignalProcessTest {

    private static final Duration WAIT = Duration.ofSeconds(20);
    /** The COMMAND: records its pid and its background child's, then waits for the child. */
    private static final String WITH_CHILD = "echo $$ > \"$0.tmp\"; sleep 60 & echo $! > \"$0.bg\"; mv \"$0.tmp\" \"$0\"; wait";

    @TempDir
    static Path dir;
    @RegisterExtension
    static final SharedProcessCluster CLUSTER = new SharedProcessCluster();

    /**
     * How rotactl is started so that SIGINT reaches it as it reaches a terminal's job: {@code env
     * --default-signal=INT} (coreutils 8.31+) first, because a build started in the background of a
     * non-interactive shell ({@code ./mvnw verify &}) runs with SIGINT ignored, every child inherits that, and
     * a JVM cannot handle a signal ignored at its start — the Ctrl-C would be lost, not tested.
     */
    private static List<String> defaultSigint = List.of();

    @BeforeAll
    static void needsProcessGroups() throws Exception {
        assumeTrue(Files.isDirectory(Path.of("/proc/self")) && onPath("setsid"),
                "SKIPPED: needs Linux /proc and util-linux setsid to run rotactl in a process group of its own, as a"
                        + " terminal's foreground job");
        Process probe = new ProcessBuilder("env", "--default-signal=INT", "true").redirectErrorStream(true).start();
        boolean resets = probe.waitFor(10, TimeUnit.SECONDS) && probe.exitValue() == 0;
        if (resets) {
            defaultSigint = List.of("env", "--default-signal=INT");
        } else {
            assumeTrue(!ignoresSigint(ProcessHandle.current().pid()), "SKIPPED: this test JVM runs with SIGINT"
                    + " ignored (a build started in the background of a shell) and env cannot reset it"
                    + " (--default-signal needs coreutils 8.31+), so rotactl could not receive a Ctrl-C");
        }
    }

    /** Whether process {@code pid} ignores SIGINT (signal 2: bit 1 of SigIgn in /proc/PID/status). */
    private static boolean ignoresSigint(long pid) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
            if (line.startsWith("SigIgn:")) {
                return (Long.parseLong(line.substring("SigIgn:".length()).trim(), 16) & 0b10) != 0;
            }
        }
        return false;
    }

    // Issue 31, item 3: Ctrl-C used to record FAILED for good, while the SDK's close() released the claim.
    @Test
    void ctrlCDuringOnceStopsTheWholeCommandGroupAndReleasesTheClaim() throws Exception {
        Path pid = dir.resolve("once.pid");
        Process rotactl = rotactlInOwnGroup(dir.resolve("once.out"), "once", "report/ctrl-c", "--", "sh", "-c",
                WITH_CHILD, pid.toString());
        long[] command = awaitCommand(pid, rotactl);

        ctrlC(rotactl);
        awaitEnded(rotactl, dir.resolve("once.out"));
        String output = Files.readString(dir.resolve("once.out"));
        assertEquals(130, rotactl.exitValue(), "the command died of the forwarded SIGINT: " + output);
        assertFalse(output.contains("answered"), "an interrupt is not a cluster that is down: " + output);
        assertGroupGone(command);

        Run status = rotactl("once", "report/ctrl-c", "--status");
        assertEquals("report/ctrl-c: no record (never claimed, its claimer died, or its retention ended)\n", status.out(),
                "the interrupt released the claim: " + status);
        Run again = rotactl("once", "report/ctrl-c", "--", "true");
        assertEquals(0, again.exitCode(), "an interrupted run may be run again: " + again);
        assertTrue(rotactl("once", "report/ctrl-c", "--status").out().startsWith("report/ctrl-c: DONE (exit 0)"));
    }

    @Test
    void ctrlCDuringLockReleasesTheLockOnlyAfterTheWholeCommandGroupIsGone() throws Exception {
        Path pid = dir.resolve("lock.pid");
        Process rotactl = rotactlInOwnGroup(dir.resolve("lock.out"), "lock", "ctrl-c", "--", "sh", "-c", WITH_CHILD,
                pid.toString());
        long[] command = awaitCommand(pid, rotactl);

        // The next holder checks, under the lock, whether the first holder's background child still runs.
        Path seen = dir.resolve("lock.seen");
        String check = "if [ -e /proc/$1/stat ] && ! grep -q ') Z' /proc/$1/stat; then echo running; else echo gone; fi"
                + " > \"$0\"";
        Background next = new Background(CLUSTER.get().endpoints(), "lock", "ctrl-c", "--", "sh", "-c", check,
                seen.toString(), Long.toString(command[2]));
        Await.until(WAIT, () -> next.err().startsWith("waiting for lock ctrl-c held by"), "the next holder waits");

        ctrlC(rotactl);
        awaitEnded(rotactl, dir.resolve("lock.out"));
        String output = Files.readString(dir.resolve("lock.out"));
        assertEquals(130, rotactl.exitValue(), "the command's exit code, SIGINT: " + output);
        assertFalse(output.contains("Error"), output);
        assertGroupGone(command);

        Run second = next.awaitEnd();
        assertEquals(0, second.exitCode(), second.toString());
        assertEquals("gone\n", Files.readString(seen), "the lock was released only after the background child ended");
    }

    /** Starts the packaged rotactl through setsid: its pid is its process group's id, as for a terminal's job. */
    private static Process rotactlInOwnGroup(Path output, String... args) throws IOException {
        Path jar = Path.of(System.getProperty("rotactl.jar",
                RepositoryRoot.resolve("tools", "rotactl", "target", "rotactl.jar").toString()));
        assertTrue(Files.isRegularFile(jar), "needs the packaged " + jar.toAbsolutePath() + ": run ./mvnw -B verify");
        List<String> argv = new ArrayList<>(defaultSigint);
        argv.addAll(List.of("setsid", "java", "-Xmx128m", "-XX:TieredStopAtLevel=1", "-jar",
                jar.toString(), "--endpoints", CLUSTER.get().endpoints()));
        argv.addAll(List.of(args));
        return new ProcessBuilder(argv).redirectErrorStream(true).redirectOutput(output.toFile()).start();
    }

    /** Waits for the COMMAND to start; returns its pid, its process group and its background child's pid. */
    private static long[] awaitCommand(Path pidFile, Process rotactl) throws IOException {
        Await.until(WAIT, () -> Files.exists(pidFile) || !rotactl.isAlive(), "the command started");
        assertTrue(rotactl.isAlive(), "rotactl still runs the command");
        long pid = Long.parseLong(Files.readString(pidFile).trim());
        long child = Long.parseLong(Files.readString(Path.of(pidFile + ".bg")).trim());
        long group = stat(pid)[1];
        assertNotEquals(stat(rotactl.pid())[1], group, "the command runs in a process group of its own");
        assertEquals(group, stat(child)[1], "its background child is in the command's group");
        return new long[] {pid, group, child};
    }

    /**
     * Waits for rotactl to end after the Ctrl-C; if it does not, fails with what it printed and its threads (a
     * thread dump by jcmd), so a rare hang in a full suite leaves evidence, then stops it by PID.
     */
    private static void awaitEnded(Process rotactl, Path output) throws Exception {
        if (rotactl.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS)) {
            return;
        }
        String threads;
        try {
            Process jcmd = new ProcessBuilder("jcmd", Long.toString(rotactl.pid()), "Thread.print")
                    .redirectErrorStream(true).start();
            threads = new String(jcmd.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            jcmd.waitFor(10, TimeUnit.SECONDS);
        } catch (IOException e) {
            threads = "(no thread dump: " + e.getMessage() + ")";
        }
        rotactl.destroyForcibly();
        throw new AssertionError("rotactl did not end within " + WAIT + " after Ctrl-C; it printed:\n"
                + Files.readString(output) + "\nits threads:\n" + threads);
    }

    /** A terminal's Ctrl-C: SIGINT to rotactl's whole process group. */
    private static void ctrlC(Process rotactl) throws Exception {
        long group = stat(rotactl.pid())[1];
        assertEquals(rotactl.pid(), group, "setsid made rotactl its group's leader");
        assertFalse(ignoresSigint(rotactl.pid()), "rotactl runs with SIGINT at its default, as a terminal's job");
        Process kill = new ProcessBuilder("kill", "-INT", "--", "-" + group).inheritIO().start();
        assertTrue(kill.waitFor(10, TimeUnit.SECONDS));
        assertEquals(0, kill.exitValue(), "kill -INT -" + group);
    }

    private static void assertGroupGone(long[] command) throws IOException {
        List<Long> left = new ArrayList<>();
        try (Stream<Path> all = Files.list(Path.of("/proc"))) {
            for (Path p : (Iterable<Path>) all::iterator) {
                String name = p.getFileName().toString();
                if (name.chars().allMatch(Character::isDigit)) {
                    long[] s = stat(Long.parseLong(name));
                    if (s != null && s[0] != 'Z' && s[1] == command[1]) {
                        left.add(Long.parseLong(name));
                    }
                }
            }
        }
        assertEquals(List.of(), left, "no process of the command's group " + command[1] + " survives");
    }

    /** From /proc/PID/stat: {state, pgrp}, or null if the process is gone. */
    private static long[] stat(long pid) {
        String stat;
        try {
            stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return null;
        }
        String[] rest = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return new long[] {rest[0].charAt(0), Long.parseLong(rest[2])};
    }

    private static boolean onPath(String program) {
        return Stream.of(System.getenv().getOrDefault("PATH", "").split(":"))
                .anyMatch(d -> !d.isEmpty() && Files.isExecutable(Path.of(d, program)));
    }

    private static Run rotactl(String... args) {
        return RotactlRunner.run(CLUSTER.get().endpoints(), "", args);
    }
}
