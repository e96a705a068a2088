package io.rota.client.cli;

import io.rota.client.GetOptions;
import io.rota.client.RotaClient;
import io.rota.client.RotaException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/** {@code rotactl check perf}: etcdctl's check, a short load test that says whether the cluster keeps up. */
@Command(name = "check", description = "Checks of the cluster: perf (a short write load test).",
        subcommands = CheckCommand.Perf.class)
final class CheckCommand extends CommandGroup {

    CheckCommand() {
        super("name a check: perf");
    }

    /**
     * The loads of etcdctl's {@code check perf}: a write rate, how many writes may be in flight at once, and
     * the thresholds a healthy cluster meets under it.
     *
     * @param writesPerSecond the rate offered
     * @param clients         writes in flight at most (etcdctl's clients)
     */
    enum Load {
        S(150, 50), M(1_000, 200), L(8_000, 500), XL(15_000, 1_000);

        /** Throughput must reach this share of the offered rate. */
        static final double MIN_THROUGHPUT_SHARE = 0.9;
        /** No write may take longer. */
        static final Duration MAX_SLOWEST = Duration.ofMillis(500);
        /** The latencies' standard deviation must stay below. */
        static final Duration MAX_STDDEV = Duration.ofMillis(100);

        final int writesPerSecond;
        final int clients;

        Load(int writesPerSecond, int clients) {
            this.writesPerSecond = writesPerSecond;
            this.clients = clients;
        }
    }

    /** {@code check perf}. */
    @Command(name = "perf", sortOptions = false, description = {
            "Writes 1 KiB values under --prefix at the load's rate for --duration, with progress on stderr, then "
                    + "prints PASS or FAIL for throughput (at least 90% of the rate), the slowest write (under "
                    + "0.5 s) and the latencies' standard deviation (under 0.1 s), as etcdctl check perf does. "
                    + "Deletes its keys at the end.",
            "Loads: s 150 writes/s with 50 in flight, m 1000/200, l 8000/500, xl 15000/1000.",
            "Exit code 1 if a check fails; a cluster that passes handles that load for its size and machines."})
    static final class Perf extends ClientCommand {

        private static final int VALUE_BYTES = 1024;
        private static final Duration PROGRESS_EVERY = Duration.ofSeconds(1);

        @Option(names = "--load", paramLabel = "s|m|l|xl", defaultValue = "s",
                description = "The load (default: ${DEFAULT-VALUE}).")
        Load load;

        @Option(names = "--duration", paramLabel = "DURATION", defaultValue = "60s",
                converter = Conversions.DurationConverter.class,
                description = "How long to write (default: ${DEFAULT-VALUE}, as etcdctl; 10s gives a first idea).")
        Duration duration;

        @Option(names = "--prefix", paramLabel = "PREFIX", defaultValue = "rota-check-perf/",
                description = "Where the test writes; must hold no keys (default: ${DEFAULT-VALUE}).")
        String prefix;

        @Override
        int run(RotaClient client, Printer printer) throws InterruptedException {
            if (prefix.isEmpty()) {
                throw usage("--prefix must not be empty: the test deletes every key under it at the end");
            }
            long existing = client.kv().get(prefix, GetOptions.builder().prefix().countOnly().build()).count();
            if (existing > 0) {
                throw new CommandFailure("the prefix '" + prefix + "' holds " + existing + " keys; the test deletes "
                        + "its prefix at the end, so it needs an empty one: choose another --prefix, or delete them "
                        + "with 'rotactl del " + prefix + " --prefix'");
            }
            root().note(spec, Rotactl.note("start").field("writes_per_second", load.writesPerSecond)
                    .field("in_flight", load.clients).field("duration", Conversions.format(duration))
                    .field("prefix", prefix), "check perf: " + load.writesPerSecond + " writes/s, " + load.clients
                    + " in flight, for " + Conversions.format(duration) + " under " + prefix);
            Result result;
            try {
                result = writeLoad(client);
            } finally {
                client.kv().deletePrefix(prefix);
            }
            printer.checkPerf(checks(result));
            return result.failed() == 0 && checks(result).stream().allMatch(Printer.Check::passed) ? 0 : 1;
        }

        /** What the load test measured: the latency of each write that succeeded, and the failures. */
        private record Result(long[] latenciesNanos, long failed, String firstFailure, Duration elapsed) {
        }

