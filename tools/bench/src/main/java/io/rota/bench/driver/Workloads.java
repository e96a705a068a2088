package io.rota.bench.driver;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntFunction;
import java.util.function.LongFunction;

/**
 * The workloads, the same code for every system. Each runs a warm-up (not measured: JIT, connections,
 * caches), then a measured window bracketed by {@link Markers#MEASURE_START}/{@link Markers#MEASURE_END}
 * (the orchestrator samples the members' CPU there), and prints one {@link Markers#RESULT} line.
 *
 * <p>Only operations that start and finish inside the window count, so the figure is what the system
 * sustains, not what it drains after the window.
 */
public final class Workloads {

    /** Every value written: 256 bytes, as in the published comparison. */
    static final int VALUE_BYTES = 256;
    /** Keys written and read: one per in-flight chain, so no two chains touch the same key at once. */
    static final int KEYS = 256;
    /**
     * The failover writer's deadline per attempt, the same for every system: a write sent to a leader that
     * died may never be answered (a client library may retry it on the dead connection), and a writer with
     * no deadline would measure that library's retry policy rather than the cluster's failover.
     */
    static final long FAILOVER_ATTEMPT_MS = 1_000;
    private static final long FAILOVER_ATTEMPT_NANOS = TimeUnit.MILLISECONDS.toNanos(FAILOVER_ATTEMPT_MS);

    private final Target target;
    private final PrintStream out;
    private final long warmupNanos;
    private final long measureNanos;
    private final byte[] value = new byte[VALUE_BYTES];

    /**
     * @param target    the connected system
     * @param out       where markers go (the driver's standard output)
     * @param warmupMs  warm-up per workload, milliseconds
     * @param measureMs measured window per workload, milliseconds
     */
    public Workloads(Target target, PrintStream out, long warmupMs, long measureMs) {
        this.target = target;
        this.out = out;
        this.warmupNanos = TimeUnit.MILLISECONDS.toNanos(warmupMs);
        this.measureNanos = TimeUnit.MILLISECONDS.toNanos(measureMs);
        new Random(20).nextBytes(value);
    }

    /**
     * Creates the keys the writes and reads use.
     *
     * @throws Exception if the system refuses
     */
    public void prepare() throws Exception {
        target.prepare(KEYS, value);
    }

    /**
     * Closed-loop writes: {@code inFlight} chains, each sending its next write when the last is acknowledged.
     *
     * @param inFlight writes in flight
     * @throws InterruptedException if interrupted
     */
    public void writes(int inFlight) throws InterruptedException {
        closedLoop("write-" + inFlight, inFlight, chain -> target.write(chain % KEYS, value));
    }

    /**
     * Closed-loop reads.
     *
     * @param inFlight     reads in flight
     * @param linearizable the read's consistency (see {@link Target#read})
     * @throws InterruptedException if interrupted
     */
    public void reads(int inFlight, boolean linearizable) throws InterruptedException {
        String name = (linearizable ? "read-lin-" : "read-ser-") + inFlight;
        closedLoop(name, inFlight, chain -> target.read(chain % KEYS, linearizable));
    }

    /** Watches in the watched-write workloads: about four on every key written. */
    static final int WATCHERS = 1_000;
    /** The connections that carry them, as a handful of application processes would. */
    static final int WATCH_CONNECTIONS = 8;

    /**
     * Closed-loop writes while {@value #WATCHERS} watches, over {@value #WATCH_CONNECTIONS} connections of
     * their own, are told of every write to their key: what fanning events out costs the writes. The result
     * adds {@code events} (delivered inside the window, counted by arrival) and {@code events_per_write}
     * (4 when watchers keep up: watch {@code i} is on key {@code i % KEYS}, so the keys below 232, which the
     * chains write, have four each).
     *
     * @param inFlight writes in flight
     * @throws Exception if the watches cannot be opened
     */
    public void watchedWrites(int inFlight) throws Exception {
        LongAdder events = new LongAdder();
        try (AutoCloseable watches = target.watch(WATCHERS, WATCH_CONNECTIONS, events)) {
            long[] atStart = new long[1];
            long[] atEnd = new long[1];
            closedLoop("write-" + inFlight + "-watched", inFlight, chain -> target.write(chain % KEYS, value),
                    () -> atStart[0] = events.sum(), () -> atEnd[0] = events.sum(), ops -> {
                        long delivered = atEnd[0] - atStart[0];
                        return Map.of("events", delivered, "events_per_write", String.format(Locale.ROOT, "%.2f",
                                ops == 0 ? 0.0 : (double) delivered / ops));
                    });
        }
    }

    private void closedLoop(String name, int inFlight, IntFunction<CompletionStage<?>> op)
            throws InterruptedException {
        closedLoop(name, inFlight, op, () -> { }, () -> { }, ops -> Map.of());
    }

