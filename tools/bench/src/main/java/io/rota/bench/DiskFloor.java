package io.rota.bench;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicReference;

/**
 * What a disk allows a Raft log, before any network or CPU: appends of one small record, each made durable
 * with {@code fdatasync} ({@link FileChannel#force force(false)}), the way a member's synced RocksDB write
 * ({@code RocksDbLogStore}) makes each entry durable. Two figures: one writer alone (the bound when every member has its own
 * disk), and {@code writers} appending to their own files at the same moment (three members sharing one
 * disk, as {@code scripts/cluster.sh} starts them), timed until a majority of them is done — the earliest a
 * leader can count an entry committed (§5.3) — and until all are. A write at one in flight pays at least one
 * such quorum of syncs, a lock cycle (join, then release) two in a row.
 */
final class DiskFloor {

    /** Latencies of one kind of step, in nanoseconds, sorted. */
    record Sample(long[] sortedNanos) {

        static Sample of(long[] nanos) {
            long[] copy = nanos.clone();
            Arrays.sort(copy);
            return new Sample(copy);
        }

        long percentile(double p) {
            int i = (int) Math.min(sortedNanos.length - 1, Math.floor(p / 100 * sortedNanos.length));
            return sortedNanos[i];
        }

        long mean() {
            return (long) Arrays.stream(sortedNanos).average().orElse(0);
        }
    }

    /** One pass: the lone writer's syncs, and the shared rounds' majority and last finishes. */
    record Result(int writers, int bytes, Sample alone, Sample majority, Sample all) {

        /** How many writers make a majority: the one whose finish {@link #majority} times, counted from 1. */
        int majorityCount() {
            return writers / 2 + 1;
        }

        /** Upper bound of sequential quorum writes per second on a shared disk: one majority of syncs each. */
        double sharedWritesPerSecond() {
            return 1e9 / majority.mean();
        }

        /** The same bound when each member has a disk of its own: one sync each, in parallel. */
        double ownDiskWritesPerSecond() {
            return 1e9 / alone.mean();
        }
    }

    private DiskFloor() {
    }