        /** Offers writes at the load's rate, at most {@code clients} in flight, for the duration. */
        private Result writeLoad(RotaClient client) throws InterruptedException {
            byte[] value = new byte[VALUE_BYTES];
            Arrays.fill(value, (byte) 'x');
            Semaphore inFlight = new Semaphore(load.clients);
            ConcurrentLinkedQueue<Long> latencies = new ConcurrentLinkedQueue<>();
            AtomicLong failed = new AtomicLong();
            AtomicReference<String> firstFailure = new AtomicReference<>();
            long intervalNanos = TimeUnit.SECONDS.toNanos(1) / load.writesPerSecond;
            long start = System.nanoTime();
            long end = start + duration.toNanos();
            long nextProgress = start + PROGRESS_EVERY.toNanos();
            for (long i = 0; ; i++) {
                long due = start + i * intervalNanos;
                if (due - end >= 0) {
                    break;
                }
                for (long now = System.nanoTime(); due - now > 0; now = System.nanoTime()) {
                    LockSupport.parkNanos(due - now);
                    if (Thread.interrupted()) {
                        throw new InterruptedException();
                    }
                }
                if (System.nanoTime() - nextProgress >= 0) {
                    nextProgress += PROGRESS_EVERY.toNanos();
                    long elapsed = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start);
                    // Past the duration the loop is still sending writes that were due before its end: a cluster
                    // slower than the rate held them back (at most load.clients in flight).
                    int done = latencies.size();
                    long failures = failed.get();
                    root().note(spec, Rotactl.note("progress").field("elapsed_seconds", elapsed)
                            .field("duration_seconds", duration.toSeconds()).field("done", done)
                            .field("failed", failures), String.format(Locale.ROOT, elapsed <= duration.toSeconds()
                                    ? "check perf: %ds of %ds, %d writes done, %d failed"
                                    : "check perf: %ds, past the %ds: the cluster is behind the rate; %d writes done, %d failed",
                            elapsed, duration.toSeconds(), done, failures));
                }
                inFlight.acquire();   // a cluster slower than the rate holds the load back here
                long sent = System.nanoTime();
                byte[] key = (prefix + i).getBytes(StandardCharsets.UTF_8);
                CompletableFuture<?> put = client.kv().putAsync(key, value, 0);
                put.whenComplete((r, e) -> {
                    if (e == null) {
                        latencies.add(System.nanoTime() - sent);
                    } else {
                        failed.incrementAndGet();
                        Throwable cause = e.getCause() instanceof RotaException ? e.getCause() : e;
                        firstFailure.compareAndSet(null, cause.getMessage());
                    }
                    inFlight.release();
                });
            }
            // The writes still in flight count too (each is bounded by the command timeout).
            if (!inFlight.tryAcquire(load.clients, root().commandTimeout().toMillis() + 1_000, TimeUnit.MILLISECONDS)) {
                throw new CommandFailure("writes still unanswered after the command timeout; is the cluster healthy? "
                        + "('rotactl endpoint health')");
            }
            Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
            return new Result(latencies.stream().mapToLong(Long::longValue).toArray(), failed.get(), firstFailure.get(),
                    elapsed);
        }

        /** The verdicts, etcdctl's three plus one for failed writes. */
        private List<Printer.Check> checks(Result r) {
            List<Printer.Check> checks = new ArrayList<>();
            double seconds = r.elapsed().toNanos() / 1e9;
            double throughput = r.latenciesNanos().length / seconds;
            double wanted = Load.MIN_THROUGHPUT_SHARE * load.writesPerSecond;
            checks.add(new Printer.Check("throughput", throughput >= wanted, String.format(Locale.ROOT,
                    "Throughput is %.0f writes/s (at least %.0f wanted: 90%% of %d)", throughput, wanted,
                    load.writesPerSecond)));
            long slowest = Arrays.stream(r.latenciesNanos()).max().orElse(0);
            checks.add(new Printer.Check("slowest request", slowest < Load.MAX_SLOWEST.toNanos(), String.format(
                    Locale.ROOT, "Slowest request took %.6fs (under %s wanted)", slowest / 1e9,
                    Conversions.format(Load.MAX_SLOWEST))));
            double stddev = stddevNanos(r.latenciesNanos());
            checks.add(new Printer.Check("stddev", stddev < Load.MAX_STDDEV.toNanos(), String.format(Locale.ROOT,
                    "Stddev is %.6fs (under %s wanted)", stddev / 1e9, Conversions.format(Load.MAX_STDDEV))));
            if (r.failed() > 0) {
                checks.add(new Printer.Check("errors", false, r.failed() + " writes failed (the first: "
                        + r.firstFailure() + ")"));
            }
            return checks;
        }

        private static double stddevNanos(long[] values) {
            if (values.length == 0) {
                return 0;
            }
            double mean = Arrays.stream(values).average().orElse(0);
            double sumSquares = 0;
            for (long v : values) {
                sumSquares += (v - mean) * (v - mean);
            }
            return Math.sqrt(sumSquares / values.length);
        }
    }
}
