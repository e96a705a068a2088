package io.rota.bench;

import io.rota.bench.driver.Markers;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * One compare pass: for each system in turn, start its cluster, run the driver in a fresh JVM, sample the
 * members' CPU around each measured window, kill the leader when the failover workload asks, stop the
 * cluster — so each system has the machine to itself — and finally render the table.
 */
final class Compare {

    /** The pseudo-workload of the idle CPU sample (its "per op" is per second). */
    static final String IDLE = "idle";
    /** How long the idle CPU sample lasts: long enough for a few 10 ms ticks per member to add up. */
    static final long IDLE_SECONDS = 3;

    /** Driver JVM flags, the same for every system. */
    static final List<String> DRIVER_JVM = List.of("-Xms256m", "-Xmx1g");

    private final Plan plan;
    private final List<SystemUnderTest> systems;
    private final Path workDir;
    private final Path root;
    private final PrintStream out;
    private final long ticksPerSecond;
    /** The system whose members run now, and its driver: what Ctrl-C must stop (see {@link #run()}). */
    private volatile SystemUnderTest running;
    private volatile Process runningDriver;

    /**
     * @param plan    what to run
     * @param systems the systems, in the plan's order
     * @param workDir where logs and data go
     * @param root    the repository (for Rota's commit)
     * @param out     progress and the report
     */
    Compare(Plan plan, List<SystemUnderTest> systems, Path workDir, Path root, PrintStream out) {
        this.plan = plan;
        this.systems = systems;
        this.workDir = workDir;
        this.root = root;
        this.out = out;
        this.ticksPerSecond = clockTicks(new Shell(workDir.resolve("bench.log")));
    }

    /**
     * Runs the pass: each system in turn.
     *
     * @return what each system produced, in order
     */
    List<SystemRun> run() {
        Shell shell = new Shell(workDir.resolve("bench.log"));
        // Ctrl-C (or kill) in the middle of a pass must not leave three members running on the machine.
        Thread cleanup = new Thread(() -> {
            Process d = runningDriver;
            if (d != null) {
                d.destroyForcibly();
            }
            SystemUnderTest s = running;
            if (s != null) {
                System.err.println("rota-bench: interrupted; stopping " + s.displayName());
                s.stop(shell);
            }
        }, "rota-bench-cleanup");
        Runtime.getRuntime().addShutdownHook(cleanup);
        List<SystemRun> runs = new ArrayList<>();
        long passStart = System.nanoTime();
        for (SystemUnderTest s : systems) {
            long start = System.nanoTime();
            runs.add(runOne(s, shell));
            out.printf(java.util.Locale.US, "rota-bench: %s took %.0f s%n", s.displayName(),
                    (System.nanoTime() - start) / 1e9);
        }
        out.printf(java.util.Locale.US, "rota-bench: the pass took %.1f minutes%n",
                (System.nanoTime() - passStart) / 60e9);
        Runtime.getRuntime().removeShutdownHook(cleanup);
        return runs;
    }

    /**
     * The report: title, versions, method, the table, and why any system was skipped.
     *
     * @param runs the pass's results
     * @return Markdown
     */
    String report(List<SystemRun> runs) {
        Shell shell = new Shell(workDir.resolve("bench.log"));
        String title = "## Side by side: Rota, etcd, ZooKeeper — " + Instant.now().truncatedTo(ChronoUnit.SECONDS)
                + (plan.quick() ? " (quick pass)" : "") + "\n\n";
        StringBuilder notes = new StringBuilder();
        for (SystemRun r : runs) {
            if (r.skipped() != null) {
                notes.append("\n").append(r.system()).append(" was skipped: ").append(r.skipped()).append('\n');
            }
        }
        return title + Report.header(runs, RotaSystem.commit(shell, root), plan.warmupMs() / 1000.0,
                plan.measureMs() / 1000.0, new double[] {plan.failoverBeforeMs() / 1000.0,
                        plan.failoverAfterMs() / 1000.0}, plan.quick() ? "quick" : "full")
                + "\n" + Report.table(runs) + notes;
    }

