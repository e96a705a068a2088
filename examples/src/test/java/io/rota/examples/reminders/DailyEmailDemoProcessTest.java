package io.rota.examples.reminders;

import io.rota.testkit.ProcessCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The short form of scripts/demo-daily-email.sh in the test suite: three real server processes, three
 * app-server JVMs running the daily job over a compressed clock for three days, the runner of day 2
 * killed with kill -9 and the runner of day 3 SIGSTOPped past its lease. Every student must get exactly
 * one reminder each day (the demo's own verdict and exit code), and the job history must show both
 * take-overs.
 */
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
            List<String> lines = output.lines().toList();
            assertTrue(lines.contains("verdict: every student got exactly one reminder each day"), output);
            assertTrue(output.contains(">>> kill -9 "), "the runner of day 2 was killed:\n" + output);
            assertTrue(output.contains(">>> SIGSTOP "), "the runner of day 3 was paused:\n" + output);
            long abandoned = lines.stream().filter(l -> l.contains(" ABANDONED ")).count();
            assertEquals(2, abandoned, "both interrupted runs are ABANDONED and re-run:\n" + output);
            assertTrue(lines.stream().anyMatch(l -> l.matches("total +90 +0 +0 .*")), output);
        }
    }
}