    /**
     * @param atStart runs as the measured window opens
     * @param atEnd   runs as it closes
     * @param extra   given the operations counted, the fields to add to the result line
     */
    private void closedLoop(String name, int inFlight, IntFunction<CompletionStage<?>> op, Runnable atStart,
                            Runnable atEnd, LongFunction<Map<String, Object>> extra) throws InterruptedException {
        Window window = new Window();
        Latencies[] perChain = new Latencies[inFlight];
        AtomicLong errors = new AtomicLong();
        AtomicInteger running = new AtomicInteger(inFlight);
        CountDownLatch drained = new CountDownLatch(1);
        for (int c = 0; c < inFlight; c++) {
            perChain[c] = new Latencies();
            new Chain(c, op, window, perChain[c], errors, running, drained).next();
        }
        window.run(name, atStart, atEnd);
        if (!drained.await(30, TimeUnit.SECONDS)) {
            out.println("driver: " + running.get() + " operations of " + name + " still unanswered after 30 s");
        }
        Latencies all = new Latencies();
        for (Latencies l : perChain) {
            all.addAll(l);
        }
        result(name, all, window.seconds(), errors.get(), new TreeMap<>(extra.apply(all.count())));
    }

    /** One closed-loop chain: an operation, and on its completion the next, until the window closes. */
    private static final class Chain {
        private final int id;
        private final IntFunction<CompletionStage<?>> op;
        private final Window window;
        private final Latencies latencies;
        private final AtomicLong errors;
        private final AtomicInteger running;
        private final CountDownLatch drained;

        Chain(int id, IntFunction<CompletionStage<?>> op, Window window, Latencies latencies, AtomicLong errors,
              AtomicInteger running, CountDownLatch drained) {
            this.id = id;
            this.op = op;
            this.window = window;
            this.latencies = latencies;
            this.errors = errors;
            this.running = running;
            this.drained = drained;
        }

        /** Sends operations until one is still pending (an already-completed future loops here, not recursing). */
        void next() {
            while (!window.closed()) {
                long start = System.nanoTime();
                CompletableFuture<?> f;
                try {
                    f = op.apply(id).toCompletableFuture();
                } catch (RuntimeException e) {
                    f = CompletableFuture.failedFuture(e);
                }
                if (!f.isDone()) {
                    f.whenComplete((r, e) -> {
                        done(start, e);
                        next();
                    });
                    return;
                }
                done(start, f.isCompletedExceptionally() ? new RuntimeException("failed") : null);
            }
            if (running.decrementAndGet() == 0) {
                drained.countDown();
            }
        }

        private void done(long start, Throwable error) {
            long end = System.nanoTime();
            if (error != null) {
                if (window.inside(start, end)) {
                    errors.incrementAndGet();
                }
                return;
            }
            if (window.inside(start, end)) {
                latencies.record((end - start) / 1_000);
            }
        }
    }

    /**
     * Lock and unlock in a loop: {@code clients} lock clients (each its own session), client {@code i} on lock
     * {@code i % locks}. One client = the uncontended cycle; 8 on 1 = hand-overs; 64 on 64 = independent
     * locks side by side. Latency is the acquire's; throughput counts completed lock+unlock cycles.
     *
     * @param clients lock clients
     * @param locks   distinct locks
     * @throws Exception if a client cannot be opened
     */
    public void locks(int clients, int locks) throws Exception {
        String name = locks == 1 ? "lock-" + clients + "x1" : "lock-" + clients + "x" + locks;
        List<Target.LockClient> opened = new ArrayList<>();
        ExecutorService threads = Executors.newFixedThreadPool(clients);
        try {
            for (int i = 0; i < clients; i++) {
                opened.add(target.newLockClient());
            }
            Window window = new Window();
            AtomicLong errors = new AtomicLong();
            List<Future<Latencies>> workers = new ArrayList<>();
            String run = Long.toHexString(System.nanoTime());
            for (int i = 0; i < clients; i++) {
                Target.LockClient client = opened.get(i);
                String lock = "bench-" + run + "-" + (i % locks);
                workers.add(threads.submit(() -> {
                    Latencies acquired = new Latencies();
                    while (!window.closed()) {
                        long start = System.nanoTime();
                        try {
                            client.lock(lock);
                            long held = System.nanoTime();
                            client.unlock();
                            if (window.inside(start, System.nanoTime())) {
                                acquired.record((held - start) / 1_000);
                            }
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                            break;
                        } catch (Exception e) {
                            if (window.inside(start, System.nanoTime())) {
                                errors.incrementAndGet();
                            }
                        }
                    }
                    return acquired;
                }));
            }
            window.run(name);
            Latencies all = new Latencies();
            for (Future<Latencies> w : workers) {
                try {
                    all.addAll(w.get(60, TimeUnit.SECONDS));
                } catch (Exception e) {
                    out.println("driver: a lock worker of " + name + " did not finish: " + e);
                    errors.incrementAndGet();
                }
            }
            result(name, all, window.seconds(), errors.get(), Map.of());
        } finally {
            threads.shutdownNow();
            for (Target.LockClient c : opened) {
                try {
                    c.close();
                } catch (RuntimeException e) {
                    out.println("driver: closing a lock client: " + e);
                }
            }
        }
    }

