package io.rota.raft.storage;

import io.rota.raft.core.Configuration;
import io.rota.raft.core.Entry;
import io.rota.raft.core.HardState;
import io.rota.raft.core.PersistentState;
import io.rota.raft.core.Ready;
import io.rota.raft.core.Snapshot;
import io.rota.raft.core.SnapshotMetadata;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.DBOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;
import java.util.stream.LongStream;

/** Builders for Readys and entries, a byte-exact rendering of PersistentState, and raw RocksDB access. */
final class StorageFixtures {

    static final Configuration CONFIG = Configuration.of(1L, 2L, 3L);

    private StorageFixtures() {
    }

    static Ready ready(HardState hardState, Snapshot snapshot, List<Entry> entries) {
        return new Ready(null, hardState, snapshot, entries, List.of(), List.of(), List.of(), List.of(), true, List.of());
    }

    static Ready ready(HardState hardState, List<Entry> entries) {
        return ready(hardState, null, entries);
    }

    /** Entries {@code from..to} in {@code term}, each carrying its own index and term as text. */
    static List<Entry> entries(long from, long to, long term) {
        return LongStream.rangeClosed(from, to)
                .mapToObj(i -> Entry.command(i, term, ("cmd-" + i + "@" + term).getBytes(StandardCharsets.UTF_8)))
                .collect(Collectors.toList());
    }

    static Snapshot snapshot(long index, long term, String data) {
        return new Snapshot(new SnapshotMetadata(index, term, CONFIG), data.getBytes(StandardCharsets.UTF_8));
    }

    /** A snapshot image's bytes, from memory or its file. */
    static byte[] bytes(io.rota.raft.core.SnapshotData data) {
        try (java.io.InputStream in = SnapshotFile.open(data)) {
            return in.readAllBytes();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** Records compare byte arrays by identity; this compares everything by content. */
    static String render(PersistentState s) {
        StringBuilder b = new StringBuilder();
        b.append(s.hardState()).append('\n');
        if (s.snapshot() != null) {
            b.append("snapshot ").append(s.snapshot().metadata()).append(' ')
                    .append(HexFormat.of().formatHex(bytes(s.snapshot().data()))).append('\n');
        }
        b.append("compacted ").append(s.compactedIndex()).append('@').append(s.compactedTerm()).append('\n');
        for (Entry e : s.entries()) {
            b.append(e.index()).append('@').append(e.term()).append(' ').append(e.type()).append(' ')
                    .append(HexFormat.of().formatHex(e.data())).append('\n');
        }
        return b.toString();
    }

    /** Flips one bit in the last byte before the trailing checksum: damage only the checksum can see. */
    static byte[] flipByte(byte[] value) {
        byte[] copy = value.clone();
        copy[copy.length - Codec.CRC_BYTES - 1] ^= 0x10;
        return copy;
    }

    /**
     * Opens the store's RocksDB directly, bypassing {@link RocksDbLogStore}, to damage it the way a bad
     * disk or a bug would. The store must be closed.
     */
    static final class RawDb implements AutoCloseable {
        private final DBOptions options = new DBOptions();
        private final List<ColumnFamilyHandle> handles = new ArrayList<>();
        private final RocksDB db;

        RawDb(Path dataDir) throws RocksDBException {
            db = RocksDB.open(options, dataDir.resolve("log").toString(), List.of(
                    new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY),
                    new ColumnFamilyDescriptor("entries".getBytes(StandardCharsets.UTF_8)),
                    new ColumnFamilyDescriptor("state".getBytes(StandardCharsets.UTF_8))), handles);
        }

        void rewriteEntry(long index, UnaryOperator<byte[]> damage) throws RocksDBException {
            byte[] value = db.get(handles.get(1), Codec.key(index));
            db.put(handles.get(1), Codec.key(index), damage.apply(value));
        }

        void deleteEntry(long index) throws RocksDBException {
            db.delete(handles.get(1), Codec.key(index));
        }

        void rewriteState(String key, UnaryOperator<byte[]> damage) throws RocksDBException {
            byte[] k = key.getBytes(StandardCharsets.UTF_8);
            db.put(handles.get(2), k, damage.apply(db.get(handles.get(2), k)));
        }

        /** Indexes of all stored entry records, including any a load would not return. */
        List<Long> entryIndexes() throws Codec.BadRecordException {
            List<Long> indexes = new ArrayList<>();
            try (RocksIterator it = db.newIterator(handles.get(1))) {
                for (it.seekToFirst(); it.isValid(); it.next()) {
                    indexes.add(Codec.index(it.key()));
                }
            }
            return indexes;
        }

        @Override
        public void close() {
            handles.forEach(ColumnFamilyHandle::close);
            db.close();
            options.close();
        }
    }
}
