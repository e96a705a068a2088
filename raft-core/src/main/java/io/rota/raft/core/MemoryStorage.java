package io.rota.raft.core;

import java.util.ArrayList;
import java.util.List;

/**
 * A node's durable state in memory — hard state, latest snapshot, compaction point and the entries after it —
 * written exactly as a {@link Ready}'s persist step asks, as etcd's raft package ships its {@code MemoryStorage}
 * beside the algorithm. The core's own tests and the simulator use it as a node's "disk"; the runtime's
 * {@code MemoryLogStore} wraps it, and its RocksDB store is checked against it. "Durable" here means: a new
 * {@link #load()} sees everything persisted, so a test can "restart" a node from it.
 *
 * <p>Misuse (a gap, an overwrite of compacted entries, an older snapshot) is refused with the same
 * {@link IllegalArgumentException}s as the durable store's, by {@link StorageRules}.
 */
public final class MemoryStorage {

    private HardState hardState = HardState.EMPTY;
    private Snapshot snapshot;
    private long compactedIndex;
    private long compactedTerm;
    private final List<Entry> entries = new ArrayList<>();

    /** An empty store, as on a brand-new node. */
    public MemoryStorage() {
    }

    /** A store that already holds {@code state}, e.g. a disk prepared by a test. */
    public MemoryStorage(PersistentState state) {
        hardState = state.hardState();
        snapshot = state.snapshot();
        compactedIndex = state.compactedIndex();
        compactedTerm = state.compactedTerm();
        entries.addAll(state.entries());
    }

    /** What is "on disk", for {@link RaftNode}'s constructor. */
    public PersistentState load() {
        return new PersistentState(hardState, snapshot, compactedIndex, compactedTerm, entries);
    }

    /**
     * The persist step of the {@link Ready} contract: the snapshot if present (which discards the whole log),
     * then the entries, which replace every stored entry from {@code entries().get(0).index()} on, then the
     * hard state if present.
     *
     * @throws IllegalArgumentException if the entries would leave a gap or overwrite compacted entries, or
     *                                  the snapshot is older than the stored one
     */
    public void persist(Ready ready) {
        if (ready.snapshot() != null) {
            StorageRules.checkNewer(ready.snapshot(), snapshot);
        }
        if (!ready.entries().isEmpty()) {
            long first = ready.entries().get(0).index();
            long base = ready.snapshot() != null ? ready.snapshot().index() : compactedIndex;
            long last = ready.snapshot() != null ? base : compactedIndex + entries.size();
            StorageRules.checkAppend(first, base, last);
        }
        if (ready.snapshot() != null) {
            // A snapshot from the leader replaces the whole log (§7, Figure 13 rules 7-8).
            snapshot = ready.snapshot();
            entries.clear();
            compactedIndex = snapshot.index();
            compactedTerm = snapshot.term();
        }
        if (!ready.entries().isEmpty()) {
            long first = ready.entries().get(0).index();
            entries.subList((int) (first - compactedIndex - 1), entries.size()).clear();
            entries.addAll(ready.entries());
        }
        if (ready.hardState() != null) {
            hardState = ready.hardState();
        }
    }

    /**
     * Records {@code latest}, taken locally by {@link RaftNode#compact}, then drops the entries below
     * {@code newFirstIndex} (the value {@code compact} returned).
     *
     * @throws IllegalArgumentException if {@code newFirstIndex - 1} is beyond the snapshot or the log, or
     *                                  the snapshot is older than the stored one
     */
    public void compact(Snapshot latest, long newFirstIndex) {
        StorageRules.checkCompact(latest, newFirstIndex, snapshot, compactedIndex, compactedIndex + entries.size());
        snapshot = latest;
        int drop = (int) (newFirstIndex - 1 - compactedIndex);
        if (drop > 0) {
            compactedTerm = entries.get(drop - 1).term();
            entries.subList(0, drop).clear();
            compactedIndex += drop;
        }
    }
}
