package io.rota.server;

import com.google.protobuf.ByteString;
import io.rota.client.GetResult;
import io.rota.client.KeyValue;
import io.rota.client.RotaClient;
import io.rota.client.RotaException;
import io.rota.client.Watch;
import io.rota.client.WatchEvent;
import io.rota.client.WatchListener;
import io.rota.proto.Frame;
import io.rota.proto.RangeRequest;
import io.rota.testkit.Await;
import io.rota.testkit.ProcessCluster;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Crash consistency under kill -9: SDK writers put unique keys through the whole run while members are
 * killed with SIGKILL at random moments (the leader most of the time, sometimes a follower, sometimes two
 * members in turn; never two at once, so a majority always comes back) and restarted on their data
 * directories. A watcher from revision 1 runs through all of it.
 *
 * <p>Checked: every acknowledged write is present with its value (linearizable reads) and at the revision
 * its acknowledgement named; each writer's revisions strictly increase; the watch (from revision 1, the
 * empty initial store) delivers revisions 2, 3, 4, … with no gap and no repeat, and every acknowledged
 * write among them; once the writes stop, every member (read serializably, from its own state) holds
 * exactly the same keys, values and revisions.
 *
 * <p>System properties: {@code crash.restarts} (default 3; the full run is 100), {@code crash.seed} (replays
 * the choice of victims and moments), {@code crash.writers} (default 3).
 */
@Tag("process")
class CrashConsistencyProcessTest {

    private static final int RESTARTS = Integer.getInteger("crash.restarts", 3);
    private static final long SEED = Long.getLong("crash.seed", System.nanoTime());
    private static final int WRITERS = Integer.getInteger("crash.writers", 3);
    private static final int MEMBERS = 3;
    private static final String PREFIX = "crash/";
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    /** An acknowledged write: the revision its response named. */
    private record Ack(String key, String value, long revision) {
    }

    private final Map<String, Ack> acked = new ConcurrentHashMap<>();
    private final AtomicLong ackCount = new AtomicLong();
    private final AtomicLong ambiguous = new AtomicLong();
    private final AtomicBoolean stop = new AtomicBoolean();

