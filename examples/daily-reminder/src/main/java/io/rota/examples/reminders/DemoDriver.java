package io.rota.examples.reminders;

import io.rota.client.RotaClient;
import io.rota.client.RotaException;
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
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/**
 * The daily-reminder story, runnable, in two acts. First the problem: three app servers with the same
 * crontab line and no coordination, so every student gets three emails (measured at the mail server).
 * Then Rota: the same three app servers run the 08:00 job as a {@link SingletonJob} over a compressed clock
 * (a day lasts {@code --day-seconds}); while the days pass the driver kill -9s the instance running day 2's
 * job and freezes (SIGSTOP) the one running day 3's past its lease with a reminder in flight, which the
 * mail server's fencing check then refuses. It prints one line per day, the three faults and what followed
 * them, the totals and the job's history, and exits 1 unless every student got exactly one reminder each
 * day in the Rota run.
 */
@Command(name = "demo-daily-email", mixinStandardHelpOptions = true,
        description = "Three app servers, one daily reminder job: first without coordination, then with Rota "
                + "through a kill -9 and a pause past the lease. Does every student get exactly one email a day?")
public final class DemoDriver implements Callable<Integer> {

    private static final LocalDate FIRST_DAY = LocalDate.of(2026, 12, 1);

    @Option(names = "--endpoints", description = "Rota client endpoints (default: $ROTA_ENDPOINTS, else the local cluster).")
    String endpoints;
    @Option(names = "--days", defaultValue = "5", description = "Days to run (default: ${DEFAULT-VALUE}; the faults need 3).")
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
    /** Set once the frozen instance has been sent SIGCONT. */
    private volatile boolean resumed;
    /** When it was, and whether the driver has told what the woken instance then did. */
    private volatile long resumedAtNanos;
    private boolean wokenToldAbout;
    /** The run killed with kill -9 and the run frozen past its lease ("instance token"), once they happen. */
    private volatile String killedRun = "";
    private volatile String frozenRun = "";
    /** The arguments every app server of the Rota run gets (all but its instance id). */
    private List<String> appArgs;

    /** A driver printing to {@code console}. */
    DemoDriver(PrintStream console) {
        this.console = console;
    }

    /** slf4j-simple's level for the SDK's loggers in the driver's JVM. */
    private static final String SDK_LOG_LEVEL = "org.slf4j.simpleLogger.log.io.rota.client";

    /** Runs the demo; exit code 0 if every student got exactly one reminder each day. */
    public static void main(String[] args) {
        // The driver's own client only reads the job history at the end; its connection-state lines ("SUSPENDED
        // -> CONNECTED", "-> LOST (the client was closed)") would interrupt the story. The app servers keep
        // theirs, in their logs. -Dorg.slf4j.simpleLogger.log.io.rota.client=info brings them back.
        if (System.getProperty(SDK_LOG_LEVEL) == null) {
            System.setProperty(SDK_LOG_LEVEL, "error");
        }
        System.exit(commandLine(new DemoDriver(System.out)).execute(args));
    }

    /**
     * The driver's command line: a run that cannot go on (an app server that did not start) ends with one
     * {@code demo: ...} line saying why and where to look, not a stack trace.
     */
    static CommandLine commandLine(DemoDriver driver) {
        return new CommandLine(driver).setExecutionExceptionHandler((e, cmd, parsed) -> {
            if (!(e instanceof IllegalStateException)) {
                throw e;
            }
            cmd.getErr().println("demo: " + e.getMessage());
            cmd.getErr().flush();
            return 1;
        });
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
        checkTheCluster();
        String prefix = "demo/" + System.currentTimeMillis();
        console.printf("%d app servers, %d students, a day lasts %d s; the app servers' logs are in %s%n%n",
                instances, students, daySeconds, out);
        MailSink.DayReport plain = uncoordinated();
        console.printf("%n2. With Rota: the same %d app servers run the 08:00 job as a SingletonJob (keys under %s/)%n",
                instances, prefix);
        if (!noFaults && days >= 3) {
            console.println("   day 2: its runner is killed (kill -9); day 3: its runner freezes (SIGSTOP) past its lease");
        }
        try (MailSink sink = new MailSink(latencyMs)) {
            appArgs = List.of("--endpoints", endpoints, "--sink", sink.url(),
                    "--students", Integer.toString(students), "--prefix", prefix,
                    "--lock-ttl-ms", Long.toString(lockTtlMs));
            for (int i = 1; i <= instances; i++) {
                apps.add(startApp(i, "app-", appArgs));
            }
            try {
                awaitReady(sink, apps, "app-");
                startClock(sink);
                runDays(sink);
            } finally {
                stop(apps);
            }
            return report(sink, prefix, plain);
        }
    }

