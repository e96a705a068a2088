package io.rota.server.kv;

import io.rota.raft.core.Configuration;
import io.rota.raft.core.SnapshotMetadata;
import io.rota.raft.core.StateMachine;
import io.rota.raft.storage.SnapshotStore;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Set;

/**
 * How long a snapshot holds up the driver thread, before and after issue 12 moved serialisation and the
 * file write off it (run by {@code scripts/bench.sh snapshot}, not a test). For a coordination state
 * machine of N keys (256-byte values) it times the three steps the driver takes, each the median of five
 * runs after a warm-up:
 * <ol>
 *   <li>capture — {@link CoordinationStateMachine#capture()}: the only step left on the driver thread;</li>
 *   <li>serialise — {@code Capture.serialize()} into memory, to show what the stream costs apart from the
 *       disk (the runtime never does this: it streams);</li>
 *   <li>write — {@link SnapshotStore#save} with {@code Capture.writeTo}: the image streamed into a temp file,
 *       fsync, rename, directory fsync, on the snapshot thread — serialisation included.</li>
 * </ol>
 * Before, the driver thread did all three (the state machine's {@code snapshot()} built and serialised the
 * image in one go, and {@code LogStore.compact} wrote the file). The log's own record of the snapshot — one
 * small synced RocksDB write — stays on the driver thread in both, and is not measured here.
 *
 * <pre>SnapshotBench [keys,keys,...] [directory]</pre>
 */
public final class SnapshotBench {

    private static final int VALUE_BYTES = 256;
    private static final int RUNS = 5;

    private SnapshotBench() {
    }

    public static void main(String[] args) throws IOException {
        int[] sizes = args.length > 0 ? Arrays.stream(args[0].split(",")).mapToInt(Integer::parseInt).toArray()
                : new int[] {10_000, 100_000, 300_000};
        Path dir = args.length > 1 ? Path.of(args[1]) : Files.createTempDirectory("rota-snapshot-bench");
        System.out.printf("coordination state machine, %d-byte values; median of %d runs; snapshot files in %s%n%n",
                VALUE_BYTES, RUNS, dir);
        System.out.println("| keys | image | capture | serialise | stream to file + fsync | driver thread blocked before | after |");
        System.out.println("|---:|---:|---:|---:|---:|---:|---:|");
        SnapshotStore files = new SnapshotStore(dir);
        String value = "v".repeat(VALUE_BYTES);
        for (int keys : sizes) {
            Harness h = new Harness(Limits.defaults());
            for (int k = 0; k < keys; k++) {
                h.put(String.format("key/%08d", k), value);
            }
            measure(h.sm, files, 2); // warm-up: JIT, page cache
            double[][] runs = new double[RUNS][];
            int bytes = 0;
            for (int r = 0; r < RUNS; r++) {
                runs[r] = measure(h.sm, files, h.index + r);
                bytes = (int) runs[r][3];
            }
            double capture = median(runs, 0);
            double serialise = median(runs, 1);
            double write = median(runs, 2);
            System.out.printf("| %,d | %.1f MB | %.1f ms | %.1f ms | %.1f ms | %.1f ms | %.1f ms |%n", keys,
                    bytes / 1e6, capture, serialise, write, capture + write, capture);
        }
    }

    /** One snapshot: milliseconds to capture, serialise and write, and the image's size in bytes. */
    private static double[] measure(CoordinationStateMachine sm, SnapshotStore files, long index) {
        long t0 = System.nanoTime();
        StateMachine.Capture capture = sm.capture();
        long t1 = System.nanoTime();
        byte[] data = capture.serialize();
        long t2 = System.nanoTime();
        files.save(new SnapshotMetadata(index, 1, new Configuration(Set.of(1L))), capture::writeTo);
        long t3 = System.nanoTime();
        return new double[] {(t1 - t0) / 1e6, (t2 - t1) / 1e6, (t3 - t2) / 1e6, data.length};
    }

    private static double median(double[][] runs, int column) {
        double[] values = Arrays.stream(runs).mapToDouble(r -> r[column]).sorted().toArray();
        return values[values.length / 2];
    }
}