    private SystemRun runOne(SystemUnderTest s, Shell shell) {
        String name = s.displayName();
        String missing = s.missing();
        if (missing != null) {
            return skip(name, missing);
        }
        List<Integer> busy = s.busyPorts();
        if (!busy.isEmpty()) {
            return skip(name, "ports " + busy + " are already in use (another " + name + "? stop it, or free the ports)");
        }
        String notice = s.installNotice();
        if (notice != null) {
            out.println("rota-bench: NOTE " + notice);
        }
        out.println("rota-bench: starting " + name + " (three members on 127.0.0.1) ...");
        running = s;
        String endpoints;
        try {
            endpoints = s.start(shell);
        } catch (IOException e) {
            s.stop(shell);
            running = null;
            return skip(name, e.getMessage() + " (log: " + workDir.resolve("bench.log") + ")");
        }
        try {
            String version = s.serverVersion(shell);
            out.println("rota-bench: " + version + " is up at " + endpoints + "; running " + plan.workloads());
            Measurement idle = idleCpu(s);
            SystemRun run = drive(s, shell, endpoints, version);
            if (idle != null && run.skipped() == null) {
                run.results().put(IDLE, idle);
                out.println("rota-bench:   " + name + " idle: " + Report.cell(run, Report.ROWS.get(Report.ROWS.size() - 1)));
            }
            return run;
        } finally {
            out.println("rota-bench: stopping " + name);
            s.stop(shell);
            running = null;
        }
    }