    /**
     * Act one: the same app without Rota on every server, as a plain crontab line. Every server sends every
     * student the day's reminder; the mail server counts what each student got.
     */
    private MailSink.DayReport uncoordinated() throws Exception {
        console.printf("1. Without coordination: %d app servers, each with the same crontab line (08:00: send the reminders)%n",
                instances);
        List<Process> plain = new ArrayList<>();
        try (MailSink sink = new MailSink(latencyMs)) {
            List<String> args = List.of("--plain-cron", "--endpoints", endpoints, "--sink", sink.url(),
                    "--students", Integer.toString(students));
            try {
                for (int i = 1; i <= instances; i++) {
                    plain.add(startApp(i, "plain-app-", args));
                }
                awaitReady(sink, plain, "plain-app-");
                startClock(sink);
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (sink.runs().stream().filter(e -> e.event().equals("end")).count() < instances
                        && plain.stream().anyMatch(Process::isAlive) && System.nanoTime() < deadline) {
                    TimeUnit.MILLISECONDS.sleep(50);
                }
            } finally {
                stop(plain);
            }
            MailSink.DayReport r = sink.report(FIRST_DAY.toString(), students);
            console.printf("   uncoordinated %s: %d emails to %d students, %d duplicates, %d missing: %s%n", r.day(), r.sent(),
                    students, r.duplicates(), r.missing(), r.fewest() == r.most()
                            ? "every student got " + r.most()
                            : "students got between " + r.fewest() + " and " + r.most());
            return r;
        }
    }

