package io.rota.examples.reminders;

import io.rota.client.RotaClient;
import io.rota.client.recipes.JobRun;
import io.rota.client.recipes.SingletonJob;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/**
 * The daily-reminder story, runnable. Starts a mail sink and three {@link ReminderApp} JVMs that all
 * schedule the same 08:00 job over a compressed clock (a day lasts {@code --day-seconds}), then, while
 * the days pass, kill -9s the instance running day 2's job and SIGSTOPs the one running day 3's past its
 * lease (SIGCONT after). At the end it prints per day and in total what the students received, and exits
 * 1 unless every student got exactly one reminder each day.
 */
@Command(name = "demo-daily-email", mixinStandardHelpOptions = true,
        description = "Three app servers, one daily reminder job, kill -9 and SIGSTOP in the middle: does every student get exactly one email a day?")
public final class DemoDriver implements Callable<Integer> {

    private static final LocalDate FIRST_DAY = LocalDate.of(2026, 12, 1);

    @Option(names = "--endpoints", description = "Rota client endpoints (default: $ROTA_ENDPOINTS, else the local cluster).")
    String endpoints;
    @Option(names = "--days", defaultValue = "5", description = "Days to run (default: ${DEFAULT-VALUE}).")
    int days;
    @Option(names = "--day-seconds", defaultValue = "20", description = "Real seconds per simulated day (default: ${DEFAULT-VALUE}).")
    int daySeconds;
    @Option(names = "--students", defaultValue = "100", description = "Students (default: ${DEFAULT-VALUE}).")
    int students;
    @Option(names = "--instances", defaultValue = "3", description = "App server JVMs (default: ${DEFAULT-VALUE}).")
    int instances;
    @Option(names = "--lock-ttl-ms", defaultValue = "4000", description = "The runner's lease TTL (default: ${DEFAULT-VALUE}).")
    long lockTtlMs;
    @Option(names = "--latency-ms", defaultValue = "10", description = "Time the mail server takes per email (default: ${DEFAULT-VALUE}).")
    int latencyMs;
    @Option(names = "--no-faults", description = "Do not kill or pause anything.")
    boolean noFaults;
    @Option(names = "--out", description = "Directory for the app servers' logs (default: a new temporary directory).")
    Path out;

    private final PrintStream console;
    private final List<Process> apps = new ArrayList<>();
    /** Sends SIGCONT to the paused instance when its pause is over; null until then. */
    private volatile Thread resumer;
    /** The arguments every app server gets (all but its instance id). */
    private List<String> appArgs;

    /** A driver printing to {@code console}. */
    DemoDriver(PrintStream console) {
        this.console = console;
    }

    /** Runs the demo; exit code 0 if every student got exactly one reminder each day. */
    public static void main(String[] args) {
        System.exit(new CommandLine(new DemoDriver(System.out)).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        if (endpoints == null) {
            endpoints = Optional.ofNullable(System.getenv("ROTA_ENDPOINTS")).orElse("127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003");
        }
        if (out == null) {
            out = Files.createTempDirectory("rota-demo-");
        }
        Files.createDirectories(out);
        double speed = 86_400.0 / daySeconds;
        String prefix = "demo/" + System.currentTimeMillis();
        try (MailSink sink = new MailSink(latencyMs)) {
            console.printf("mail server at %s; %d app servers, %d students, %d days of %d s; keys under %s/; logs in %s%n",
                    sink.url(), instances, students, days, daySeconds, prefix, out);
            appArgs = List.of("--endpoints", endpoints, "--sink", sink.url(),
                    "--students", Integer.toString(students), "--prefix", prefix,
                    "--lock-ttl-ms", Long.toString(lockTtlMs));
            for (int i = 1; i <= instances; i++) {
                apps.add(startApp(i));
            }
            try {
                awaitReady(sink);
                // Every app server is up: start the shared clock so that the first 08:00 is 2 s away.
                long realOrigin = System.currentTimeMillis();
                Instant simOrigin = FIRST_DAY.atTime(LocalTime.of(8, 0)).toInstant(ZoneOffset.UTC)
                        .minusMillis((long) (2_000 * speed));
                sink.setClock(realOrigin + " " + simOrigin + " " + speed);
                runDays(sink);
            } finally {
                stopApps();
            }
            return report(sink, prefix);
        }
    }

    /** Waits until every app server has reached the cluster and said so. */
    private void awaitReady(MailSink sink) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (sink.runs().stream().filter(e -> e.event().equals("ready")).count() < instances) {
            for (Process p : apps) {
                if (!p.isAlive()) {
                    throw new IllegalStateException("an app server exited at start (exit " + p.exitValue()
                            + "); see its log in " + out);
                }
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the app servers did not all reach the cluster within 60 s; see " + out);
            }
            TimeUnit.MILLISECONDS.sleep(50);
        }
        console.printf("all %d app servers are up; the clock starts: the first 08:00 is in 2 s%n", instances);
    }

