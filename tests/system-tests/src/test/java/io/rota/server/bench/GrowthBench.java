package io.rota.server.bench;

import com.google.protobuf.ByteString;
import io.rota.proto.Frame;
import io.rota.proto.PutRequest;
import io.rota.server.FrameClient;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntConsumer;
import java.util.function.ToLongFunction;

import static io.rota.server.Requests.get;
import static io.rota.server.Requests.grant;
import static io.rota.server.Requests.keepAlive;
import static io.rota.server.Requests.watchPrefix;

/**
 * The memory-and-growth benchmark's load client (run by {@code scripts/growth-bench.sh}, not a test):
 * loads 100,000 keys of 256 B, 10,000 leases (one key on each) and 1,000 watchers, then overwrites keys
 * and keeps every lease alive for N minutes, sampling each member's heap (/metrics) and data directory
 * (du) every 30 s. Heap and disk should stay flat: snapshots bound the log, RocksDB compaction the files.
 *
 * <pre>GrowthBench minutes endpoints http-endpoints data-dirs   (comma-separated, one per member)</pre>
 */
public final class GrowthBench {

    static final int KEYS = 100_000;
    static final int VALUE_BYTES = 256;
    static final int LEASES = 10_000;
    static final int WATCHERS = 1_000;
    /** Keys are grouped by watcher: k/<group>/<n>, so each write is seen by exactly one watcher. */
    static final int KEYS_PER_GROUP = KEYS / WATCHERS;
    static final long LEASE_TTL_S = 60;
    /** Each lease is kept alive this often: a third of its TTL, as etcd's clients do. */
    static final long KEEPALIVE_EVERY_MS = LEASE_TTL_S * 1000 / 3;
    static final int WRITERS = 16;
    static final int KEEPERS = 4;
    /** Overwrites per second during the timed phase: a steady load, not a throughput test. */
    static final int WRITE_RATE = 1_000;
    static final long SAMPLE_EVERY_MS = 30_000;

    private final List<InetSocketAddress> endpoints;
    private final List<String> httpEndpoints;
    private final List<String> dataDirs;
    private final HttpClient http = HttpClient.newHttpClient();
    private final List<FrameClient> clients = new ArrayList<>();
    private final long[] leases = new long[LEASES];
    private final LongAdder writes = new LongAdder();
    private final LongAdder keepAlives = new LongAdder();
    private final LongAdder errors = new LongAdder();
    private final List<Sample> samples = new ArrayList<>();
    private final long startNanos = System.nanoTime();
    private volatile boolean keepingAlive = true;

    record Sample(long seconds, String phase, long[] heapUsed, long[] heapAfterGc, long[] diskBytes, long writes,
                  long keepAlives, long watchEvents, long errors) {
    }

