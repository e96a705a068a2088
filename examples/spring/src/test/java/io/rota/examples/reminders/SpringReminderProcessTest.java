package io.rota.examples.reminders;

import io.rota.client.RotaClient;
import io.rota.client.recipes.JobRun;
import io.rota.client.recipes.JobState;
import io.rota.client.recipes.SingletonJob;
import io.rota.testkit.Await;
import io.rota.testkit.ProcessCluster;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Spring reminder application as users run it: three instances of the repackaged jar ({@code java -jar})
 * against a real three-member Rota cluster (three server processes), a compressed schedule (a fire time
 * every 8 s stands for a day). The instance running the second day is killed with kill -9; the one running
 * the third day is SIGSTOPped past its lease and SIGCONTed. The verdict is the demo's
 * (scripts/demo-daily-email.sh): every student gets exactly one reminder per day, and the job history shows
 * both interrupted runs ABANDONED and re-run. Lives in the package of {@link MailSink}, the demo's mail server.
 */
@Tag("process")
class SpringReminderProcessTest {

    static final int STUDENTS = 20;
    static final int DAYS = 4;
    static final Duration PERIOD = Duration.ofSeconds(8);
    static final Duration LOCK_TTL = Duration.ofSeconds(3);
    static final String JOB = "daily-learning-reminder";

    @TempDir
    Path dir;

    final List<Process> apps = new ArrayList<>();

    @AfterEach
    void stopApps() throws Exception {
        for (Process p : apps) {
            signal(p.pid(), "CONT");   // a paused JVM cannot die of SIGKILL until it runs again on some kernels
            p.destroyForcibly();
        }
        for (Process p : apps) {
            p.waitFor(10, TimeUnit.SECONDS);
        }
    }

    @Test
    @DisplayName("three Spring Boot instances, kill -9 one runner and pause another: one reminder per student per day")
    void everyStudentGetsExactlyOneReminderADay() throws Exception {
        try {
            run();
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "\n" + logs(), e);
        }
    }

    /** The instances' logs, for a failure's message. */
    String logs() throws IOException {
        StringBuilder b = new StringBuilder();
        for (int n = 1; n <= 3; n++) {
            Path log = dir.resolve("app-" + n + ".log");
            if (Files.exists(log)) {
                b.append("---- app-").append(n).append(".log\n").append(Files.readString(log));
            }
        }
        return b.toString();
    }

    void run() throws Exception {
        Path jar = Path.of(System.getProperty("app.jar", "target/rota-examples-spring.jar"));
        assertTrue(Files.isRegularFile(jar), "needs the repackaged " + jar + ": run ./mvnw -B verify");
        String prefix = "spring-demo/" + System.currentTimeMillis();
        try (ProcessCluster cluster = ProcessCluster.start(dir.resolve("cluster"), 3);
             MailSink sink = new MailSink(100)) {
            for (int i = 1; i <= 3; i++) {
                apps.add(start(jar, i, cluster.endpoints(), sink.url(), prefix));
            }
            Await.until(Duration.ofSeconds(40), () -> events(sink, "ready").size() == 3, "three instances ready; logs in " + dir);

            MailSink.RunEvent killed = awaitRunHalfDone(sink, 2);
            apps.get(instance(killed)).destroyForcibly().waitFor();
            MailSink.RunEvent paused = awaitRunHalfDone(sink, 3);
            signal(paused.pid(), "STOP");
            Await.until(LOCK_TTL.plus(Duration.ofSeconds(20)), () -> runsOf(sink, paused.day()) >= 2,
                    "another instance took over " + paused.day());
            signal(paused.pid(), "CONT");

            List<String> days = days(sink);
            Await.until(PERIOD.multipliedBy(DAYS + 2), () -> days(sink).size() >= DAYS
                    && sink.delivered(days(sink).get(DAYS - 1)) == STUDENTS, DAYS + " days delivered");
            Await.until(Duration.ofSeconds(20), () -> sink.delivered(paused.day()) == STUDENTS,
                    "the paused day completed");

            List<String> report = new ArrayList<>();
            int duplicates = 0;
            int missing = 0;
            for (String day : days(sink).subList(0, DAYS)) {
                MailSink.DayReport r = sink.report(day, STUDENTS);
                report.add(r.toString());
                duplicates += r.duplicates();
                missing += r.missing();
            }
            String books = String.join("\n", report) + "\nruns: " + sink.runs() + "\ndays seen first: " + days;
            assertEquals(0, duplicates, "duplicate reminders:\n" + books);
            assertEquals(0, missing, "missing reminders:\n" + books);

            try (RotaClient rota = RotaClient.connect(cluster.endpoints())) {
                List<JobRun> history = SingletonJob.history(rota, prefix + "/jobs", JOB);
                Set<String> abandoned = history.stream().filter(r -> r.state() == JobState.ABANDONED)
                        .map(r -> r.fireTime().toString()).collect(Collectors.toCollection(LinkedHashSet::new));
                assertEquals(Set.of(killed.day(), paused.day()), abandoned,
                        "the killed and the paused runs are ABANDONED and re-run:\n" + history);
            }
        }
    }

    /** Starts instance {@code app-n}: the repackaged jar, as a user runs it, with the demo's settings. */
    Process start(Path jar, int n, String endpoints, String sink, String prefix) throws IOException {
        List<String> cmd = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-jar", jar.toString(),
                "--rota.endpoints=" + endpoints, "--rota.instance-id=app-" + n,
                "--rota.jobs.prefix=" + prefix + "/jobs", "--rota.jobs.lock-ttl=" + LOCK_TTL.toSeconds() + "s",
                "--rota.jobs.poll-interval=100ms",
                "--reminder.cron=", "--reminder.fixed-rate=" + PERIOD.toSeconds() + "s",
                "--reminder.sink=" + sink, "--reminder.students=" + STUDENTS, "--reminder.prefix=" + prefix);
        return new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("app-" + n + ".log").toFile())).start();
    }

    /** Waits until the run of the {@code n}th day (1-based) has reached a third of the students; its start. */
    MailSink.RunEvent awaitRunHalfDone(MailSink sink, int n) {
        Await.until(PERIOD.multipliedBy(n + 2), () -> days(sink).size() >= n
                && sink.delivered(days(sink).get(n - 1)) >= STUDENTS / 3, "day " + n + " under way");
        String day = days(sink).get(n - 1);
        Optional<MailSink.RunEvent> start = events(sink, "start").stream().filter(e -> e.day().equals(day))
                .reduce((a, b) -> b);
        return start.orElseThrow();
    }

    /** The fire times ("days") runs started for, in order. */
    static List<String> days(MailSink sink) {
        return events(sink, "start").stream().map(MailSink.RunEvent::day).distinct().sorted().toList();
    }

    static long runsOf(MailSink sink, String day) {
        return events(sink, "start").stream().filter(e -> e.day().equals(day)).count();
    }

    static List<MailSink.RunEvent> events(MailSink sink, String event) {
        return sink.runs().stream().filter(e -> e.event().equals(event)).toList();
    }

    static int instance(MailSink.RunEvent e) {
        return Integer.parseInt(e.instance().substring("app-".length())) - 1;
    }

    static void signal(long pid, String signal) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid))
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        kill.waitFor(10, TimeUnit.SECONDS);
    }
}