    /**
     * Follows the days until the last one has reached every student (or a deadline passes), injecting the
     * faults into the runs of days 2 and 3 once a third of their reminders are out, and shows progress.
     */
    private void runDays(MailSink sink) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5 + (long) (days + 2) * daySeconds);
        String lastDay = FIRST_DAY.plusDays(days - 1).toString();
        boolean killed = noFaults;
        boolean paused = noFaults;
        String shown = "";
        while (sink.delivered(lastDay) < students) {
            if (System.nanoTime() > deadline) {
                console.printf("deadline passed: day %s reached %d of %d students%n", lastDay, sink.delivered(lastDay), students);
                return;
            }
            Optional<MailSink.RunEvent> running = latestStart(sink);
            if (running.isPresent()) {
                MailSink.RunEvent r = running.get();
                int delivered = sink.delivered(r.day());
                int dayIndex = (int) (LocalDate.parse(r.day()).toEpochDay() - FIRST_DAY.toEpochDay());
                if (!killed && dayIndex == 1 && delivered >= students / 3) {
                    killNine(r, delivered);
                    killed = true;
                } else if (!paused && dayIndex == 2 && delivered >= students / 3) {
                    pausePastLease(r, delivered);
                    paused = true;
                }
                String line = String.format("day %s: run by %s (token %d), %d/%d reminders delivered", r.day(),
                        r.instance(), r.token(), delivered / 10 * 10, students);
                if (!line.equals(shown)) {
                    console.println(line);
                    shown = line;
                }
            }
            TimeUnit.MILLISECONDS.sleep(50);
        }
        console.printf("day %s: all %d students reached%n", lastDay, students);
        if (resumer != null) {
            resumer.join(TimeUnit.MINUTES.toMillis(1)); // the paused instance must wake up before the books close
        }
        TimeUnit.SECONDS.sleep(2); // time for a woken instance's late, stale sends to arrive
        console.println("stopping the app servers");
    }

    private void killNine(MailSink.RunEvent running, int delivered) throws Exception {
        int index = indexOf(running.instance());
        console.printf(">>> kill -9 %s (pid %d) while it runs %s with token %d (%d sent)%n",
                running.instance(), running.pid(), running.day(), running.token(), delivered);
        apps.get(index).destroyForcibly().waitFor();
        // A supervisor (systemd, Kubernetes) would restart it; so do we, a little later.
        Thread restart = new Thread(() -> {
            try {
                TimeUnit.SECONDS.sleep(2);
                apps.set(index, startApp(index + 1));
                console.printf(">>> %s restarted (pid %d)%n", running.instance(), apps.get(index).pid());
            } catch (Exception e) {
                console.printf(">>> could not restart %s: %s%n", running.instance(), e);
            }
        }, "restart-" + running.instance());
        restart.setDaemon(true);
        restart.start();
    }

    private void pausePastLease(MailSink.RunEvent running, int delivered) throws Exception {
        long pauseMs = lockTtlMs + 5_000;
        console.printf(">>> SIGSTOP %s (pid %d) for %.1f s, past its %.1f s lease, while it runs %s with token %d (%d sent)%n",
                running.instance(), running.pid(), pauseMs / 1000.0, lockTtlMs / 1000.0, running.day(), running.token(), delivered);
        signal(running.pid(), "STOP");
        resumer = new Thread(() -> {
            try {
                TimeUnit.MILLISECONDS.sleep(pauseMs);
                signal(running.pid(), "CONT");
                console.printf(">>> SIGCONT %s: it wakes up still holding token %d%n", running.instance(), running.token());
            } catch (Exception e) {
                console.printf(">>> could not resume %s: %s%n", running.instance(), e);
            }
        }, "resume-" + running.instance());
        resumer.setDaemon(true);
        resumer.start();
    }

    private int report(MailSink sink, String prefix) {
        console.println();
        console.printf("%-12s %6s %11s %8s %15s %17s%n", "day", "sent", "duplicates", "missing", "stale-rejected", "repeats-absorbed");
        int sent = 0, duplicates = 0, missing = 0, stale = 0, absorbed = 0;
        for (int d = 0; d < days; d++) {
            MailSink.DayReport r = sink.report(FIRST_DAY.plusDays(d).toString(), students);
            console.printf("%-12s %6d %11d %8d %15d %17d%n", r.day(), r.sent(), r.duplicates(), r.missing(),
                    r.staleRejected(), r.repeatsAbsorbed());
            sent += r.sent();
            duplicates += r.duplicates();
            missing += r.missing();
            stale += r.staleRejected();
            absorbed += r.repeatsAbsorbed();
        }
        console.printf("%-12s %6d %11d %8d %15d %17d%n", "total", sent, duplicates, missing, stale, absorbed);
        console.println("stale-rejected: sends refused by the mail server for a stale fencing token (a runner that lost its lock)");
        console.println("repeats-absorbed: sends of an already delivered idempotency key (a runner died between sending and recording it)");
        console.println();
        printHistory(prefix);
        boolean ok = duplicates == 0 && missing == 0;
        console.println(ok ? "verdict: every student got exactly one reminder each day"
                : "verdict: FAILED: " + duplicates + " duplicate and " + missing + " missing reminders");
        return ok ? 0 : 1;
    }

    private void printHistory(String prefix) {
        try (RotaClient rota = RotaClient.connect(endpoints)) {
            List<JobRun> runs = SingletonJob.history(rota, prefix + "/jobs", ReminderApp.JOB);
            console.println("job history (rotactl jobs history " + ReminderApp.JOB + " shows the same):");
            for (JobRun r : runs) {
                console.printf("  %s  token %-6d %-8s %-10s %s%n", r.fireTime(), r.token(), r.instanceId(), r.state(),
                        r.outcome() == null ? "" : r.outcome());
            }
        } catch (RuntimeException e) {
            console.println("could not read the job history: " + e.getMessage());
        }
    }

    /** The most recent run start: the instance running (or last running) the job. */
    private static Optional<MailSink.RunEvent> latestStart(MailSink sink) {
        MailSink.RunEvent last = null;
        for (MailSink.RunEvent e : sink.runs()) {
            if (e.event().equals("start")) {
                last = e;
            }
        }
        return Optional.ofNullable(last);
    }

    private int indexOf(String instance) {
        return Integer.parseInt(instance.substring("app-".length())) - 1;
    }

    /** Starts (or restarts) app server {@code app-n}; its log goes to {@code out/app-n.log}. */
    private Process startApp(int n) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(javaBin(), "-Xmx128m", "-XX:+UseSerialGC", "-cp", ownJar(),
                ReminderApp.class.getName(), "--instance", "app-" + n));
        cmd.addAll(appArgs);
        return new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(out.resolve("app-" + n + ".log").toFile())).start();
    }

    private void stopApps() throws InterruptedException {
        for (Process p : apps) {
            p.toHandle().descendants().forEach(ProcessHandle::destroyForcibly);
            signalQuietly(p.pid(), "CONT");
            p.destroyForcibly();
        }
        for (Process p : apps) {
            p.waitFor(10, TimeUnit.SECONDS);
        }
    }

    private static void signal(long pid, String signal) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid))
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
            throw new IOException("kill -" + signal + " " + pid + " failed");
        }
    }

    private static void signalQuietly(long pid, String signal) {
        try {
            signal(pid, signal);
        } catch (IOException | InterruptedException ignored) {
            // already gone
        }
    }

    private static String ownJar() {
        try {
            return Path.of(DemoDriver.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
        } catch (Exception e) {
            throw new IllegalStateException("cannot find the examples jar: " + e, e);
        }
    }

    private static String javaBin() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }
}
