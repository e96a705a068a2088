package io.rota.raft.storage;

import io.rota.raft.core.Configuration;
import io.rota.raft.core.Entry;
import io.rota.raft.core.HardState;
import io.rota.raft.core.PersistentState;
import io.rota.raft.core.Ready;
import io.rota.raft.core.Snapshot;
import io.rota.raft.core.SnapshotMetadata;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;

import static io.rota.raft.storage.StorageFixtures.render;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Random sequences of persist (append, overwrite, snapshot from a leader), compact and restart against
 * {@link MemoryLogStore} as the model: after every step the RocksDB store must load exactly what the model
 * holds. The sequences respect what the core guarantees (entries at or below the commit index never
 * change, snapshots cover applied entries), since the store relies on it.
 *
 * <p>Rerun one seed with {@code -Drota.storage.seed=<seed>}.
 */
@Tag("sim")
class LogStoreProperties {

    private static final int SEEDS = 200;
    private static final int STEPS = 30;

    @TempDir
    Path root;

    @Test
    void rocksDbStoreBehavesLikeTheModel() throws Exception {
        String only = System.getProperty("rota.storage.seed");
        if (only != null) {
            run(Long.parseLong(only));
            return;
        }
        for (long i = 0; i < SEEDS; i++) {
            run(0x5107A6E000L + i);
        }
    }

    private void run(long seed) throws Exception {
        Path dir = Files.createDirectory(root.resolve("seed-" + seed));
        try {
            new Run(new SplittableRandom(seed), dir).steps();
        } catch (AssertionError | RuntimeException e) {
            throw new AssertionError("seed " + seed + " failed (rerun with -Drota.storage.seed=" + seed + ")", e);
        }
    }

    private static final class Run {
        private final SplittableRandom random;
        private final Path dir;
        private final MemoryLogStore model = new MemoryLogStore();
        private RocksDbLogStore store;
        private long term = 1;

        Run(SplittableRandom random, Path dir) {
            this.random = random;
            this.dir = dir;
        }

        void steps() {
            store = RocksDbLogStore.open(StorageConfig.defaults(dir));
            try {
                for (int step = 0; step < STEPS; step++) {
                    int op = random.nextInt(100);
                    if (op < 55) {
                        append();
                    } else if (op < 65) {
                        hardStateOnly();
                    } else if (op < 72) {
                        snapshotFromLeader();
                    } else if (op < 92) {
                        compact();
                    } else {
                        store.close();
                        store = RocksDbLogStore.open(StorageConfig.defaults(dir));
                    }
                    assertEquals(render(model.load()), render(store.load()), "after step " + step);
                }
            } finally {
                store.close();
            }
        }

        /** New entries, or a conflicting suffix from a new leader, starting just after the commit index. */
        private void append() {
            PersistentState s = model.load();
            long last = lastIndex(s);
            long from = Math.max(s.hardState().commitIndex(), s.compactedIndex()) + 1;
            long first = from + random.nextLong(last - from + 2);
            if (first <= last && random.nextBoolean()) {
                term++; // an overwrite comes from a newer leader (§5.3)
            }
            List<Entry> entries = new ArrayList<>();
            int n = 1 + random.nextInt(6);
            for (long i = first; i < first + n; i++) {
                entries.add(random.nextInt(8) == 0 ? Entry.noOp(i, term) : Entry.command(i, term, bytes(40)));
            }
            long newLast = first + n - 1;
            long commit = s.hardState().commitIndex();
            HardState hs = random.nextBoolean() ? null
                    : new HardState(term, 1 + random.nextInt(3), commit + random.nextLong(newLast - commit + 1));
            persist(new Ready(null, hs, null, entries, List.of(), List.of(), List.of(), List.of(), true, List.of()));
        }

        private void hardStateOnly() {
            PersistentState s = model.load();
            long commit = s.hardState().commitIndex();
            term += random.nextInt(2);
            persist(StorageFixtures.ready(new HardState(term, random.nextInt(4),
                    commit + random.nextLong(lastIndex(s) - commit + 1)), List.of()));
        }

        /** A leader's snapshot beyond our commit index replaces the log (§7), perhaps with entries after it. */
        private void snapshotFromLeader() {
            PersistentState s = model.load();
            term++;
            long index = Math.max(s.hardState().commitIndex(), s.compactedIndex()) + 1 + random.nextInt(10);
            Snapshot snap = new Snapshot(new SnapshotMetadata(index, term, configuration()), bytes(200));
            List<Entry> entries = new ArrayList<>();
            for (long i = index + 1; i <= index + random.nextInt(4); i++) {
                entries.add(Entry.command(i, term, bytes(40)));
            }
            persist(StorageFixtures.ready(new HardState(term, 2, index), snap, entries));
        }

        /** A local snapshot at an index in (old snapshot, commit], keeping some entries behind it. */
        private void compact() {
            PersistentState s = model.load();
            long floor = Math.max(s.compactedIndex(), s.snapshot() == null ? 0 : s.snapshot().index());
            long commit = s.hardState().commitIndex();
            if (commit <= floor) {
                return;
            }
            long index = floor + 1 + random.nextLong(commit - floor);
            long snapTerm = s.entries().get((int) (index - s.compactedIndex() - 1)).term();
            Snapshot snap = new Snapshot(new SnapshotMetadata(index, snapTerm, configuration()), bytes(200));
            long newFirst = s.compactedIndex() + 1 + random.nextLong(index - s.compactedIndex() + 1);
            model.compact(snap, newFirst);
            store.compact(snap, newFirst);
        }

        private void persist(Ready rd) {
            model.persist(rd);
            store.persist(rd);
        }

        private static long lastIndex(PersistentState s) {
            return s.compactedIndex() + s.entries().size();
        }

        private Configuration configuration() {
            return switch (random.nextInt(3)) {
                case 0 -> Configuration.of(1L, 2L, 3L);
                case 1 -> new Configuration(Set.of(1L, 2L, 3L, 4L, 5L));
                default -> new Configuration(Set.of(1L, 2L, 3L), Set.of(4L, 5L)); // with learners (§4.2.1)
            };
        }

        private byte[] bytes(int max) {
            byte[] b = new byte[random.nextInt(max + 1)];
            random.nextBytes(b);
            return b;
        }
    }
}