    private GrowthBench(List<InetSocketAddress> endpoints, List<String> httpEndpoints, List<String> dataDirs) {
        this.endpoints = endpoints;
        this.httpEndpoints = httpEndpoints;
        this.dataDirs = dataDirs;
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 4) {
            System.err.println("usage: GrowthBench MINUTES CLIENT_ENDPOINTS HTTP_ENDPOINTS DATA_DIRS (comma-separated)");
            System.exit(2);
        }
        int minutes = Integer.parseInt(args[0]);
        List<InetSocketAddress> endpoints = Arrays.stream(args[1].split(","))
                .map(e -> new InetSocketAddress(e.split(":")[0], Integer.parseInt(e.split(":")[1]))).toList();
        GrowthBench bench = new GrowthBench(endpoints, List.of(args[2].split(",")), List.of(args[3].split(",")));
        System.exit(bench.run(minutes) ? 0 : 1);
    }

    private boolean run(int minutes) throws Exception {
        for (int i = 0; i < WRITERS; i++) {
            clients.add(new FrameClient(endpoints.get(i % endpoints.size())));
        }
        sample("start");
        parallel(KEEPERS, LEASES, i -> leases[i] = ok(client(i).call(grant(LEASE_TTL_S))).getLeaseGrantResponse().getID());
        log("granted %,d leases", LEASES);
        startKeepAlives();
        long watchedFrom = openWatchers();
        log("opened %,d watchers from revision %d", WATCHERS, watchedFrom);
        parallel(WRITERS, KEYS, this::put);
        log("loaded %,d keys of %d B", KEYS, VALUE_BYTES);
        sample("loaded");

        long end = System.nanoTime() + TimeUnit.MINUTES.toNanos(minutes);
        long nextSample = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(SAMPLE_EVERY_MS);
        ExecutorService writers = Executors.newFixedThreadPool(WRITERS);
        for (int w = 0; w < WRITERS; w++) {
            writers.execute(() -> overwriteUntil(end));
        }
        while (System.nanoTime() < end) {
            TimeUnit.NANOSECONDS.sleep(Math.max(0, Math.min(end, nextSample) - System.nanoTime()));
            if (System.nanoTime() >= nextSample) {
                sample("load");
                nextSample += TimeUnit.MILLISECONDS.toNanos(SAMPLE_EVERY_MS);
            }
        }
        writers.shutdown();
        writers.awaitTermination(30, TimeUnit.SECONDS);
        keepingAlive = false;
        sample("end");
        return report();
    }

    /** 1,000 watch streams, spread over the members, each on one key group; their events are only counted. */
    private long openWatchers() {
        List<FrameClient> watchClients = endpoints.stream().map(FrameClient::new).toList();
        clients.addAll(watchClients);
        long revision = ok(clients.get(0).call(get("none"))).getRangeResponse()
                .getHeader().getRevision();
        for (int g = 0; g < WATCHERS; g++) {
            FrameClient c = watchClients.get(g % watchClients.size());
            long call = c.send(watchPrefix(group(g), revision + 1));
            if (!ok(c.next(call)).getWatchResponse().getCreated()) {
                throw new IllegalStateException("watch on " + group(g) + " was not created");
            }
            c.discard(call);
        }
        return revision + 1;
    }

    private void put(int key) {
        PutRequest.Builder put = PutRequest.newBuilder().setKey(ByteString.copyFromUtf8(key(key)))
                .setValue(value());
        if (key < LEASES) {
            put.setLease(leases[key]);   // one key on each lease; an overwrite keeps it there
        }
        ok(client(key).call(Frame.newBuilder().setPutRequest(put)));
        writes.increment();
    }

    private void overwriteUntil(long end) {
        long interval = TimeUnit.SECONDS.toNanos(1) * WRITERS / WRITE_RATE;
        for (long next = System.nanoTime(); next < end; next += interval) {
            long wait = next - System.nanoTime();
            if (wait > 0) {
                sleepNanos(wait);
            }
            try {
                put(ThreadLocalRandom.current().nextInt(KEYS));
            } catch (RuntimeException | AssertionError e) {   // counted: a lost leader must not end the run
                errors.increment();
            }
        }
    }

    /** Every lease once per {@link #KEEPALIVE_EVERY_MS} (or as fast as the cluster answers), until the end. */
    private void startKeepAlives() {
        long interval = TimeUnit.MILLISECONDS.toNanos(KEEPALIVE_EVERY_MS) / LEASES * KEEPERS;
        ExecutorService keepers = Executors.newFixedThreadPool(KEEPERS);
        for (int k = 0; k < KEEPERS; k++) {
            int keeper = k;
            keepers.execute(() -> {
                long next = System.nanoTime();
                for (int i = keeper; keepingAlive; i = (i + KEEPERS) % LEASES, next += interval) {
                    long wait = next - System.nanoTime();
                    if (wait > 0) {
                        sleepNanos(wait);
                    }
                    try {
                        ok(client(i).call(keepAlive(leases[i])));
                        keepAlives.increment();
                    } catch (RuntimeException | AssertionError e) {
                        errors.increment();
                    }
                }
            });
        }
        keepers.shutdown();
    }

    private void sample(String phase) {
        int n = httpEndpoints.size();
        long[] used = new long[n];
        long[] afterGc = new long[n];
        long[] disk = new long[n];
        for (int i = 0; i < n; i++) {
            String metrics = httpGet("http://" + httpEndpoints.get(i) + "/metrics");
            used[i] = metric(metrics, "rota_jvm_heap_used_bytes");
            afterGc[i] = metric(metrics, "rota_jvm_heap_after_gc_bytes");
            disk[i] = du(dataDirs.get(i));
        }
        long events = clients.stream().mapToLong(FrameClient::discardedResponses).sum();
        Sample s = new Sample(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - startNanos), phase, used, afterGc,
                disk, writes.sum(), keepAlives.sum(), events, errors.sum());
        samples.add(s);
        StringBuilder line = new StringBuilder(String.format("t=%4ds %-6s", s.seconds(), phase));
        for (int i = 0; i < n; i++) {
            line.append(String.format("  n%d heap %3d MB (after GC %3d) disk %4d MB", i + 1, mb(used[i]),
                    mb(afterGc[i]), mb(disk[i])));
        }
        log("%s  writes %,d keep-alives %,d watch responses %,d errors %d", line, s.writes(), s.keepAlives(),
                s.watchEvents(), s.errors());
    }

    /**
     * The samples as a Markdown table, then the verdict. Flat means the largest value in the second half
     * of the samples after loading is at most 25% above the largest in the first half, for the heap after
     * GC (heap used saw-tooths between collections) and the data directory (RocksDB grows between
     * compactions), so single samples are not compared.
     */
    private boolean report() {
        int n = httpEndpoints.size();
        StringBuilder out = new StringBuilder("\n| t (s) | phase |");
        for (int i = 1; i <= n; i++) {
            out.append(" n").append(i).append(" heap used / after GC (MB) |");
        }
        for (int i = 1; i <= n; i++) {
            out.append(" n").append(i).append(" data dir (MB) |");
        }
        out.append(" writes | keep-alives | watch responses | errors |\n|---|---|").append("---|".repeat(2 * n + 4))
                .append('\n');
        for (Sample s : samples) {
            out.append("| ").append(s.seconds()).append(" | ").append(s.phase()).append(" |");
            for (int i = 0; i < n; i++) {
                out.append(' ').append(mb(s.heapUsed()[i])).append(" / ").append(mb(s.heapAfterGc()[i])).append(" |");
            }
            for (int i = 0; i < n; i++) {
                out.append(' ').append(mb(s.diskBytes()[i])).append(" |");
            }
            out.append(String.format(" %d | %d | %d | %d |%n", s.writes(), s.keepAlives(), s.watchEvents(), s.errors()));
        }
        List<Sample> timed = samples.stream().filter(s -> !s.phase().equals("start")).toList();
        List<Sample> firstHalf = timed.subList(0, (timed.size() + 1) / 2);
        List<Sample> secondHalf = timed.subList((timed.size() + 1) / 2, timed.size());
        boolean heapFlat = true;
        boolean diskFlat = true;
        for (int i = 0; i < n; i++) {
            int node = i;
            heapFlat &= flat(firstHalf, secondHalf, s -> s.heapAfterGc()[node]);
            diskFlat &= flat(firstHalf, secondHalf, s -> s.diskBytes()[node]);
        }
        out.append(String.format("%nheap after GC %s, disk %s (second half's max within 25%% of the first half's, every member)%n",
                heapFlat ? "FLAT" : "GREW", diskFlat ? "FLAT" : "GREW"));
        System.out.print(out);
        return heapFlat && diskFlat;
    }

    private static boolean flat(List<Sample> first, List<Sample> second, ToLongFunction<Sample> f) {
        long before = first.stream().mapToLong(f).max().orElse(0);
        long after = second.stream().mapToLong(f).max().orElse(0);
        return after <= before * 1.25;
    }

    /** Runs {@code task(i)} for i in [0, count) on {@code threads} threads, failing if any call fails. */
    private static void parallel(int threads, int count, IntConsumer task) throws InterruptedException {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Future<?>> done = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int first = t;
            done.add(pool.submit(() -> {
                for (int i = first; i < count; i += threads) {
                    task.accept(i);
                }
            }));
        }
        pool.shutdown();
        for (Future<?> f : done) {
            try {
                f.get();
            } catch (ExecutionException e) {
                throw new IllegalStateException("load failed: " + e.getCause(), e.getCause());
            }
        }
    }

    private FrameClient client(int i) {
        return clients.get(i % WRITERS);
    }

    private static String key(int i) {
        return group(i / KEYS_PER_GROUP) + i;
    }

    private static String group(int g) {
        return String.format("k/%04d/", g);
    }

    private static ByteString value() {
        byte[] v = new byte[VALUE_BYTES];
        ThreadLocalRandom.current().nextBytes(v);   // random, so neither RocksDB nor a snapshot compresses it away
        return ByteString.copyFrom(v);
    }

    private static Frame ok(Frame f) {
        if (f.hasError()) {
            throw new IllegalStateException(f.getError().getCode() + ": " + f.getError().getMessage());
        }
        return f;
    }

    private String httpGet(String url) {
        try {
            return http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(5)).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
        } catch (IOException e) {
            return "";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "";
        }
    }

    /** A gauge's value from the Prometheus text; -1 if it is missing (a member that did not answer). */
    private static long metric(String text, String name) {
        for (String line : text.split("\n")) {
            if (line.startsWith(name + " ")) {
                return Long.parseLong(line.substring(name.length() + 1).trim());
            }
        }
        return -1;
    }

    /** Bytes under {@code dir}, as {@code du -sb} counts them (the files RocksDB really keeps). */
    private static long du(String dir) {
        try {
            Process p = new ProcessBuilder("du", "-sb", dir).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            p.waitFor(10, TimeUnit.SECONDS);
            return Long.parseLong(out.split("\\s+")[0]);
        } catch (IOException | NumberFormatException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    private static long mb(long bytes) {
        return bytes < 0 ? -1 : bytes / (1024 * 1024);
    }

    private static void sleepNanos(long nanos) {
        try {
            TimeUnit.NANOSECONDS.sleep(nanos);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void log(String format, Object... args) {
        System.out.printf("[%4ds] %s%n", TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - startNanos),
                String.format(format, args));
    }
}
