package io.rota.server.bench;

import io.rota.client.RotaClient;
import io.rota.client.RotaException;
import io.rota.client.recipes.Lock;
import io.rota.client.recipes.LockHandle;
import io.rota.client.recipes.LockLostException;
import io.rota.client.recipes.LockTimeoutException;
import io.rota.testkit.Await;
import io.rota.testkit.ProcessCluster;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The lock microbenchmark (not a test): lock + unlock cycles per second with the recipes' {@link Lock}
 * against a real 3-process cluster on 127.0.0.1 ({@link ProcessCluster}, so every write is fsync'ed as in
 * production). Three workloads: one client on one lock; 8 clients contending on one lock (every cycle is a
 * hand-over); 64 clients on 64 locks. Each runs a warm-up, then a timed phase, and reports cycles/s and the
 * acquire latency's p50/p99. A sanity check runs along: on every lock the fencing tokens handed out grow
 * strictly, in acquisition order (the bench fails if not). Besides the rate it reports what does not depend on
 * how loaded the machine is: Raft entries per cycle, and the members' CPU per cycle next to their idle CPU
 * (from /proc), and the watches the members still hold after the clients stopped (a leak if above 0).
 * {@code -Drota.lockbench.only=1,8,64} picks workloads; {@code -Drota.lockbench.jfr=DIR} records every member
 * with JFR over each timed phase.
 *
 * <p>Run it through {@code LockBenchProcessTest} (opt-in, see its Javadoc), or as a main class with the
 * test classpath: {@code LockBench [seconds per workload] [warm-up seconds]} (defaults 10 and 3). The server
 * jar is {@code -Drota.jar} (default {@code target/rota-server.jar}).
 */
public final class LockBench {

    /** One workload's result. */
    public record Result(String workload, int clients, int locks, long cycles, double seconds, long p50Micros,
                         long p99Micros, double entriesPerCycle, long cpuMicrosPerCycle,
                         double idleCores, long watchesAtEnd) {
        double perSecond() {
            return cycles / seconds;
        }

        /** One row of the Markdown table. */
        String row() {
            return String.format(Locale.ROOT, "| %s | %d | %d | %,.0f | %,d | %,d | %.2f | %,d | %.2f | %,d |",
                    workload, clients, locks, perSecond(), p50Micros, p99Micros, entriesPerCycle, cpuMicrosPerCycle,
                    idleCores, watchesAtEnd);
        }
    }

    private LockBench() {
    }

    /**
     * Starts a 3-member cluster under {@code dir}, runs the three workloads, stops the cluster.
     *
     * @param dir     where the members keep their data
     * @param measure the timed phase of each workload
     * @param warmUp  the warm-up before it (not counted)
     * @return the results, in the order above
     * @throws Exception if the cluster cannot start or a check fails
     */
    public static List<Result> run(Path dir, Duration measure, Duration warmUp) throws Exception {
        List<Result> results = new ArrayList<>();
        try (ProcessCluster cluster = ProcessCluster.prepare(dir, 3, null).fullJit()) {   // a measurement (P13)
            cluster.startAll();
            cluster.awaitLeader();
            String only = System.getProperty("rota.lockbench.only", "1,8,64");
            for (String clients : only.split(",")) {
                switch (clients.trim()) {
                    case "1" -> results.add(workload("1 client, 1 lock", cluster, 1, 1, measure, warmUp));
                    case "8" -> results.add(workload("8 clients, 1 lock", cluster, 8, 1, measure, warmUp));
                    case "64" -> results.add(workload("64 clients, 64 locks", cluster, 64, 64, measure, warmUp));
                    default -> throw new IllegalArgumentException("rota.lockbench.only takes 1, 8 and 64, got " + clients);
                }
            }
        }
        return results;
    }

    /** The results as a Markdown table. */
    public static String table(List<Result> results) {
        StringBuilder b = new StringBuilder("| workload | clients | locks | cycles/s | acquire p50 µs | acquire p99 µs"
                + " | Raft entries/cycle | server CPU µs/cycle | idle server CPU, cores | live watches at the end |\n"
                + "|---|---|---|---|---|---|---|---|---|---|\n");
        results.forEach(r -> b.append(r.row()).append('\n'));
        return b.toString();
    }

