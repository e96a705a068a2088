package io.rota.raft.storage;

import io.rota.raft.core.Entry;
import io.rota.raft.core.HardState;
import io.rota.raft.core.Ready;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * How fast the RocksDB log appends with {@code sync=true}: one {@link LogStore#persist} (one fsync) per
 * batch of 256-byte entries, for batches of 1, 16 and 256 entries. The driver loop batches every entry
 * that arrived during one fsync into the next Ready, so the larger batches are what a loaded leader sees.
 *
 * <p>Not a unit test (no {@code Test} suffix). Run it from the repository root:
 * <pre>
 * ./mvnw -q -o -pl raft-runtime -am test-compile dependency:build-classpath \
 *     -Dmdep.includeScope=test -Dmdep.outputFile=target/test.classpath
 * java -cp raft-runtime/target/test-classes:raft-runtime/target/classes:raft-core/target/classes:$(cat \
 *     raft-runtime/target/test.classpath) io.rota.raft.storage.LogAppendBench [seconds-per-size] [data-dir]
 * </pre>
 * The data directory (default: a fresh temporary one, deleted afterwards) decides which disk is measured.
 */
public final class LogAppendBench {

    private static final int ENTRY_BYTES = 256;
    private static final int[] BATCH_SIZES = {1, 16, 256};

    private LogAppendBench() {
    }

    public static void main(String[] args) throws IOException {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 3;
        Path base = args.length > 1 ? Path.of(args[1]) : Files.createTempDirectory("rota-bench");
        System.out.printf("RocksDB log append, sync=true, %d-byte entries, %.0f s per batch size, in %s%n%n",
                ENTRY_BYTES, seconds, base);
        System.out.println("| entries per Ready | entries/s | fsyncs/s | mean persist latency |");
        System.out.println("|---:|---:|---:|---:|");
        for (int batch : BATCH_SIZES) {
            Path dir = Files.createDirectories(base.resolve("batch-" + batch));
            try (RocksDbLogStore store = RocksDbLogStore.open(StorageConfig.defaults(dir))) {
                store.load();
                run(store, batch, 0.5); // warm-up: JIT, RocksDB's first WAL file
                long[] counts = run(store, batch, seconds);
                double elapsed = counts[1] / 1e9;
                System.out.printf("| %d | %,.0f | %,.0f | %.2f ms |%n", batch, counts[0] * batch / elapsed,
                        counts[0] / elapsed, elapsed * 1e3 / counts[0]);
            }
        }
        if (args.length < 2) {
            deleteRecursively(base);
        }
    }

    /** Persists batches for {@code seconds}; returns {persists, nanoseconds}. Continues the store's log. */
    private static long[] run(RocksDbLogStore store, int batch, double seconds) {
        SplittableRandom random = new SplittableRandom(42);
        long next = store.load().entries().size() + 1;
        long persists = 0;
        long start = System.nanoTime();
        long deadline = start + (long) (seconds * 1e9);
        long now;
        do {
            List<Entry> entries = new ArrayList<>(batch);
            for (int i = 0; i < batch; i++) {
                byte[] data = new byte[ENTRY_BYTES];
                random.nextBytes(data);
                entries.add(Entry.command(next++, 1, data));
            }
            store.persist(new Ready(null, new HardState(1, 1, next - 1), null, entries, List.of(), List.of(),
                    List.of(), List.of(), true, List.of()));
            persists++;
            now = System.nanoTime();
        } while (now < deadline);
        return new long[] {persists, now - start};
    }

    private static void deleteRecursively(Path dir) throws IOException {
        try (var paths = Files.walk(dir)) {
            for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