    /** Waits until every app server of {@code group} has said it is ready (reached the cluster, if it uses it). */
    private void awaitReady(MailSink sink, List<Process> group, String name) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (sink.runs().stream().filter(e -> e.event().equals("ready")).count() < group.size()) {
            for (int i = 0; i < group.size(); i++) {
                Process p = group.get(i);
                if (!p.isAlive()) {
                    Path log = out.resolve(name + (i + 1) + ".log");
                    throw new IllegalStateException(name + (i + 1) + " exited at start (exit " + p.exitValue() + ")"
                            + firstError(log) + "; its log: " + log + "; is the cluster at " + endpoints
                            + " up and answering? (scripts/rotactl endpoint health --endpoints " + endpoints + ")");
                }
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the app servers did not all reach the cluster within 60 s; see " + out);
            }
            TimeUnit.MILLISECONDS.sleep(50);
        }
    }

    /** Publishes the shared compressed clock: every app server is up, the first 08:00 is 2 s away. */
    private void startClock(MailSink sink) {
        double speed = 86_400.0 / daySeconds;
        long realOrigin = System.currentTimeMillis();
        Instant simOrigin = FIRST_DAY.atTime(LocalTime.of(8, 0)).toInstant(ZoneOffset.UTC)
                .minusMillis((long) (2_000 * speed));
        sink.setClock(realOrigin + " " + simOrigin + " " + speed);
    }

    /**
     * Follows the days until the last one's run has finished (or a deadline passes), printing one line per
     * day; kills day 2's runner once a third of its reminders are out, and arms the mail server to freeze
     * day 3's runner at the same point with a reminder in flight.
     */
    private void runDays(MailSink sink) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5 + (long) (days + 2) * daySeconds);
        String lastDay = FIRST_DAY.plusDays(days - 1).toString();
        boolean killed = noFaults || days < 2;
        if (!noFaults && days >= 3) {
            sink.arm(new MailSink.InFlightTrap(FIRST_DAY.plusDays(2).toString(), students / 3, this::freeze,
                    () -> resumed, lockTtlMs + 30_000));
        }
        Set<String> summarised = new HashSet<>();
        while (!summarised.contains(lastDay)) {
            if (System.nanoTime() > deadline) {
                console.printf("deadline passed: day %s reached %d of %d students%n", lastDay, sink.delivered(lastDay), students);
                return;
            }
            for (MailSink.RunEvent e : sink.runs()) {
                if (e.event().equals("end") && summarised.add(e.day())) {
                    console.println(daySummary(sink, e.day()));
                }
            }
            if (resumed && !wokenToldAbout) {
                tellWhatTheWokenRunnerDid(sink, false);
            }
            Optional<MailSink.RunEvent> running = latestStart(sink);
            if (!killed && running.isPresent() && running.get().day().equals(FIRST_DAY.plusDays(1).toString())
                    && sink.delivered(running.get().day()) >= students / 3) {
                killNine(running.get(), sink.delivered(running.get().day()));
                killed = true;
            }
            TimeUnit.MILLISECONDS.sleep(50);
        }
        if (resumer != null) {
            resumer.join(TimeUnit.MINUTES.toMillis(1)); // the paused instance must wake up before the books close
            long told = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
            while (!wokenToldAbout) {
                tellWhatTheWokenRunnerDid(sink, System.nanoTime() > told);
                TimeUnit.MILLISECONDS.sleep(50);
            }
        }
    }

    /** "day D: reached, duplicates; runs: who ran it and how each run ended". */
    private String daySummary(MailSink sink, String day) {
        MailSink.DayReport r = sink.report(day, students);
        List<String> runs = new ArrayList<>();
        List<MailSink.RunEvent> events = sink.runs();
        for (MailSink.RunEvent start : events) {
            if (!start.event().equals("start") || !start.day().equals(day)) {
                continue;
            }
            String run = start.instance() + " " + start.token();
            boolean ended = events.stream().anyMatch(e -> e.event().equals("end") && e.day().equals(day)
                    && (e.instance() + " " + e.token()).equals(run));
            String fate = run.equals(killedRun) ? "killed" : run.equals(frozenRun) ? "frozen" : ended ? "finished" : "stopped";
            runs.add(start.instance() + " (token " + start.token() + ") " + fate);
        }
        return String.format("day %s: %d/%d students reached, %d duplicates; %s", day, students - r.missing(), students,
                r.duplicates(), String.join(", then ", runs));
    }

    private void killNine(MailSink.RunEvent running, int delivered) throws Exception {
        int index = indexOf(running.instance());
        console.printf(">>> kill -9 %s (pid %d) while it runs %s with token %d (%d sent); a supervisor restarts it 2 s later%n",
                running.instance(), running.pid(), running.day(), running.token(), delivered);
        killedRun = running.instance() + " " + running.token();
        apps.get(index).destroyForcibly().waitFor();
        // A supervisor (systemd, Kubernetes) would restart it; so do we, a little later.
        Thread restart = new Thread(() -> {
            try {
                TimeUnit.SECONDS.sleep(2);
                apps.set(index, startApp(index + 1, "app-", appArgs));
            } catch (Exception e) {
                console.printf(">>> could not restart %s: %s%n", running.instance(), e);
            }
        }, "restart-" + running.instance());
        restart.setDaemon(true);
        restart.start();
    }

    /**
     * The mail server caught {@code instance}'s send with {@code token} (the trap): freeze the sender now,
     * past its lease, and wake it up later. Runs on the mail server's thread, before the send is checked.
     */
    private void freeze(String instance, long token) {
        long pauseMs = lockTtlMs + 5_000;
        long pid = apps.get(indexOf(instance)).pid();
        frozenRun = instance + " " + token;
        console.printf(">>> SIGSTOP %s (pid %d) for %.1f s, past its %.1f s lease, while it runs %s with token %d, a reminder in flight%n",
                instance, pid, pauseMs / 1000.0, lockTtlMs / 1000.0, FIRST_DAY.plusDays(2), token);
        try {
            signal(pid, "STOP");
        } catch (IOException | InterruptedException e) {
            console.printf(">>> could not pause %s: %s%n", instance, e);
            resumed = true;
            return;
        }
        resumer = new Thread(() -> {
            try {
                TimeUnit.MILLISECONDS.sleep(pauseMs);
                signal(pid, "CONT");
                console.printf(">>> SIGCONT %s: it wakes up still holding token %d; its reminder arrives at the mail server now, late%n",
                        instance, token);
            } catch (Exception e) {
                console.printf(">>> could not resume %s: %s%n", instance, e);
            } finally {
                resumedAtNanos = System.nanoTime();
                resumed = true;
            }
        }, "resume-" + instance);
        resumer.setDaemon(true);
        resumer.start();
    }

    /**
     * After SIGCONT: the woken runner's late send, the fencing check's answer, and how its run ended. Tells
     * once both are known, or with {@code force} (or 15 s after the SIGCONT) what is known by then.
     */
    private void tellWhatTheWokenRunnerDid(MailSink sink, boolean force) {
        String[] frozen = frozenRun.split(" ");
        Optional<MailSink.StaleSend> refused = sink.staleSends().stream().filter(s -> s.instance().equals(frozen[0])
                && Long.toString(s.token()).equals(frozen[1])).findFirst();
        Optional<MailSink.RunEvent> stopped = sink.runs().stream().filter(e -> e.event().equals("stopped")
                && e.instance().equals(frozen[0]) && Long.toString(e.token()).equals(frozen[1])).findFirst();
        boolean late = System.nanoTime() - resumedAtNanos > TimeUnit.SECONDS.toNanos(15);
        if ((refused.isEmpty() || stopped.isEmpty()) && !force && !late) {
            return;
        }
        wokenToldAbout = true;
        if (refused.isPresent()) {
            MailSink.StaleSend s = refused.get();
            console.printf(">>> the mail server refused %s's reminder to student %d: token %d, but it has seen token %d "
                    + "from the runner that took over (fencing: a stale write rejected)%n", s.instance(), s.student(),
                    s.token(), s.highest());
        } else {
            console.printf(">>> %s's late reminder did not reach the mail server; see its log in %s%n", frozen[0], out);
        }
        console.printf(">>> %s then %s%n", frozen[0], stopped.map(e -> "stopped its run: " + e.detail())
                .orElse("said nothing about its run; see its log in " + out));
    }

    private int report(MailSink sink, String prefix, MailSink.DayReport plain) {
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
        console.println("stale-rejected: sends refused for a stale fencing token (a runner that had lost its lock); "
                + "repeats-absorbed: a delivered idempotency key sent again (a runner died between sending and recording)");
        console.println();
        printHistory(prefix);
        boolean ok = duplicates == 0 && missing == 0;
        console.printf("without coordination: %d duplicate emails in one day; with Rota: %d duplicates, %d missing in %d day%s%s%n",
                plain.duplicates(), duplicates, missing, days, days == 1 ? "" : "s",
                noFaults || days < 3 ? "" : ", through a kill -9 and a pause past the lease");
        console.println(ok ? "verdict: every student got exactly one reminder each day"
                : "verdict: FAILED: " + duplicates + " duplicate and " + missing + " missing reminders");
        return ok ? 0 : 1;
    }

    private void printHistory(String prefix) {
        String command = "scripts/rotactl jobs history " + ReminderApp.JOB + " --prefix " + prefix + "/jobs --endpoints " + endpoints;
        try (RotaClient rota = RotaClient.connect(endpoints)) {
            List<JobRun> runs = SingletonJob.history(rota, prefix + "/jobs", ReminderApp.JOB);
            console.println("the job's history, as Rota recorded it (" + command + "):");
            for (JobRun r : runs) {
                console.printf("  %s  token %-6d %-8s %-10s %s%n", r.fireTime(), r.token(), r.instanceId(), r.state(),
                        r.outcome() == null ? "" : r.outcome());
            }
        } catch (RuntimeException e) {
            console.println("could not read the job history (" + command + "): " + e.getMessage());
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

    /** Starts (or restarts) app server {@code <name>n} with {@code args}; its log goes to {@code out/<name>n.log}. */
    /**
     * One read before act one, which does not need the cluster: a wrong or stopped cluster is said at once, not
     * after a whole uncoordinated day.
     */
    private void checkTheCluster() {
        try (RotaClient rota = RotaClient.connect(endpoints)) {
            rota.kv().get("demo/");
        } catch (RotaException e) {
            throw new IllegalStateException("cannot reach the cluster at " + endpoints + ": " + e.getMessage()
                    + "; start it with scripts/cluster.sh start, or give its client ports with --endpoints");
        }
    }

    /** The first exception line of an app server's log (its cause), as {@code ": cause"}, or "". */
    static String firstError(Path log) {
        try (var lines = Files.lines(log)) {
            return lines.filter(l -> l.contains("Exception") && !l.startsWith("\t") && !l.startsWith("Caused by"))
                    .findFirst().map(l -> ": " + l.trim()).orElse("");
        } catch (IOException | java.io.UncheckedIOException e) {
            return "";
        }
    }

    private Process startApp(int n, String name, List<String> args) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(javaBin(), "-Xmx128m", "-XX:+UseSerialGC", "-cp", ownJar(),
                ReminderApp.class.getName(), "--instance", "app-" + n));
        cmd.addAll(args);
        return new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(out.resolve(name + n + ".log").toFile())).start();
    }

    private static void stop(List<Process> group) throws InterruptedException {
        for (Process p : group) {
            p.toHandle().descendants().forEach(ProcessHandle::destroyForcibly);
            signalQuietly(p.pid(), "CONT");
            p.destroyForcibly();
        }
        for (Process p : group) {
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
