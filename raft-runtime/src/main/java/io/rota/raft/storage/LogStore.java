package io.rota.raft.storage;

import io.rota.raft.core.PersistentState;
import io.rota.raft.core.Ready;
import io.rota.raft.core.Snapshot;
import io.rota.raft.core.SnapshotData;
import io.rota.raft.core.SnapshotMetadata;

/**
 * Stable storage of one Raft node: the port the runtime's driver loop writes each {@link Ready} through.
 *
 * <p>Figure 2 requires the persistent state to be "updated on stable storage before responding to
 * RPCs"; {@link #persist} is that update, and it returns only once the write is durable. Implementations
 * are used by one thread (the driver) and need not be thread-safe.
 */
public interface LogStore extends AutoCloseable {

    /**
     * What is on disk, for {@link io.rota.raft.core.RaftNode}'s constructor: the hard state, the latest
     * snapshot, the compaction point and the contiguous entries after it.
     *
     * @throws CorruptLogException      if data that may have been acknowledged is damaged (fail-stop)
     * @throws CorruptSnapshotException if the snapshot file is damaged (fail-stop)
     */
    PersistentState load();

    /**
     * The persist step of the {@link Ready} contract, durably and atomically (one fsync): the snapshot if
     * present (which discards the whole log), then the entries, which replace every stored entry from
     * {@code entries().get(0).index()} on, then the hard state if present. A crash leaves either all of
     * it or none of it. It returns once durable if {@link Ready#mustSync()}; a Ready that only moves the
     * commit index may be written without waiting for the disk (it is still ordered after earlier writes).
     *
     * @throws IllegalArgumentException if the entries would leave a gap or overwrite compacted entries, or
     *                                  the snapshot is older than the stored one
     */
    void persist(Ready ready);

    /**
     * Writes the image of a snapshot this node took itself, durably, as {@code image} streams it, without
     * referring to it yet: until {@link #compact} records it, a restart ignores it (and may delete it).
     * Unlike every other method it is called on the driver's snapshot thread, possibly while the driver
     * thread is inside {@link #persist} or {@link #compact}; it touches nothing of theirs but the snapshot
     * files, whose writes are safe against each other (see {@link SnapshotStore}).
     *
     * @return the image as the core should hold it: a reference to the file (or, in memory, the bytes)
     */
    SnapshotData saveSnapshot(SnapshotMetadata metadata, SnapshotStore.ImageWriter image);

    /**
     * Records {@code snapshot}, taken locally by {@link io.rota.raft.core.RaftNode#compact}, then drops the
     * entries below {@code newFirstIndex} (the value {@code compact} returned) — in that order, so that a
     * crash never leaves a compacted log without the snapshot that replaces it (§7). The image is written
     * here unless {@link #saveSnapshot} already wrote it.
     *
     * @throws IllegalArgumentException if {@code newFirstIndex - 1} is beyond the snapshot or the log, or
     *                                  the snapshot is older than the stored one
     */
    void compact(Snapshot snapshot, long newFirstIndex);

    /** Releases files and native resources. Everything persisted is already durable. */
    @Override
    void close();
}