    /** The members' CPU over a few seconds with no client: the background every CPU row includes. */
    private Measurement idleCpu(SystemUnderTest s) {
        try {
            long before = ProcStat.cpuTicks(s.memberPids());
            long start = System.nanoTime();
            TimeUnit.SECONDS.sleep(IDLE_SECONDS);
            long ticks = ProcStat.cpuTicks(s.memberPids()) - before;
            double seconds = (System.nanoTime() - start) / 1e9;
            double microsPerSecond = ticks * 1_000_000.0 / ticksPerSecond / seconds;
            return new Measurement(IDLE, 0, seconds, -1, -1, -1, 0, -1, -1, microsPerSecond);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    private SystemRun skip(String name, String reason) {
        out.println("rota-bench: *** SKIPPING " + name + ": " + reason);
        return SystemRun.skipped(name, reason);
    }

    private SystemRun drive(SystemUnderTest s, Shell shell, String endpoints, String version) {
        Path log = workDir.resolve(s.driverName() + "-driver.log");
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(DRIVER_JVM);
        cmd.addAll(List.of("-cp", s.driverJar().toString(), "io.rota.bench.driver.DriverMain", s.driverName(),
                endpoints, Long.toString(plan.warmupMs()), Long.toString(plan.measureMs()),
                String.join(",", plan.workloads()), Long.toString(plan.failoverBeforeMs()),
                Long.toString(plan.failoverAfterMs())));
        Map<String, Measurement> results = new LinkedHashMap<>();
        Map<String, Long> cpuAtStart = new LinkedHashMap<>();
        Map<String, Long> cpuTicks = new LinkedHashMap<>();
        String library = "?";
        String jdk = "?";
        Process driver;
        try {
            driver = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
            runningDriver = driver;
        } catch (IOException e) {
            return SystemRun.skipped(s.displayName(), "the driver JVM did not start: " + e.getMessage());
        }
        Thread watchdog = new Thread(() -> {
            try {
                if (!driver.waitFor(plan.driverDeadlineMs(), TimeUnit.MILLISECONDS)) {
                    out.println("rota-bench: the " + s.displayName() + " driver passed its deadline; killing it");
                    driver.destroyForcibly();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "driver-watchdog");
        watchdog.setDaemon(true);
        watchdog.start();
        try (BufferedReader lines = new BufferedReader(new InputStreamReader(driver.getInputStream(),
                StandardCharsets.UTF_8))) {
            String line;
            while ((line = lines.readLine()) != null) {
                String kind = Markers.kind(line);
                if (kind == null) {
                    append(log, line);
                    continue;
                }
                Map<String, String> f = Markers.fields(line);
                switch (kind) {
                    case Markers.MEASURE_START -> cpuAtStart.put(f.get("workload"), ProcStat.cpuTicks(s.memberPids()));
                    case Markers.MEASURE_END -> {
                        Long start = cpuAtStart.get(f.get("workload"));
                        if (start != null) {
                            cpuTicks.put(f.get("workload"), ProcStat.cpuTicks(s.memberPids()) - start);
                        }
                    }
                    case Markers.CLIENT -> {
                        library = f.getOrDefault("library", "?").replace('_', ' ');
                        jdk = f.getOrDefault("jdk", "?");
                    }
                    case Markers.KILL_LEADER -> killLeader(s, shell);
                    case Markers.RESULT -> {
                        Measurement m = Measurement.of(f);
                        Long ticks = cpuTicks.get(m.workload());
                        if (ticks != null) {
                            m = m.withCpu(ProcStat.microsPerOp(ticks, ticksPerSecond, m.ops()));
                        }
                        results.put(m.workload(), m);
                        out.println("rota-bench:   " + s.displayName() + " " + summary(m));
                    }
                    default -> append(log, line);
                }
            }
            int exit = driver.waitFor();
            if (exit != 0) {
                out.println("rota-bench: *** the " + s.displayName() + " driver exited with " + exit + "; see " + log);
            }
        } catch (IOException e) {
            out.println("rota-bench: *** reading the " + s.displayName() + " driver failed: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            driver.destroyForcibly();
            runningDriver = null;
        }
        if (results.isEmpty()) {
            return SystemRun.skipped(s.displayName(), "its driver reported nothing; see " + log);
        }
        return new SystemRun(s.displayName(), null, version, library, jdk, results);
    }

    private void killLeader(SystemUnderTest s, Shell shell) {
        try {
            long pid = s.leaderPid(shell);
            boolean sent = ProcessHandle.of(pid).map(ProcessHandle::destroyForcibly).orElse(false);
            out.println("rota-bench:   " + s.displayName() + " leader (pid " + pid + ") "
                    + (sent ? "killed with SIGKILL" : "was already gone"));
        } catch (IOException e) {
            out.println("rota-bench: *** could not find the " + s.displayName() + " leader to kill: " + e.getMessage());
        }
    }

    static String summary(Measurement m) {
        if (m.gapMillis() >= 0) {
            return String.format(java.util.Locale.US, "%s: longest gap %,d ms, %d errors", m.workload(),
                    m.gapMillis(), m.errors());
        }
        return String.format(java.util.Locale.US, "%s: %,.0f/s p50 %s p99 %s p99.9 %s ms%s, %d errors", m.workload(),
                m.opsPerSecond(), Report.millis(m.p50Micros()), Report.millis(m.p99Micros()),
                Report.millis(m.p999Micros()), m.cpuMicrosPerOp() >= 0
                        ? String.format(java.util.Locale.US, ", server CPU %,.0f µs/op", m.cpuMicrosPerOp()) : "",
                m.errors());
    }

    private static void append(Path log, String line) {
        try {
            Files.writeString(log, line + "\n", StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static long clockTicks(Shell shell) {
        try {
            return Long.parseLong(shell.firstLine(Long.toString(ProcStat.DEFAULT_TICKS_PER_SECOND), "getconf", "CLK_TCK"));
        } catch (NumberFormatException e) {
            return ProcStat.DEFAULT_TICKS_PER_SECOND;
        }
    }

    /** Removes a directory tree if it exists (a stopped cluster's data); a failure is reported, not thrown. */
    static void deleteTree(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException | UncheckedIOException e) {
            System.err.println("rota-bench: could not remove " + dir + ": " + e.getMessage() + " (remove it by hand)");
        }
    }
}