    private static Result workload(String name, ProcessCluster cluster, int clients, int locks, Duration measure,
                                   Duration warmUp) throws Exception {
        String endpoints = cluster.endpoints();
        String run = Long.toHexString(System.nanoTime());
        // What the members burn with no client (heartbeats, lease checkpoints, the JIT): on a loaded machine
        // a slow run divides this by few cycles, so it is reported next to the CPU per cycle.
        long idleFrom = cpuTicks(cluster);
        long idleStart = System.nanoTime();
        TimeUnit.SECONDS.sleep(2);
        double idleCores = (cpuTicks(cluster) - idleFrom) / (double) CLOCK_TICKS / ((System.nanoTime() - idleStart) / 1e9);
        List<RotaClient> rotas = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(clients);
        AtomicBoolean counting = new AtomicBoolean();
        AtomicBoolean stop = new AtomicBoolean();
        LongAdder cycles = new LongAdder();
        AtomicLong failures = new AtomicLong();
        Histogram acquireMicros = new Histogram();
        AtomicLong[] lastToken = new AtomicLong[locks];
        for (int i = 0; i < locks; i++) {
            lastToken[i] = new AtomicLong();
        }
        try {
            List<Future<?>> loops = new ArrayList<>();
            for (int c = 0; c < clients; c++) {
                RotaClient rota = RotaClient.connect(endpoints);
                rotas.add(rota);
                int lockIndex = c % locks;
                Lock lock = Lock.of(rota, "bench-" + run + "-" + lockIndex);
                loops.add(pool.submit(() -> {
                    while (!stop.get()) {
                        long start = System.nanoTime();
                        try (LockHandle held = lock.acquire(Duration.ofSeconds(30))) {
                            long took = System.nanoTime() - start;
                            // Tokens grow strictly in acquisition order: checked while the lock is held.
                            long previous = lastToken[lockIndex].getAndSet(held.fencingToken());
                            if (held.fencingToken() <= previous) {
                                throw new IllegalStateException("token " + held.fencingToken() + " after "
                                        + previous + " on " + held.name());
                            }
                            if (counting.get()) {
                                cycles.increment();
                                acquireMicros.add(took / 1_000);
                            }
                        } catch (RotaException | LockTimeoutException | LockLostException e) {
                            // A machine loaded by other jobs times calls out; counted and reported, not fatal.
                            if (failures.getAndIncrement() == 0) {
                                System.err.println("lock bench: a cycle failed (more may follow): " + e);
                            }
                        }
                    }
                    return null;
                }));
            }
            TimeUnit.NANOSECONDS.sleep(warmUp.toNanos());
            Path jfr = profile(cluster, name, true);
            long firstEntry = commitIndex(cluster);
            long firstCpu = cpuTicks(cluster);
            counting.set(true);
            long start = System.nanoTime();
            TimeUnit.NANOSECONDS.sleep(measure.toNanos());
            counting.set(false);
            long lastCpu = cpuTicks(cluster);
            long lastEntry = commitIndex(cluster);
            if (jfr != null) {
                profile(cluster, name, false);
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            long counted = cycles.sum();
            stop.set(true);
            for (Future<?> f : loops) {
                f.get(60, TimeUnit.SECONDS);
            }
            // Every cycle's watches are closed by now: what the members still hold is a leak.
            long watches = metric(cluster, "rota_watches ");
            if (failures.get() > 0) {
                System.err.println("lock bench: " + failures.get() + " cycles failed in " + name);
            }
            return new Result(name, clients, locks, counted, seconds, acquireMicros.percentile(0.50),
                    acquireMicros.percentile(0.99), counted == 0 ? 0 : (double) (lastEntry - firstEntry) / counted,
                    counted == 0 ? 0 : (lastCpu - firstCpu) * 1_000_000L / CLOCK_TICKS / counted, idleCores, watches);
        } finally {
            stop.set(true);
            pool.shutdownNow();
            rotas.forEach(RotaClient::close);
        }
    }

    /** {@code getconf CLK_TCK} on Linux: /proc's utime and stime count in these. */
    private static final long CLOCK_TICKS = 100;

    /**
     * The members' CPU so far, in clock ticks: utime + stime (fields 14 and 15 of /proc/PID/stat, counted
     * after the last ')' since a command name may hold spaces), summed over the three processes.
     */
    private static long cpuTicks(ProcessCluster cluster) throws java.io.IOException {
        long ticks = 0;
        for (int i = 0; i < cluster.size(); i++) {
            String stat = Files.readString(Path.of("/proc", Long.toString(cluster.pid(i)), "stat"));
            String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            ticks += Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
        }
        return ticks;
    }

    /**
     * With {@code -Drota.lockbench.jfr=DIR}: a JFR recording of every member over the timed phase
     * ({@code jcmd PID JFR.start} / {@code JFR.stop}), written to DIR/&lt;workload&gt;-&lt;member&gt;.jfr; read
     * it with {@code jfr print --events jdk.ExecutionSample} or JDK Mission Control. Returns DIR, or null.
     */
    private static Path profile(ProcessCluster cluster, String workload, boolean start) throws Exception {
        String dir = System.getProperty("rota.lockbench.jfr");
        if (dir == null || dir.isBlank()) {
            return null;
        }
        Path out = Files.createDirectories(Path.of(dir));
        String jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd").toString();
        String tag = workload.replaceAll("[^A-Za-z0-9]+", "-");
        for (int i = 0; i < cluster.size(); i++) {
            String pid = Long.toString(cluster.pid(i));
            List<String> cmd = start
                    ? List.of(jcmd, pid, "JFR.start", "name=lockbench", "settings=profile",
                            "filename=" + out.resolve(tag + "-" + ProcessCluster.name(i) + ".jfr").toAbsolutePath())
                    : List.of(jcmd, pid, "JFR.stop", "name=lockbench");
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String said = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", cmd) + " failed: " + said);
            }
        }
        return out;
    }