    /**
     * Measures in a fresh directory under {@code parent}, deleted afterwards.
     *
     * @param parent  where to write (the disk to judge: put it where the data dirs go)
     * @param writers how many share the disk at once (3: a three-member cluster on one machine)
     * @param rounds  timed steps of each kind (after a tenth as many, at least 5, untimed)
     * @param bytes   bytes appended per step (an entry of a 256-byte put is about 300)
     * @return the figures
     * @throws IOException          if the directory cannot be written or synced
     * @throws InterruptedException if interrupted while the writers run
     */
    static Result measure(Path parent, int writers, int rounds, int bytes) throws IOException, InterruptedException {
        if (writers < 1 || rounds < 1 || bytes < 1) {
            throw new IllegalArgumentException("writers, rounds and bytes must be positive");
        }
        Path dir = Files.createTempDirectory(parent, "rota-disk-floor-");
        List<FileChannel> files = new ArrayList<>();
        try {
            for (int i = 0; i < writers; i++) {
                files.add(FileChannel.open(dir.resolve("wal-" + i + ".log"), StandardOpenOption.CREATE_NEW,
                        StandardOpenOption.WRITE, StandardOpenOption.APPEND));
            }
            int warm = Math.max(5, rounds / 10);
            byte[] record = new byte[bytes];
            Arrays.fill(record, (byte) 'x');
            FileChannel lone = files.get(0);
            long[] alone = new long[rounds];
            for (int r = -warm; r < rounds; r++) {
                long t0 = System.nanoTime();
                append(lone, record);
                if (r >= 0) {
                    alone[r] = System.nanoTime() - t0;
                }
            }
            long[][] shared = shared(files, record, warm, rounds);
            return new Result(writers, bytes, Sample.of(alone), Sample.of(shared[0]), Sample.of(shared[1]));
        } finally {
            for (FileChannel f : files) {
                f.close();
            }
            try (var paths = Files.walk(dir)) {
                for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }

    private static void append(FileChannel file, byte[] record) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(record);
        while (b.hasRemaining()) {
            file.write(b);
        }
        file.force(false);   // fdatasync: the data, and the size the append changed
    }

    /** Rounds in which every writer appends and syncs at once; per round, when a majority and when all were done. */
    private static long[][] shared(List<FileChannel> files, byte[] record, int warm, int rounds)
            throws InterruptedException, IOException {
        int n = files.size();
        long[] finished = new long[n];
        long[] majority = new long[rounds];
        long[] all = new long[rounds];
        CyclicBarrier start = new CyclicBarrier(n + 1);
        CyclicBarrier end = new CyclicBarrier(n + 1);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int me = i;
            Thread t = new Thread(() -> {
                try {
                    for (int r = -warm; r < rounds; r++) {
                        start.await();
                        try {
                            append(files.get(me), record);
                        } catch (IOException | RuntimeException e) {
                            failure.compareAndSet(null, e);   // the round still ends; the main thread throws it
                        }
                        finished[me] = System.nanoTime();
                        end.await();
                    }
                } catch (InterruptedException | BrokenBarrierException e) {
                    // the main thread gave up on the rounds: nothing left to do
                }
            }, "disk-floor-" + i);
            t.setDaemon(true);
            threads.add(t);
            t.start();
        }
        try {
            for (int r = -warm; r < rounds; r++) {
                start.await();
                long t0 = System.nanoTime();
                end.await();   // the barrier orders every writer's finished[] store before this read
                if (failure.get() != null) {
                    throw new IOException("a writer's append failed: " + failure.get(), failure.get());
                }
                long[] done = finished.clone();
                Arrays.sort(done);
                if (r >= 0) {
                    majority[r] = done[n / 2] - t0;   // the (n/2+1)-th to finish: Result.majorityCount()
                    all[r] = done[n - 1] - t0;
                }
            }
        } catch (BrokenBarrierException e) {
            throw new IOException("the writers' rounds broke off", e);
        } finally {
            for (Thread t : threads) {
                t.interrupt();
                t.join(5_000);
            }
        }
        return new long[][] {majority, all};
    }

    /** The report: what was measured, the figures, and what they bound. */
    static String report(Result r, Path where) {
        StringBuilder s = new StringBuilder();
        s.append(String.format("rota-bench disk: %d-byte appends, each made durable with fdatasync, in %s%n",
                r.bytes(), where));
        s.append(String.format("  one writer alone:        p50 %s, mean %s, p99 %s%n",
                micros(r.alone().percentile(50)), micros(r.alone().mean()), micros(r.alone().percentile(99))));
        s.append(String.format("  %d writers at once:       a majority (%d) done p50 %s, mean %s, p99 %s; "
                        + "all done p50 %s, mean %s%n",
                r.writers(), r.majorityCount(), micros(r.majority().percentile(50)), micros(r.majority().mean()),
                micros(r.majority().percentile(99)), micros(r.all().percentile(50)), micros(r.all().mean())));
        s.append(String.format("What this disk allows, before any network hop or CPU (ceilings, not predictions):%n"));
        s.append(String.format("  %d members sharing it:   at most %,.0f writes/s at one in flight; a lock + unlock "
                        + "cycle (two writes in a row) at most %,.0f/s%n", r.writers(), r.sharedWritesPerSecond(),
                r.sharedWritesPerSecond() / 2));
        s.append(String.format("  each member on a disk like it: at most %,.0f writes/s at one in flight; %,.0f lock "
                + "cycles/s%n", r.ownDiskWritesPerSecond(), r.ownDiskWritesPerSecond() / 2));
        s.append("Batched writes share one sync per batch, so they are bounded by bytes/s, not by these figures.\n");
        return s.toString();
    }

    private static String micros(long nanos) {
        return String.format("%,d µs", nanos / 1_000);
    }
}
