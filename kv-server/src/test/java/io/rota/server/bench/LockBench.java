package io.rota.server.bench;

import io.rota.client.RotaClient;
import io.rota.client.recipes.Lock;
import io.rota.client.recipes.LockHandle;
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
 * strictly, in acquisition order (the bench fails if not).
 *
 * <p>Run it through {@code LockBenchProcessTest} (opt-in, see its Javadoc), or as a main class with the
 * test classpath: {@code LockBench [seconds per workload] [warm-up seconds]} (defaults 10 and 3). The server
 * jar is {@code -Drota.jar} (default {@code target/rota-server.jar}).
 */
public final class LockBench {

    /** One workload's result. */
    public record Result(String workload, int clients, int locks, long cycles, double seconds, long p50Micros,
                         long p99Micros, double entriesPerCycle) {
        double perSecond() {
            return cycles / seconds;
        }

        /** One row of the Markdown table. */
        String row() {
            return String.format(Locale.ROOT, "| %s | %d | %d | %,.0f | %,d | %,d | %.2f |", workload, clients,
                    locks, perSecond(), p50Micros, p99Micros, entriesPerCycle);
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
        try (ProcessCluster cluster = ProcessCluster.start(dir, 3)) {
            cluster.awaitLeader();
            results.add(workload("1 client, 1 lock", cluster, 1, 1, measure, warmUp));
            results.add(workload("8 clients, 1 lock", cluster, 8, 1, measure, warmUp));
            results.add(workload("64 clients, 64 locks", cluster, 64, 64, measure, warmUp));
        }
        return results;
    }

    /** The results as a Markdown table. */
    public static String table(List<Result> results) {
        StringBuilder b = new StringBuilder("| workload | clients | locks | cycles/s | acquire p50 µs | acquire p99 µs"
                + " | Raft entries/cycle |\n|---|---|---|---|---|---|---|\n");
        results.forEach(r -> b.append(r.row()).append('\n'));
        return b.toString();
    }

    private static Result workload(String name, ProcessCluster cluster, int clients, int locks, Duration measure,
                                   Duration warmUp) throws Exception {
        String endpoints = cluster.endpoints();
        String run = Long.toHexString(System.nanoTime());
        List<RotaClient> rotas = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(clients);
        AtomicBoolean counting = new AtomicBoolean();
        AtomicBoolean stop = new AtomicBoolean();
        LongAdder cycles = new LongAdder();
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
                        }
                    }
                    return null;
                }));
            }
            TimeUnit.NANOSECONDS.sleep(warmUp.toNanos());
            long firstEntry = commitIndex(cluster);
            counting.set(true);
            long start = System.nanoTime();
            TimeUnit.NANOSECONDS.sleep(measure.toNanos());
            counting.set(false);
            long lastEntry = commitIndex(cluster);
            double seconds = (System.nanoTime() - start) / 1e9;
            long counted = cycles.sum();
            stop.set(true);
            for (Future<?> f : loops) {
                f.get(60, TimeUnit.SECONDS);
            }
            return new Result(name, clients, locks, counted, seconds, acquireMicros.percentile(0.50),
                    acquireMicros.percentile(0.99), counted == 0 ? 0 : (double) (lastEntry - firstEntry) / counted);
        } finally {
            stop.set(true);
            pool.shutdownNow();
            rotas.forEach(RotaClient::close);
        }
    }

    /**
     * The leader's commit index from /metrics: every Raft write (grants, revokes, puts, txns, lease
     * checkpoints) is one entry, so its growth per cycle counts the writes a lock cycle costs.
     */
    private static long commitIndex(ProcessCluster cluster) {
        String body = cluster.httpGet(cluster.awaitLeader(), "/metrics").body();
        for (String line : body.split("\n")) {
            if (line.startsWith("rota_raft_commit_index ")) {
                return (long) Double.parseDouble(line.substring(line.indexOf(' ') + 1).trim());
            }
        }
        throw new IllegalStateException("no rota_raft_commit_index in /metrics");
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