    /**
     * The failover gap: one steady writer (one write in flight, each retried until acknowledged) runs
     * {@code beforeMs}, asks the orchestrator to kill -9 the leader, and runs {@code afterMs} more. The result
     * is the longest time between two consecutive acknowledgements — how long writers stood still.
     *
     * @param beforeMs steady writing before the kill
     * @param afterMs  writing after it (must cover an election: a few seconds)
     * @throws InterruptedException if interrupted
     */
    public void failover(long beforeMs, long afterMs) throws InterruptedException {
        long start = System.nanoTime();
        long killAt = start + TimeUnit.MILLISECONDS.toNanos(beforeMs);
        long end = killAt + TimeUnit.MILLISECONDS.toNanos(afterMs);
        boolean killed = false;
        long lastAck = start;
        long longestGap = 0;
        long acks = 0;
        long acksAfterKill = 0;
        long errors = 0;
        int key = 0;
        while (System.nanoTime() < end) {
            if (!killed && System.nanoTime() >= killAt) {
                out.println(Markers.KILL_LEADER);
                out.flush();
                killed = true;
            }
            long attempt = Math.min(FAILOVER_ATTEMPT_NANOS, end - System.nanoTime() + 1);
            try {
                target.write(key++ % KEYS, value).toCompletableFuture().get(attempt, TimeUnit.NANOSECONDS);
                long now = System.nanoTime();
                longestGap = Math.max(longestGap, now - lastAck);
                lastAck = now;
                acks++;
                if (killed) {
                    acksAfterKill++;
                }
            } catch (InterruptedException e) {
                throw e;
            } catch (TimeoutException e) {
                errors++;
                log(errors, "failover: a write was not answered in " + FAILOVER_ATTEMPT_MS + " ms; sending the next");
            } catch (Exception e) {
                errors++;
                log(errors, "failover: a write failed: " + e);
                // A refused write (no leader yet) returns at once; a short pause keeps the retries from
                // spinning a core that the surviving members need for their election.
                Thread.sleep(5);
            }
        }
        longestGap = Math.max(longestGap, System.nanoTime() - lastAck);
        Map<String, Object> extra = new LinkedHashMap<>();
        extra.put("gap_ms", TimeUnit.NANOSECONDS.toMillis(longestGap));
        extra.put("acks_after_kill", acksAfterKill);
        out.println(Markers.format(Markers.RESULT, fields("failover", acks,
                (System.nanoTime() - start) / 1e9, null, errors, extra)));
        out.flush();
    }

    /** The first errors of a failover go to the driver's log (its non-marker output); later ones are counted. */
    private void log(long errorNumber, String message) {
        if (errorNumber <= 20) {
            out.println("driver: " + message);
        }
    }

    private void result(String name, Latencies l, double seconds, long errors, Map<String, Object> extra) {
        out.println(Markers.format(Markers.RESULT, fields(name, l.count(), seconds, l, errors, extra)));
        out.flush();
    }

    static Map<String, Object> fields(String name, long ops, double seconds, Latencies l, long errors,
                                      Map<String, Object> extra) {
        Map<String, Object> f = new LinkedHashMap<>();
        f.put("workload", name);
        f.put("ops", ops);
        f.put("seconds", String.format(java.util.Locale.ROOT, "%.3f", seconds));
        if (l != null) {
            f.put("p50", l.percentile(50));
            f.put("p99", l.percentile(99));
            f.put("p999", l.percentile(99.9));
        }
        f.put("errors", errors);
        f.putAll(extra);
        return f;
    }

    /** The warm-up and measured window of one workload, driven by the calling thread's clock. */
    private final class Window {
        private volatile long measureStart = Long.MAX_VALUE;
        private volatile long measureEnd = Long.MAX_VALUE;
        private volatile boolean closed;

        /** Warm-up, then the measured window with its markers; closes the window. */
        void run(String name) throws InterruptedException {
            run(name, () -> { }, () -> { });
        }

        /** As {@link #run(String)}, running {@code atStart} as the window opens and {@code atEnd} as it closes. */
        void run(String name, Runnable atStart, Runnable atEnd) throws InterruptedException {
            TimeUnit.NANOSECONDS.sleep(warmupNanos);
            out.println(Markers.format(Markers.MEASURE_START, Map.of("workload", name)));
            out.flush();
            measureStart = System.nanoTime();
            atStart.run();
            TimeUnit.NANOSECONDS.sleep(measureNanos);
            measureEnd = System.nanoTime();
            atEnd.run();
            closed = true;
            out.println(Markers.format(Markers.MEASURE_END, Map.of("workload", name)));
            out.flush();
        }

        boolean inside(long start, long end) {
            return start >= measureStart && end <= measureEnd;
        }

        boolean closed() {
            return closed;
        }

        double seconds() {
            return (measureEnd - measureStart) / 1e9;
        }
    }
}
