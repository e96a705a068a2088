package io.rota.server.bench;

import io.rota.client.RotaClient;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The single-client write path, end to end (not a test): the Rota SDK's {@code put} of 256-byte values
 * against a running cluster of server processes, closed loop at N calls in flight, and the servers' CPU
 * per write read from {@code /proc} (utime + stime of each member's process, summed over the members,
 * divided by the writes) — a figure that moves less with a noisy neighbour than the rate does.
 *
 * <pre>WriteBench endpoints pids in-flight seconds [--threads] [--http host:port,...]</pre>
 *
 * {@code pids} is comma-separated (every member's process id). With ROTA_CACERT (and ROTA_CERT, ROTA_KEY) set,
 * as for rotactl, it talks TLS. With {@code --threads} it also prints
 * where each member's CPU went, per thread name (the driver, the Netty loops, RocksDB, GC, the JIT): the
 * quickest profile there is, and the one that says which hand-off costs what. With {@code --http} (every
 * member's HTTP address) it also prints the Raft messages the members sent each other per write
 * ({@code rota_peer_sent_total} from /metrics), a count no noisy neighbour can move.
 */
public final class WriteBench {

    private static final int VALUE_BYTES = 256;
    /** Clock ticks per second of /proc's utime and stime (USER_HZ; 100 on Linux). */
    private static final double USER_HZ = 100;
    /** Seconds of load before the measurement ({@code -Dbench.warmup=}): a fresh server compiles for a while. */
    private static final double WARMUP_SECONDS = Double.parseDouble(System.getProperty("bench.warmup", "8"));

    private WriteBench() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 4) {
            System.err.println("usage: WriteBench endpoints pids in-flight seconds [--threads]");
            System.exit(2);
        }
        String endpoints = args[0];
        long[] pids = Arrays.stream(args[1].split(",")).mapToLong(Long::parseLong).toArray();
        int inFlight = Integer.parseInt(args[2]);
        double seconds = Double.parseDouble(args[3]);
        List<String> options = Arrays.asList(args).subList(4, args.length);
        boolean threads = options.contains("--threads");
        int http = options.indexOf("--http");
        List<String> metrics = http < 0 ? List.of() : Arrays.asList(options.get(http + 1).split(","));
        try (RotaClient client = RotaClient.builder().endpoints(endpoints).tls(tlsFromEnvironment()).build()) {
            // Warm-up: connections, the leader found, and the servers' JIT (C2 compiles for seconds after a start).
            run(client, Math.max(inFlight, 16), WARMUP_SECONDS);
            Map<String, Long> before = threads ? threadTicks(pids) : Map.of();
            long cpuBefore = processTicks(pids);
            long sentBefore = peerMessagesSent(metrics);
            long start = System.nanoTime();
            long[] latencies = run(client, inFlight, seconds);
            double elapsed = (System.nanoTime() - start) / 1e9;
            long cpuTicks = processTicks(pids) - cpuBefore;
            long sent = peerMessagesSent(metrics) - sentBefore;
            Arrays.sort(latencies);
            int n = latencies.length;
            System.out.printf("| %d | %,.0f | %.2f ms | %.2f ms | %.2f ms | %,.0f µs |%n", inFlight, n / elapsed,
                    pct(latencies, 0.50), pct(latencies, 0.99), pct(latencies, 0.999),
                    cpuTicks / USER_HZ * 1e6 / n);
            if (!metrics.isEmpty()) {
                System.out.printf("    peer messages per write: %.2f%n", (double) sent / n);
            }
            if (threads) {
                Map<String, Long> after = threadTicks(pids);
                after.forEach((name, ticks) -> {
                    long used = ticks - before.getOrDefault(name, 0L);
                    if (used > 0) {
                        System.out.printf("    %-40s %,8.0f µs/write%n", name, used / USER_HZ * 1e6 / n);
                    }
                });
            }
        }
    }

    /**
     * TLS as rotactl reads it: ROTA_CACERT (and ROTA_CERT, ROTA_KEY for a cluster that requires client
     * certificates); null for plaintext.
     */
    private static io.rota.client.TlsOptions tlsFromEnvironment() {
        String ca = System.getenv("ROTA_CACERT");
        if (ca == null || ca.isBlank()) {
            return null;
        }
        io.rota.client.TlsOptions.Builder b = io.rota.client.TlsOptions.builder().trustedCaFile(java.nio.file.Path.of(ca));
        String cert = System.getenv("ROTA_CERT");
        if (cert != null && !cert.isBlank()) {
            b.clientCertificate(java.nio.file.Path.of(cert), java.nio.file.Path.of(System.getenv("ROTA_KEY")));
        }
        return b.build();
    }

    private static double pct(long[] sorted, double q) {
        return sorted[Math.min(sorted.length - 1, (int) (sorted.length * q))] / 1e6;
    }

    /** Closed loop: each of {@code inFlight} callers writes again as soon as its previous write returns. */
    private static long[] run(RotaClient client, int inFlight, double seconds) throws InterruptedException {
        byte[] value = new byte[VALUE_BYTES];
        long[][] perCaller = new long[inFlight][];
        AtomicBoolean running = new AtomicBoolean(true);
        Thread[] callers = new Thread[inFlight];
        AtomicInteger failures = new AtomicInteger();
        for (int c = 0; c < inFlight; c++) {
            int caller = c;
            callers[c] = new Thread(() -> {
                long[] lat = new long[1 << 16];
                int count = 0;
                byte[] key = ("bench/" + caller).getBytes(StandardCharsets.UTF_8);
                while (running.get()) {
                    long t0 = System.nanoTime();
                    try {
                        CompletableFuture<?> f = client.kv().putAsync(key, value, 0);
                        f.join();
                    } catch (RuntimeException e) {
                        failures.incrementAndGet();
                        continue;
                    }
                    if (count == lat.length) {
                        lat = Arrays.copyOf(lat, lat.length * 2);
                    }
                    lat[count++] = System.nanoTime() - t0;
                }
                perCaller[caller] = Arrays.copyOf(lat, count);
            }, "bench-caller-" + c);
            callers[c].start();
        }
        Thread.sleep((long) (seconds * 1000)); // the measurement window, in a benchmark main, not a test
        running.set(false);
        for (Thread t : callers) {
            t.join();
        }
        if (failures.get() > 0) {
            System.err.println(failures.get() + " writes failed during the run");
        }
        return Arrays.stream(perCaller).flatMapToLong(Arrays::stream).toArray();
    }

    /** The sum of every member's {@code rota_peer_sent_total} (all peers), from its /metrics. */
    private static long peerMessagesSent(List<String> httpAddresses) throws IOException, InterruptedException {
        long sum = 0;
        HttpClient http = HttpClient.newHttpClient();
        for (String address : httpAddresses) {
            String body = http.send(HttpRequest.newBuilder(URI.create("http://" + address + "/metrics")).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
            for (String line : body.split("\n")) {
                if (line.startsWith("rota_peer_sent_total{")) {
                    sum += (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
                }
            }
        }
        return sum;
    }

    private static long processTicks(long[] pids) throws IOException {
        long sum = 0;
        for (long pid : pids) {
            sum += ticks(Path.of("/proc", Long.toString(pid), "stat"));
        }
        return sum;
    }

    /** CPU ticks per thread name, summed over the members (threads are named per node: the id is cut off). */
    private static Map<String, Long> threadTicks(long[] pids) throws IOException {
        Map<String, Long> byName = new TreeMap<>();
        for (long pid : pids) {
            try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc", Long.toString(pid), "task"))) {
                for (Path task : tasks) {
                    String name;
                    long t;
                    try {
                        name = Files.readString(task.resolve("comm")).trim().replaceAll("[-#]?\\d+$", "");
                        t = ticks(task.resolve("stat"));
                    } catch (IOException gone) {
                        continue; // the thread ended meanwhile
                    }
                    byName.merge(name, t, Long::sum);
                }
            }
        }
        return byName;
    }

    /** utime + stime from a /proc stat line (fields 14 and 15; the name in parentheses may hold spaces). */
    private static long ticks(Path stat) throws IOException {
        String line = Files.readString(stat);
        String[] f = line.substring(line.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(f[11]) + Long.parseLong(f[12]);
    }
}