    @Test
    void acknowledgedWritesSurviveRepeatedKillMinus9AndTheWatchSeesEveryRevisionOnce() throws Exception {
        System.out.printf("CrashConsistencyProcessTest: seed %d (replay with -Dcrash.seed=%d), %d restarts, %d writers%n",
                SEED, SEED, RESTARTS, WRITERS);
        Random random = new Random(SEED);
        long start = System.nanoTime();
        try (ProcessCluster cluster = ProcessCluster.start(dir, MEMBERS, "--heartbeat-ms", "50", "--election-ms", "500");
             RotaClient watching = client(cluster)) {
            WatchLog watchLog = new WatchLog();
            ExecutorService writers = Executors.newFixedThreadPool(WRITERS);
            int restarts = 0;
            try (Watch watch = watching.watches().watchPrefix(PREFIX, 1, watchLog)) {
                List<Future<?>> running = new ArrayList<>();
                for (int w = 0; w < WRITERS; w++) {
                    int writer = w;
                    running.add(writers.submit(() -> write(cluster, writer)));
                }
                while (restarts < RESTARTS) {
                    restarts += crashOnce(cluster, random, running);
                    System.out.printf("CrashConsistencyProcessTest: %d restarts, %,d writes acknowledged after %d s%n",
                            restarts, ackCount.get(), TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start));
                }
                stop.set(true);
                for (Future<?> f : running) {
                    f.get(2, TimeUnit.MINUTES);
                }
                long last = acked.values().stream().mapToLong(Ack::revision).max().orElse(0);
                Await.until(TIMEOUT, () -> watchLog.last() >= last || watchLog.failed(),
                        "the watch reaches revision " + last + " (seed " + SEED + ")");
                assertEquals(List.of(), watchLog.problems(), "the watch (seed " + SEED + ")");
                assertTrue(watch.isActive(), "the watch is still running after every restart");
                long missing = acked.values().stream().filter(a -> !a.key().equals(watchLog.keyAt(a.revision()))).count();
                assertEquals(0, missing, "acknowledged writes the watch did not deliver (seed " + SEED + ")");
            } finally {
                stop.set(true);
                writers.shutdownNow();
                writers.awaitTermination(1, TimeUnit.MINUTES);
            }
            long lost = countLost(watching);
            assertEquals(0, lost, "acknowledged writes lost (seed " + SEED + ")");
            Map<String, String> image = membersAgree(cluster);
            long keys = image.keySet().stream().filter(k -> k.startsWith(PREFIX)).count();
            assertTrue(keys >= acked.size(), "members hold " + keys + " keys, fewer than acknowledged");
            System.out.printf("CrashConsistencyProcessTest: seed %d, %d restarts, %,d writes acknowledged, %,d ambiguous "
                            + "(timed out, may or may not be applied), lost 0, watch: %,d events, 0 gaps, 0 repeats, "
                            + "%,d keys on each member, %d s%n", SEED, restarts, ackCount.get(), ambiguous.get(),
                    watchLog.events(), keys, TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start));
        }
    }

    private static RotaClient client(ProcessCluster cluster) {
        return RotaClient.builder().endpoints(cluster.endpoints()).callTimeout(TIMEOUT).build();
    }

    /** One writer: unique keys, each acknowledged write recorded; its revisions must strictly increase. */
    private void write(ProcessCluster cluster, int writer) {
        try (RotaClient rota = client(cluster)) {
            long previous = 0;
            for (long n = 0; !stop.get(); n++) {
                String key = PREFIX + "w" + writer + "/" + n;
                String value = "v" + writer + "-" + n;
                long revision;
                try {
                    revision = rota.kv().put(key, value).revision();
                } catch (RotaException e) {
                    ambiguous.incrementAndGet();   // not acknowledged: it may or may not be applied
                    continue;
                }
                assertTrue(revision > previous, key + ": revision " + revision + " after " + previous
                        + " on the same client (seed " + SEED + ")");
                previous = revision;
                acked.put(key, new Ack(key, value, revision));
                ackCount.incrementAndGet();
            }
        }
    }

    /**
     * Waits a random number of acknowledged writes, then kills a member (or two in turn) with SIGKILL,
     * restarts it and waits until it is healthy and the cluster takes writes again.
     *
     * @return the number of restarts done
     */
    private int crashOnce(ProcessCluster cluster, Random random, List<Future<?>> writers) {
        awaitWrites(5 + random.nextInt(60), writers);
        int roll = random.nextInt(10);
        int first = roll < 7 ? cluster.awaitLeader() : (cluster.awaitLeader() + 1 + random.nextInt(MEMBERS - 1)) % MEMBERS;
        restart(cluster, first, writers);
        if (roll < 9) {
            return 1;
        }
        int second = (first + 1 + random.nextInt(MEMBERS - 1)) % MEMBERS;
        awaitWrites(random.nextInt(30), writers);
        restart(cluster, second, writers);
        return 2;
    }

    private void restart(ProcessCluster cluster, int member, List<Future<?>> writers) {
        cluster.kill(member);
        awaitWrites(10, writers);   // the survivors, a majority, keep taking writes
        cluster.startMember(member);
        cluster.awaitHealthy(member);
    }

    private void awaitWrites(int n, List<Future<?>> writers) {
        long target = ackCount.get() + n;
        Await.until(TIMEOUT, () -> ackCount.get() >= target || writers.stream().anyMatch(Future::isDone),
                n + " more acknowledged writes (seed " + SEED + ")");
        for (Future<?> w : writers) {
            if (w.isDone()) {
                try {
                    w.get();
                } catch (Exception e) {
                    throw new AssertionError("a writer failed (seed " + SEED + ")", e);
                }
            }
        }
    }

    /** Reads every writer's keys back linearizably; counts acknowledged writes missing or changed. */
    private long countLost(RotaClient rota) {
        Map<String, KeyValue> present = new HashMap<>();
        for (int w = 0; w < WRITERS; w++) {
            GetResult range = rota.kv().getPrefix(PREFIX + "w" + w + "/");
            range.kvs().forEach(kv -> present.put(kv.keyString(), kv));
        }
        long lost = 0;
        for (Ack a : acked.values()) {
            KeyValue kv = present.get(a.key());
            if (kv == null || !kv.valueString().equals(a.value()) || kv.modRevision() != a.revision()) {
                lost++;
                System.out.println("LOST: " + a + " found " + kv);
            }
        }
        return lost;
    }

    /**
     * Once every member has applied the same revision, reads {@code crash/} from each member's own state
     * (serializable) and checks they are identical; returns the image.
     */
    private static Map<String, String> membersAgree(ProcessCluster cluster) {
        List<Map<String, String>> images = new ArrayList<>();
        Await.until(TIMEOUT, () -> {
            images.clear();
            for (int i = 0; i < MEMBERS; i++) {
                images.add(serializableImage(cluster, i));
            }
            return images.stream().allMatch(images.get(0)::equals);
        }, "every member holds the same " + PREFIX + " keys, values and revisions (seed " + SEED + ")");
        return images.get(0);
    }

    /** Member i's keys under the prefix as key → value@mod_revision, plus its revision, from its local state. */
    private static Map<String, String> serializableImage(ProcessCluster cluster, int i) {
        try (FrameClient c = new FrameClient(new InetSocketAddress("127.0.0.1", cluster.clientPort(i)))) {
            Frame answer = c.call(Frame.newBuilder().setRangeRequest(RangeRequest.newBuilder()
                    .setKey(ByteString.copyFromUtf8(PREFIX)).setRangeEnd(ByteString.copyFromUtf8("crash0"))
                    .setSerializable(true)));
            Map<String, String> image = new HashMap<>();
            image.put("#revision", Long.toString(answer.getRangeResponse().getHeader().getRevision()));
            answer.getRangeResponse().getKvsList().forEach(kv -> image.put(kv.getKey().toStringUtf8(),
                    kv.getValue().toStringUtf8() + "@" + kv.getModRevision()));
            return image;
        }
    }

    /** Records what the watch delivers and every departure from 2, 3, 4, … (bounded by the run's writes). */
    private static final class WatchLog implements WatchListener {
        private final Map<Long, String> keyAt = new ConcurrentHashMap<>();
        private final List<String> problems = new ArrayList<>();
        /** Revision 1 is the empty initial store; the first write is revision 2. */
        private volatile long last = 1;
        private volatile boolean failed;

        @Override
        public synchronized void onEvent(WatchEvent event) {
            long revision = event.revision();
            if (revision != last + 1 && problems.size() < 20) {
                problems.add((revision <= last ? "repeat or back in time: " : "gap: ") + revision + " after " + last);
            }
            if (event.type() != WatchEvent.Type.PUT && problems.size() < 20) {
                problems.add("unexpected " + event.type() + " at " + revision);
            }
            keyAt.put(revision, event.kv().keyString());
            last = Math.max(last, revision);
        }

        @Override
        public synchronized void onError(RotaException error) {
            failed = true;
            problems.add("the watch ended: " + error);
        }

        long last() {
            return last;
        }

        boolean failed() {
            return failed;
        }

        String keyAt(long revision) {
            return keyAt.get(revision);
        }

        long events() {
            return keyAt.size();
        }

        synchronized List<String> problems() {
            return List.copyOf(problems);
        }
    }
}
