package io.rota.examples.reminders;

import io.rota.testkit.ProcessCluster;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The short form of scripts/demo-daily-email.sh in the test suite: three real server processes; first three
 * app-server JVMs with a plain crontab line, then three running the daily job with Rota over a compressed
 * clock for three days, the runner of day 2 killed with kill -9 and the runner of day 3 SIGSTOPped past its
 * lease with a reminder in flight. The facts the demo tells must hold: without coordination students get
 * duplicates; with Rota every student gets exactly one reminder each day (the demo's own verdict and exit
 * code); the frozen runner's late reminder reaches the mail server and is refused by its fencing check; the
 * job history shows both take-overs.
 */
@Tag("process")
class DailyEmailDemoProcessTest {

    @TempDir
    Path dir;

    @Test
    void everyStudentGetsExactlyOneReminderADayThroughAKillAndAPause() throws Exception {
        Path jar = Path.of(System.getProperty("examples.jar", "target/rota-examples.jar"));
        assertTrue(Files.isRegularFile(jar), "needs the packaged " + jar + ": run ./mvnw -B verify");
        try (ProcessCluster cluster = ProcessCluster.start(dir.resolve("cluster"), 3)) {
            Path log = dir.resolve("demo.log");
            Process demo = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-jar", jar.toString(), "--endpoints", cluster.endpoints(), "--days", "3", "--day-seconds", "15",
                    "--students", "30", "--out", dir.resolve("apps").toString())
                    .redirectErrorStream(true).redirectOutput(log.toFile()).start();
            boolean finished = demo.waitFor(4, TimeUnit.MINUTES);
            if (!finished) {
                demo.toHandle().descendants().forEach(ProcessHandle::destroyForcibly);
                demo.destroyForcibly();
            }
            String output = Files.readString(log);
            System.out.println(output);
            assertTrue(finished, "the demo did not finish within 4 minutes:\n" + output);
            assertEquals(0, demo.exitValue(), output);
            // The demo's jar binds a logger: neither the driver nor an app instance prints slf4j's warning.
            try (Stream<Path> logs = Files.list(dir.resolve("apps"))) {
                for (Path appLog : Stream.concat(Stream.of(log), logs).toList()) {
                    assertFalse(Files.readString(appLog).contains("No SLF4J providers"), appLog + " has slf4j's warning");
                }
            }
            List<String> lines = output.lines().toList();
            assertTrue(lines.contains("verdict: every student got exactly one reminder each day"), output);
            assertTrue(output.contains(">>> kill -9 "), "the runner of day 2 was killed:\n" + output);
            assertTrue(output.contains(">>> SIGSTOP "), "the runner of day 3 was paused:\n" + output);
            long abandoned = lines.stream().filter(l -> l.contains(" ABANDONED ")).count();
            assertEquals(2, abandoned, "both interrupted runs are ABANDONED and re-run:\n" + output);
            assertTrue(lines.stream().anyMatch(l -> l.matches("total +90 +0 +0 .*")), output);

            Matcher plain = Pattern.compile("uncoordinated 2026-12-01: (\\d+) emails to 30 students, (\\d+) duplicates")
                    .matcher(output);
            assertTrue(plain.find(), "the uncoordinated run is measured:\n" + output);
            assertTrue(Integer.parseInt(plain.group(2)) > 0, "without coordination students get duplicates:\n" + output);
            Matcher total = Pattern.compile("(?m)^total +90 +0 +0 +(\\d+) +\\d+$").matcher(output);
            assertTrue(total.find() && Integer.parseInt(total.group(1)) >= 1,
                    "at least one stale write reached the mail server and was refused:\n" + output);
            assertTrue(output.contains(">>> the mail server refused "), "the demo says so:\n" + output);
            assertTrue(lines.stream().anyMatch(l -> l.matches(">>> app-\\d then stopped its run: .+")),
                    "the demo says what the woken runner did:\n" + output);
            assertTrue(lines.stream().filter(l -> l.startsWith("day 2026-12-")).count() == 3, "one line per day:\n" + output);
            assertTrue(output.contains("scripts/rotactl jobs history daily-learning-reminder --prefix demo/"),
                    "the demo names a command that shows the history:\n" + output);
        }
    }
}
