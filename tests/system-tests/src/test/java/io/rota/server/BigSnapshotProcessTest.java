package io.rota.server;

import io.rota.client.AddedMember;
import io.rota.client.RotaClient;
import io.rota.client.RotaException;
import io.rota.testkit.Await;
import io.rota.testkit.ProcessCluster;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The proof that a big state catches up without stalling the cluster (opt-in: minutes and GiBs of disk,
 * never in the default suite). Three members with a stated heap load {@code rota.bigsnap.bytes} of values of
 * 1 KiB–64 KiB; then a new member is added (as a learner, as the runbook replaces a member whose disk died)
 * and catches up by an InstallSnapshot streamed from disk to disk while a writer keeps writing. It asserts
 * no leader change (the term is unchanged) and that writes kept succeeding, and prints the catch-up time,
 * the write p50/p99 during the transfer and each member's peak RSS.
 *
 * <pre>
 *   ./mvnw -B -o verify -pl tests/system-tests -am -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false \
 *       -Dfailsafe.failIfNoSpecifiedTests=false -Dit.test=BigSnapshotProcessTest -Drota.bigsnap=true \
 *       -Drota.bigsnap.bytes=2147483648 -Drota.process.xmx=6g -Drota.test.timeout="2 h"
 * </pre>
 *
 * "Caught up" is the leader's view: the new member acknowledged the installed snapshot (its file written,
 * forced and recorded) and is within the catch-up window; its restore into memory follows.
 */
@Tag("process")
class BigSnapshotProcessTest {

    private static final Duration TIMEOUT = Duration.ofMinutes(30);
    private static final long BYTES = Long.getLong("rota.bigsnap.bytes", 2L << 30);
    private static final String[] FLAGS = {"--heartbeat-ms", "100", "--election-ms", "1000",
            "--snapshot-count", "2000", "--quota-backend-bytes",
            // Room for the values and their history, within the server's 8 GiB maximum (MaintenanceConfig).
            Long.toString(Math.min(4 * BYTES + (1L << 30), MaintenanceConfig.MAX_QUOTA_BACKEND_BYTES))};

    @TempDir
    Path dir;
    private ProcessCluster cluster;

