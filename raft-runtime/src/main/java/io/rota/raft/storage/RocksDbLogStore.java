package io.rota.raft.storage;

import io.rota.raft.core.Entry;
import io.rota.raft.core.HardState;
import io.rota.raft.core.PersistentState;
import io.rota.raft.core.Ready;
import io.rota.raft.core.Snapshot;
import io.rota.raft.core.SnapshotData;
import io.rota.raft.core.SnapshotMetadata;
import io.rota.raft.core.StorageRules;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.DBOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.Status;
import org.rocksdb.WALRecoveryMode;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The durable {@link LogStore}: RocksDB for the log and hard state, {@link SnapshotStore} for snapshots.
 *
 * <p>Two column families: {@code entries} (key: big-endian index, so iteration is in index order; value:
 * {@link Codec}'s checksummed record) and {@code state} (keys {@code hard_state}, {@code compacted},
 * {@code snapshot}: the latest snapshot's metadata, whose (index, term) names its file). Every
 * {@link #persist} and {@link #compact} is one {@link WriteBatch} written with {@code sync=true}: one
 * fsync of RocksDB's write-ahead log, and all of it or none of it after a crash.
 *
 * <p>On {@link #load()} every record's checksum is verified. A bad entry above the persisted commit index
 * is treated as a tail that never became durable: it and everything after it are deleted, with a warning.
 * A bad entry at or below it, a gap, or damaged hard state is fail-stop ({@link CorruptLogException}).
 *
 * <p>A synced write slower than {@link #SLOW_SYNC} leaves a WARN line with its duration and size: while it
 * lasts the node sends no vote or acknowledgement, so a slow disk looks like a slow or absent member.
 */
public final class RocksDbLogStore implements LogStore {

    /** A synced write (one fsync) that takes at least this long is logged as slow. */
    public static final Duration SLOW_SYNC = Duration.ofMillis(500);

    private static final Logger logger = LoggerFactory.getLogger(RocksDbLogStore.class);

    private static final byte[] CF_ENTRIES = "entries".getBytes(StandardCharsets.UTF_8);
    private static final byte[] CF_STATE = "state".getBytes(StandardCharsets.UTF_8);
    private static final byte[] HARD_STATE = "hard_state".getBytes(StandardCharsets.UTF_8);
    private static final byte[] COMPACTED = "compacted".getBytes(StandardCharsets.UTF_8);
    private static final byte[] SNAPSHOT = "snapshot".getBytes(StandardCharsets.UTF_8);
    /** Exclusive upper bound of every entry key: deleting [key(i), END) drops the log from i on. */
    private static final byte[] END = Codec.key(Long.MAX_VALUE);

    static {
        RocksDB.loadLibrary();
    }

    private final Path dataDir;
    private final SnapshotStore snapshots;
    private final DBOptions dbOptions;
    private final ColumnFamilyOptions cfOptions;
    private final List<ColumnFamilyHandle> handles = new ArrayList<>();
    private final RocksDB db;
    private final ColumnFamilyHandle entries;
    private final ColumnFamilyHandle state;
    private final WriteOptions syncWrites = new WriteOptions().setSync(true);
    /** For a Ready that only moves the commit index: ordered after every synced write, but not waited on. */
    private final WriteOptions unsyncedWrites = new WriteOptions().setSync(false);

    // What is on disk, cached so that persist() knows when an overwrite needs a range delete.
    private long compactedIndex;
    private long compactedTerm;
    private long lastIndex;
    private SnapshotMetadata snapshotMetadata;

    private RocksDbLogStore(StorageConfig config) throws RocksDBException {
        this.dataDir = config.dataDir();
        this.snapshots = new SnapshotStore(config.snapshotDir());
        this.dbOptions = new DBOptions()
                .setCreateIfMissing(true)
                .setCreateMissingColumnFamilies(true)
                // Drop only a torn last WAL record (a write cut short by a crash: never synced, so never
                // acknowledged); fail to open on damage anywhere else. The default, point-in-time
                // recovery, would silently stop replay there and lose later, acknowledged writes.
                .setWalRecoveryMode(WALRecoveryMode.TolerateCorruptedTailRecords)
                .setMaxTotalWalSize(config.maxWalBytes())
                .setKeepLogFileNum(config.keepInfoLogFiles());
        this.cfOptions = new ColumnFamilyOptions().setWriteBufferSize(config.writeBufferBytes());
        List<ColumnFamilyDescriptor> descriptors = List.of(
                new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, cfOptions),
                new ColumnFamilyDescriptor(CF_ENTRIES, cfOptions),
                new ColumnFamilyDescriptor(CF_STATE, cfOptions));
        try {
            this.db = RocksDB.open(dbOptions, dataDir.resolve("log").toString(), descriptors, handles);
        } catch (RocksDBException e) {
            syncWrites.close();
            unsyncedWrites.close();
            cfOptions.close();
            dbOptions.close();
            throw e;
        }
        this.entries = handles.get(1);
        this.state = handles.get(2);
    }

    /**
     * Opens (creating if missing) the store in {@code config.dataDir()}. Reads only the small metadata;
     * {@link #load()} reads and verifies the log.
     */
    public static RocksDbLogStore open(StorageConfig config) {
        RocksDbLogStore store;
        try {
            store = new RocksDbLogStore(config);
        } catch (RocksDBException e) {
            throw failure(config.dataDir(), "cannot open RocksDB", e);
        }
        try {
            store.readMetadata();
            return store;
        } catch (RuntimeException e) {
            store.close();
            throw e;
        }
    }

    @Override
    public PersistentState load() {
        HardState hardState = readHardState();
        readMetadata();
        Snapshot snapshot = null;
        if (snapshotMetadata != null) {
            snapshot = snapshots.latest().orElseThrow(() -> new CorruptLogException(-1, dataDir,
                    "the snapshot file " + SnapshotStore.name(snapshotMetadata.lastIncludedIndex(),
                            snapshotMetadata.lastIncludedTerm()) + " the log refers to is missing"));
            if (!snapshot.metadata().equals(snapshotMetadata)) {
                throw new CorruptLogException(-1, dataDir, "the newest snapshot file holds " + snapshot
                        + " but the log refers to " + snapshotMetadata);
            }
        }
        // Entries up to here are known to be committed (for the error message; nothing is ever dropped).
        long committed = Math.max(hardState.commitIndex(), snapshot == null ? 0 : snapshot.index());
        List<Entry> log = new ArrayList<>();
        long expected = compactedIndex + 1;
        try (RocksIterator it = db.newIterator(entries)) {
            for (it.seek(Codec.key(expected)); it.isValid(); it.next(), expected++) {
                String problem;
                try {
                    long index = Codec.index(it.key());
                    if (index != expected) {
                        problem = "missing entry (the next stored one is " + index + ")";
                    } else {
                        log.add(Codec.decodeEntry(index, it.value()));
                        continue;
                    }
                } catch (Codec.BadRecordException e) {
                    problem = e.getMessage();
                }
                // Every record here was written by a synced batch, so it may have been acknowledged —
                // as a follower's ack, even above our own commit index. A write torn by a crash never gets
                // this far: RocksDB's recovery drops it whole. So damage is damage: stop (fail-stop).
                throw new CorruptLogException(expected, dataDir, (expected <= committed ? "committed" : "acknowledged")
                        + " log entry: " + problem);
            }
            it.status();
        } catch (RocksDBException e) {
            throw failure(dataDir, "cannot read the log", e);
        }
        lastIndex = compactedIndex + log.size();
        if (lastIndex < hardState.commitIndex()) {
            throw new CorruptLogException(lastIndex + 1, dataDir, "committed log entry: missing (the log ends at "
                    + lastIndex + ", the commit index is " + hardState.commitIndex() + ")");
        }
        return new PersistentState(hardState, snapshot, compactedIndex, compactedTerm, log);
    }

    @Override
    public void persist(Ready ready) {
        Snapshot snapshot = ready.snapshot();
        long base = snapshot != null ? snapshot.index() : compactedIndex;
        long last = snapshot != null ? snapshot.index() : lastIndex;
        if (!ready.entries().isEmpty()) {
            StorageRules.checkAppend(ready.entries().get(0).index(), base, last);
        }
        if (snapshot != null) {
            StorageRules.checkNewer(snapshot, currentSnapshot());
            // The file first: once the batch below is durable, the log refers to it.
            snapshots.save(snapshot.metadata(), snapshot.data());
        }
        try (WriteBatch batch = new WriteBatch()) {
            if (snapshot != null) {
                // A snapshot from the leader replaces the whole log (§7, Figure 13 rules 7-8).
                batch.deleteRange(entries, Codec.key(0), END);
                batch.put(state, SNAPSHOT, Codec.encodeSnapshotMetadata(snapshot.metadata()));
                batch.put(state, COMPACTED, Codec.encodeCompacted(snapshot.index(), snapshot.term()));
            }
            if (!ready.entries().isEmpty()) {
                long first = ready.entries().get(0).index();
                if (first <= last) {
                    // A conflicting suffix (§5.3): later puts in the batch win over this range delete.
                    batch.deleteRange(entries, Codec.key(first), END);
                }
                for (Entry e : ready.entries()) {
                    batch.put(entries, Codec.key(e.index()), Codec.encodeEntry(e));
                }
                last = ready.entries().get(ready.entries().size() - 1).index();
            }
            if (ready.hardState() != null) {
                batch.put(state, HARD_STATE, Codec.encodeHardState(ready.hardState()));
            }
            write(ready.mustSync() ? syncWrites : unsyncedWrites, batch, ready.entries().size() + " entries");
        } catch (RocksDBException e) {
            throw failure(dataDir, "cannot persist to the log", e);
        }
        if (snapshot != null) {
            snapshotMetadata = snapshot.metadata();
            snapshots.protect(snapshotMetadata);
            compactedIndex = snapshot.index();
            compactedTerm = snapshot.term();
        }
        lastIndex = last;
    }

    /** Only the file: the snapshot thread writes it while the driver thread goes on with the log. */
    @Override
    public SnapshotData saveSnapshot(SnapshotMetadata metadata, SnapshotStore.ImageWriter image) {
        return snapshots.save(metadata, image);
    }

    @Override
    public void compact(Snapshot snapshot, long newFirstIndex) {
        StorageRules.checkCompact(snapshot, newFirstIndex, currentSnapshot(), compactedIndex, lastIndex);
        boolean newSnapshot = snapshotMetadata == null || !snapshotMetadata.equals(snapshot.metadata());
        if (newSnapshot && !snapshots.contains(snapshot.metadata())) {
            snapshots.save(snapshot.metadata(), snapshot.data());
        }
        long newCompacted = Math.max(compactedIndex, newFirstIndex - 1);
        try (WriteBatch batch = new WriteBatch()) {
            batch.put(state, SNAPSHOT, Codec.encodeSnapshotMetadata(snapshot.metadata()));
            long newTerm = compactedTerm;
            if (newCompacted > compactedIndex) {
                newTerm = newCompacted == snapshot.index() ? snapshot.term() : readEntry(newCompacted).term();
                batch.deleteRange(entries, Codec.key(0), Codec.key(newCompacted + 1));
                batch.put(state, COMPACTED, Codec.encodeCompacted(newCompacted, newTerm));
            }
            write(syncWrites, batch, "compaction");
            compactedTerm = newTerm;
        } catch (RocksDBException e) {
            throw failure(dataDir, "cannot compact the log", e);
        }
        compactedIndex = newCompacted;
        snapshotMetadata = snapshot.metadata();
        snapshots.protect(snapshotMetadata);
    }

    /** One WriteBatch to RocksDB; a synced one slower than {@link #SLOW_SYNC} is logged. */
    private void write(WriteOptions options, WriteBatch batch, String what) throws RocksDBException {
        long start = System.nanoTime();
        db.write(options, batch);
        long nanos = System.nanoTime() - start;
        if (options == syncWrites && nanos >= SLOW_SYNC.toNanos()) {
            logger.warn("slow fsync in {}: writing {} ({} bytes) took {} ms, over the {} ms threshold; the node "
                            + "sent no votes or acknowledgements meanwhile", dataDir, what, batch.getDataSize(),
                    nanos / 1_000_000, SLOW_SYNC.toMillis());
        }
    }

    @Override
    public void close() {
        // Children before parents: column family handles, then the database, then the options they use.
        handles.forEach(ColumnFamilyHandle::close);
        db.close();
        syncWrites.close();
        unsyncedWrites.close();
        cfOptions.close();
        dbOptions.close();
    }

    /** The stored snapshot's metadata as a data-less Snapshot, for the argument checks; null if none. */
    private Snapshot currentSnapshot() {
        return snapshotMetadata == null ? null : new Snapshot(snapshotMetadata, new byte[0]);
    }

    /** Reads the compaction point, the snapshot reference and the last index; drops orphan snapshot files. */
    private void readMetadata() {
        try {
            byte[] c = db.get(state, COMPACTED);
            long[] compacted = c == null ? new long[] {0, 0} : Codec.decodeCompacted(c);
            compactedIndex = compacted[0];
            compactedTerm = compacted[1];
            byte[] s = db.get(state, SNAPSHOT);
            snapshotMetadata = s == null ? null : Codec.decodeSnapshotMetadata(s);
        } catch (Codec.BadRecordException e) {
            throw new CorruptLogException(-1, dataDir, "log metadata: " + e.getMessage());
        } catch (RocksDBException e) {
            throw failure(dataDir, "cannot read the log metadata", e);
        }
        snapshots.discardNewerThan(snapshotMetadata == null ? 0 : snapshotMetadata.lastIncludedIndex());
        snapshots.protect(snapshotMetadata);
        try (RocksIterator it = db.newIterator(entries)) {
            it.seekToLast();
            lastIndex = it.isValid() ? Math.max(compactedIndex, Codec.index(it.key())) : compactedIndex;
        } catch (Codec.BadRecordException e) {
            throw new CorruptLogException(-1, dataDir, "last log key: " + e.getMessage());
        }
    }

    private HardState readHardState() {
        try {
            byte[] v = db.get(state, HARD_STATE);
            return v == null ? HardState.EMPTY : Codec.decodeHardState(v);
        } catch (Codec.BadRecordException e) {
            throw new CorruptLogException(-1, dataDir, "hard state (term and vote): " + e.getMessage());
        } catch (RocksDBException e) {
            throw failure(dataDir, "cannot read the hard state", e);
        }
    }

    private Entry readEntry(long index) throws RocksDBException {
        byte[] v = db.get(entries, Codec.key(index));
        if (v == null) {
            throw new CorruptLogException(index, dataDir, "log entry: missing");
        }
        try {
            return Codec.decodeEntry(index, v);
        } catch (Codec.BadRecordException e) {
            throw new CorruptLogException(index, dataDir, "log entry: " + e.getMessage());
        }
    }

    /** RocksDB's own block checksums found damage: as fail-stop as ours. Anything else is an I/O failure. */
    private static StorageException failure(Path dataDir, String what, RocksDBException e) {
        Status s = e.getStatus();
        if (s != null && s.getCode() == Status.Code.Corruption) {
            return new CorruptLogException(-1, dataDir, what + ": RocksDB reports corruption (" + e.getMessage() + ")");
        }
        return new StorageException(what + " in " + dataDir + ": " + e.getMessage(), e);
    }
}
