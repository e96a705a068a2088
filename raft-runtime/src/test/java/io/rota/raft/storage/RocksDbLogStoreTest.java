package io.rota.raft.storage;

import io.rota.raft.core.Entry;
import io.rota.raft.core.HardState;
import io.rota.raft.core.PersistentState;
import io.rota.raft.core.Ready;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.function.UnaryOperator;

import static io.rota.raft.storage.StorageFixtures.entries;
import static io.rota.raft.storage.StorageFixtures.flipByte;
import static io.rota.raft.storage.StorageFixtures.ready;
import static io.rota.raft.storage.StorageFixtures.render;
import static io.rota.raft.storage.StorageFixtures.snapshot;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RocksDbLogStoreTest {

    @TempDir
    Path dir;

    private RocksDbLogStore open() {
        return RocksDbLogStore.open(StorageConfig.defaults(dir));
    }

    /** Writes the same Readys to the store and a model, closes the store and returns what a restart loads. */
    private PersistentState roundTrip(MemoryLogStore model, Ready... readys) {
        try (RocksDbLogStore store = open()) {
            for (var rd : readys) {
                store.persist(rd);
                model.persist(rd);
            }
        }
        try (RocksDbLogStore store = open()) {
            return store.load();
        }
    }

    @Test
    void entriesAndHardStateSurviveARestart() {
        List<Entry> log = new ArrayList<>(entries(1, 3, 1));
        log.add(Entry.noOp(4, 2));
        log.add(Entry.command(5, 2, new byte[0]));
        MemoryLogStore model = new MemoryLogStore();

        PersistentState loaded = roundTrip(model,
                ready(new HardState(1, 2, 0), log.subList(0, 2)),
                ready(new HardState(2, 3, 4), log.subList(2, 5)));

        assertEquals(render(model.load()), render(loaded));
        assertEquals(new HardState(2, 3, 4), loaded.hardState());
        assertEquals(5, loaded.entries().size());
    }

    @Test
    void entriesStartingBelowTheLastIndexReplaceTheOldSuffix() throws Exception {
        MemoryLogStore model = new MemoryLogStore();

        PersistentState loaded = roundTrip(model,
                ready(new HardState(1, 1, 2), entries(1, 6, 1)),
                ready(new HardState(2, 2, 2), entries(3, 4, 2)));

        assertEquals(render(model.load()), render(loaded));
        assertEquals(List.of(1L, 1L, 2L, 2L), loaded.entries().stream().map(Entry::term).toList());
        try (var raw = new StorageFixtures.RawDb(dir)) {
            assertEquals(List.of(1L, 2L, 3L, 4L), raw.entryIndexes(), "entries 5 and 6 are deleted, not hidden");
        }
    }

    @Test
    void compactionIsRememberedAcrossARestart() throws Exception {
        var snap = snapshot(8, 2, "state at 8");
        try (RocksDbLogStore store = open()) {
            store.persist(ready(new HardState(2, 1, 10), entries(1, 4, 1)));
            store.persist(ready(null, entries(5, 10, 2)));
            store.compact(snap, 6);
        }
        try (RocksDbLogStore store = open()) {
            PersistentState loaded = store.load();
            assertEquals(5, loaded.compactedIndex());
            assertEquals(2, loaded.compactedTerm());
            assertEquals(List.of(6L, 7L, 8L, 9L, 10L), loaded.entries().stream().map(Entry::index).toList());
            assertEquals("state at 8", new String(StorageFixtures.bytes(loaded.snapshot().data())));
            assertEquals(snap.metadata(), loaded.snapshot().metadata());
        }
        try (var raw = new StorageFixtures.RawDb(dir)) {
            assertEquals(List.of(6L, 7L, 8L, 9L, 10L), raw.entryIndexes());
        }
    }

    /**
     * The driver's snapshot thread writes the image first (saveSnapshot), the driver thread records it later
     * (compact): until then a restart does not see it, and the file it left is discarded.
     */
    @Test
    void aSnapshotSavedAheadCountsOnlyOnceCompactRecordsIt() throws Exception {
        var first = snapshot(4, 1, "state at 4");
        var second = snapshot(8, 2, "state at 8");
        try (RocksDbLogStore store = open()) {
            store.persist(ready(new HardState(2, 1, 10), entries(1, 4, 1)));
            store.persist(ready(null, entries(5, 10, 2)));
            store.saveSnapshot(first.metadata(), out -> out.write(StorageFixtures.bytes(first.data())));
            store.compact(first, 3);
            // The process dies before the driver thread records the second.
            store.saveSnapshot(second.metadata(), out -> out.write(StorageFixtures.bytes(second.data())));
        }
        try (RocksDbLogStore store = open()) {
            PersistentState loaded = store.load();
            assertEquals(first.metadata(), loaded.snapshot().metadata());
            assertEquals("state at 4", new String(StorageFixtures.bytes(loaded.snapshot().data())));
            assertEquals(2, loaded.compactedIndex());
            store.saveSnapshot(second.metadata(), out -> out.write(StorageFixtures.bytes(second.data())));
            store.compact(second, 6);
        }
        try (RocksDbLogStore store = open()) {
            PersistentState loaded = store.load();
            assertEquals(second.metadata(), loaded.snapshot().metadata());
            assertEquals("state at 8", new String(StorageFixtures.bytes(loaded.snapshot().data())));
            assertEquals(5, loaded.compactedIndex());
        }
    }

    @Test
    void aSnapshotFromTheLeaderReplacesTheWholeLog() throws Exception {
        MemoryLogStore model = new MemoryLogStore();
        var snap = snapshot(20, 3, "leader state at 20");

        PersistentState loaded = roundTrip(model,
                ready(new HardState(1, 1, 3), entries(1, 5, 1)),
                ready(new HardState(3, 2, 20), snap, entries(21, 22, 3)));

        assertEquals(render(model.load()), render(loaded));
        assertEquals(snap.metadata(), loaded.snapshot().metadata());
        assertEquals(20, loaded.compactedIndex());
        try (var raw = new StorageFixtures.RawDb(dir)) {
            assertEquals(List.of(21L, 22L), raw.entryIndexes());
        }
    }

    @Test
    void misuseIsRejectedBeforeAnythingIsWritten() {
        for (LogStore store : List.of(new MemoryLogStore(), open())) {
            try (store) {
                store.persist(ready(new HardState(2, 1, 6), entries(1, 8, 2)));
                store.compact(snapshot(6, 2, "at 6"), 4);
                String before = render(store.load());
                assertThrows(IllegalArgumentException.class, () -> store.compact(snapshot(5, 2, "at 5"), 4));
                assertThrows(IllegalArgumentException.class, () -> store.compact(snapshot(7, 2, "at 7"), 9));
                assertThrows(IllegalArgumentException.class, () -> store.persist(ready(null, entries(3, 4, 3))));
                assertThrows(IllegalArgumentException.class, () -> store.persist(ready(null, entries(10, 10, 3))));
                assertThrows(IllegalArgumentException.class,
                        () -> store.persist(ready(null, snapshot(5, 3, "old"), List.of())));
                assertEquals(before, render(store.load()), store.getClass().getSimpleName());
            }
        }
    }

    @Test
    void aDamagedCommittedEntryStopsTheNode() throws Exception {
        persistAndClose(ready(new HardState(1, 1, 3), entries(1, 5, 1)));
        damageEntry(2, StorageFixtures::flipByte);

        try (RocksDbLogStore store = open()) {
            CorruptLogException e = assertThrows(CorruptLogException.class, store::load);
            assertEquals(2, e.index());
            assertTrue(e.getMessage().contains("log index 2"), e.getMessage());
            assertTrue(e.getMessage().contains(dir.toString()), e.getMessage());
            assertTrue(e.getMessage().contains("restore it from a healthy peer"), e.getMessage());
            assertTrue(e.getMessage().contains("checksum mismatch"), e.getMessage());
        }
    }

    @Test
    void aGapInTheCommittedPrefixStopsTheNode() throws Exception {
        persistAndClose(ready(new HardState(1, 1, 4), entries(1, 5, 1)));
        try (var raw = new StorageFixtures.RawDb(dir)) {
            raw.deleteEntry(3);
        }

        try (RocksDbLogStore store = open()) {
            assertEquals(3, assertThrows(CorruptLogException.class, store::load).index());
        }
    }

    @Test
    void damagedHardStateStopsTheNode() throws Exception {
        persistAndClose(ready(new HardState(7, 2, 1), entries(1, 2, 7)));
        try (var raw = new StorageFixtures.RawDb(dir)) {
            raw.rewriteState("hard_state", StorageFixtures::flipByte);
        }

        try (RocksDbLogStore store = open()) {
            CorruptLogException e = assertThrows(CorruptLogException.class, store::load);
            assertTrue(e.getMessage().contains("hard state"), e.getMessage());
        }
    }

    @Test
    void aDamagedEntryAboveTheCommitIndexAlsoStopsTheNode() throws Exception {
        // This node may have acknowledged entry 5 to a leader that counted it toward a commit it never
        // heard of: dropping it could lose a committed write (REFERENCE.md pitfall 9).
        persistAndClose(ready(new HardState(1, 1, 3), entries(1, 7, 1)));
        damageEntry(5, StorageFixtures::flipByte);

        assertStopsAt(5, "checksum mismatch");
    }

    @Test
    void aTruncatedRecordAboveTheCommitIndexAlsoStopsTheNode() throws Exception {
        persistAndClose(ready(new HardState(1, 1, 3), entries(1, 7, 1)));
        damageEntry(4, v -> Arrays.copyOf(v, v.length - 7));

        assertStopsAt(4, "truncated record");
    }

    @Test
    void aDamagedSnapshotFileIsDetectedOnLoad() throws Exception {
        persistAndClose(ready(new HardState(3, 2, 20), snapshot(20, 3, "leader state at 20"), List.of()));
        Path file = dir.resolve("snapshots").resolve(SnapshotStore.name(20, 3));
        Files.write(file, flipByte(Files.readAllBytes(file)));

        try (RocksDbLogStore store = open()) {
            assertThrows(CorruptSnapshotException.class, store::load);
        }
    }

    @Test
    void aWriteTornByACrashIsDroppedWhole() throws Exception {
        Path crashed = crashCopyAfter(ready(new HardState(1, 1, 2), entries(1, 3, 1)),
                ready(new HardState(1, 1, 3), entries(4, 6, 1)));
        tornWal(crashed, wal -> Arrays.copyOf(wal, wal.length - 10));

        try (RocksDbLogStore store = RocksDbLogStore.open(StorageConfig.defaults(crashed))) {
            PersistentState loaded = store.load();
            assertEquals(new HardState(1, 1, 2), loaded.hardState(), "the torn Ready is gone entirely");
            assertEquals(List.of(1L, 2L, 3L), loaded.entries().stream().map(Entry::index).toList());
        }
    }

    @Test
    void damageInsideTheWriteAheadLogStopsTheNode() throws Exception {
        Path crashed = crashCopyAfter(ready(new HardState(1, 1, 2), entries(1, 3, 1)),
                ready(new HardState(1, 1, 3), entries(4, 6, 1)));
        tornWal(crashed, wal -> {
            wal[20] ^= 0x10; // inside the first record, which a later synced one follows
            return wal;
        });

        CorruptLogException e = assertThrows(CorruptLogException.class,
                () -> RocksDbLogStore.open(StorageConfig.defaults(crashed)).close());
        assertTrue(e.getMessage().contains("RocksDB reports corruption"), e.getMessage());
    }

    /**
     * Persists the Readys, then copies the data directory while the store is still open: what a power cut
     * would leave, with the writes only in RocksDB's write-ahead log.
     */
    private Path crashCopyAfter(Ready... readys) throws Exception {
        Path copy = dir.resolve("crashed");
        Path live = dir.resolve("live");
        try (RocksDbLogStore store = RocksDbLogStore.open(StorageConfig.defaults(live))) {
            for (var rd : readys) {
                store.persist(rd);
            }
            try (var files = Files.walk(live)) {
                for (Path p : files.toList()) {
                    Path target = copy.resolve(live.relativize(p));
                    if (Files.isDirectory(p)) {
                        Files.createDirectories(target);
                    } else if (!p.getFileName().toString().equals("LOCK")) {
                        Files.copy(p, target);
                    }
                }
            }
        }
        return copy;
    }

    /** Rewrites the newest RocksDB write-ahead log file. */
    private static void tornWal(Path dataDir, UnaryOperator<byte[]> damage) throws Exception {
        try (var files = Files.list(dataDir.resolve("log"))) {
            Path wal = files.filter(p -> p.getFileName().toString().endsWith(".log"))
                    .max(Comparator.naturalOrder()).orElseThrow();
            Files.write(wal, damage.apply(Files.readAllBytes(wal)));
        }
    }

    private void assertStopsAt(long index, String problem) throws Exception {
        try (RocksDbLogStore store = open()) {
            CorruptLogException e = assertThrows(CorruptLogException.class, store::load);
            assertTrue(e.getMessage().contains(String.valueOf(index)) && e.getMessage().contains(problem),
                    e.getMessage());
        }
        try (var raw = new StorageFixtures.RawDb(dir)) {
            assertEquals(7, raw.entryIndexes().size(), "nothing was deleted");
        }
    }

    private void persistAndClose(Ready rd) {
        try (RocksDbLogStore store = open()) {
            store.persist(rd);
        }
    }

    private void damageEntry(long index, UnaryOperator<byte[]> damage) throws Exception {
        try (var raw = new StorageFixtures.RawDb(dir)) {
            raw.rewriteEntry(index, damage);
        }
    }
}