    @AfterEach
    void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void aNewMemberCatchesUpByASnapshotOfGibibytesWithoutALeaderChange() throws Exception {
        assumeTrue(Boolean.getBoolean("rota.bigsnap"), "the big-snapshot proof is opt-in: -Drota.bigsnap=true "
                + "(and -Drota.bigsnap.bytes, -Drota.process.xmx; see the class comment)");
        assumeTrue(Files.isRegularFile(ProcessCluster.jar()), "needs the packaged jar: run ./mvnw -B verify");
        System.out.printf("big snapshot: %,d bytes of values, -Xmx%s per member, data in %s (%,d bytes free)%n",
                BYTES, System.getProperty("rota.process.xmx", "256m"), dir, Files.getFileStore(dir).getUsableSpace());
        cluster = ProcessCluster.prepare(dir, 3, null, FLAGS).fullJit();   // a measurement: the full JIT (P13)
        cluster.startAll();
        int leader = cluster.awaitLeader();
        try (RotaClient rota = RotaClient.builder().endpoints(cluster.endpoints())
                .callTimeout(Duration.ofSeconds(30)).build()) {
            long loadStart = System.nanoTime();
            long loaded = load(rota);
            System.out.printf("loaded %,d bytes in %.1f s%n", loaded, (System.nanoTime() - loadStart) / 1e9);
            long termBefore = term(leader);

            int fresh = cluster.addMember();
            List<Long> latencies = Collections.synchronizedList(new ArrayList<>());
            AtomicLong failures = new AtomicLong();
            AtomicBoolean writing = new AtomicBoolean(true);
            Thread writer = new Thread(() -> {
                byte[] value = new byte[1024];
                for (int i = 0; writing.get(); i++) {
                    long t0 = System.nanoTime();
                    try {
                        rota.kv().put(("during/" + i).getBytes(StandardCharsets.UTF_8), value);
                        latencies.add(System.nanoTime() - t0);
                    } catch (RotaException e) {
                        failures.incrementAndGet();
                    }
                }
            }, "bigsnap-writer");
            writer.start();
            long catchUpStart = System.nanoTime();
            AddedMember added = rota.cluster().addMember(ProcessCluster.name(fresh), "127.0.0.1:"
                    + cluster.peerPort(fresh), "", true);
            cluster.startMember(fresh, added.initialCluster(), "--initial-cluster-state", "existing",
                    "--cluster-id", added.clusterId());
            Await.until(TIMEOUT, () -> rota.cluster().memberList().stream()
                    .anyMatch(m -> m.id() == added.id() && m.caughtUp()), "the new member caught up");
            double catchUpSeconds = (System.nanoTime() - catchUpStart) / 1e9;
            writing.set(false);
            writer.join(60_000);

            long termAfter = term(cluster.leader());
            List<Long> sorted = new ArrayList<>(latencies);
            Collections.sort(sorted);
            System.out.printf("catch-up %.1f s; %d writes during it (%d failed), p50 %.1f ms, p99 %.1f ms, max %.1f ms;"
                            + " term %d -> %d%n", catchUpSeconds, sorted.size(), failures.get(), pct(sorted, 0.50),
                    pct(sorted, 0.99), sorted.isEmpty() ? 0 : sorted.get(sorted.size() - 1) / 1e6, termBefore, termAfter);
            for (int i = 0; i < cluster.size(); i++) {
                System.out.printf("%s: peak RSS %s%n", ProcessCluster.name(i), peakRss(cluster.pid(i)));
            }
            assertEquals(termBefore, termAfter, "a leader change during the transfer");
            assertTrue(sorted.size() > 0, "no write succeeded while the new member caught up");
        }
    }

    /** Writes random-sized values (1 KiB–64 KiB) until {@link #BYTES}, 32 in flight. */
    private static long load(RotaClient rota) throws Exception {
        Random random = new Random(18);
        byte[] pool = new byte[64 << 10];
        random.nextBytes(pool);
        Semaphore inFlight = new Semaphore(32);
        AtomicLong failed = new AtomicLong();
        long bytes = 0;
        for (int i = 0; bytes < BYTES; i++) {
            int size = (1 << 10) + random.nextInt(63 << 10);
            byte[] value = java.util.Arrays.copyOf(pool, size);
            inFlight.acquire();
            CompletableFuture<?> f = rota.kv().putAsync(String.format("big/%09d", i).getBytes(StandardCharsets.UTF_8),
                    value, 0);
            f.whenComplete((r, e) -> {
                if (e != null) {
                    failed.incrementAndGet();
                }
                inFlight.release();
            });
            bytes += size;
        }
        inFlight.acquire(32);
        assertEquals(0, failed.get(), "writes failed while loading");
        return bytes;
    }

    private long term(int i) {
        Matcher m = Pattern.compile("\"term\":(\\d+)").matcher(cluster.httpGet(i, "/status").body());
        assertTrue(m.find(), "no term in /status");
        return Long.parseLong(m.group(1));
    }

    private static double pct(List<Long> sorted, double p) {
        return sorted.isEmpty() ? 0 : sorted.get((int) Math.min(sorted.size() - 1, Math.floor(p * sorted.size()))) / 1e6;
    }

    private static String peakRss(long pid) {
        try {
            return Files.readAllLines(Path.of("/proc/" + pid + "/status")).stream()
                    .filter(l -> l.startsWith("VmHWM")).findFirst().orElse("unknown").replaceAll("\\s+", " ");
        } catch (java.io.IOException e) {
            return "unknown (" + e.getMessage() + ")";
        }
    }
}