    /**
     * The leader's commit index from /metrics: every Raft write (grants, revokes, puts, txns, lease
     * checkpoints) is one entry, so its growth per cycle counts the writes a lock cycle costs.
     */
    private static long commitIndex(ProcessCluster cluster) {
        return gauge(cluster, cluster.awaitLeader(), "rota_raft_commit_index ");
    }

    /** A gauge from /metrics, summed over the members. */
    private static long metric(ProcessCluster cluster, String name) {
        long sum = 0;
        for (int i = 0; i < cluster.size(); i++) {
            sum += gauge(cluster, i, name);
        }
        return sum;
    }

    /** A gauge from one member's /metrics; asked again (for up to 10 s) when a loaded member does not answer. */
    private static long gauge(ProcessCluster cluster, int member, String name) {
        long[] value = new long[1];
        Await.until(Duration.ofSeconds(10), () -> {
            ProcessCluster.Reply reply = cluster.httpGet(member, "/metrics");
            for (String line : reply.status() == 200 ? reply.body().split("\n") : new String[0]) {
                if (line.startsWith(name)) {
                    value[0] = (long) Double.parseDouble(line.substring(line.indexOf(' ') + 1).trim());
                    return true;
                }
            }
            return false;
        }, name.trim() + " in /metrics of " + ProcessCluster.name(member));
        return value[0];
    }

    /** Microsecond latencies in buckets of 10 µs up to 10 s (a loaded machine's cycles reach 100s of ms). */
    private static final class Histogram {
        private final long[] buckets = new long[1_000_001];
        private long count;

        synchronized void add(long micros) {
            buckets[(int) Math.min(buckets.length - 1, Math.max(0, micros / 10))]++;
            count++;
        }

        synchronized long percentile(double p) {
            long rank = (long) Math.ceil(p * count);
            long seen = 0;
            for (int i = 0; i < buckets.length; i++) {
                seen += buckets[i];
                if (seen >= rank && seen > 0) {
                    return i * 10L + 10;
                }
            }
            return 0;
        }
    }

    /**
     * Runs the bench and prints the table.
     *
     * @param args [seconds per workload] [warm-up seconds]
     * @throws Exception on failure
     */
    public static void main(String[] args) throws Exception {
        Duration measure = Duration.ofSeconds(args.length > 0 ? Long.parseLong(args[0]) : 10);
        Duration warmUp = Duration.ofSeconds(args.length > 1 ? Long.parseLong(args[1]) : 3);
        Path dir = Files.createTempDirectory("rota-lockbench");
        System.out.println(table(run(dir, measure, warmUp)));
        System.out.println("data under " + dir + " (delete it when done)");
    }
}
