package io.rota.raft.storage;

import io.rota.raft.core.Entry;
import io.rota.raft.core.HardState;
import io.rota.raft.core.PersistentState;
import io.rota.raft.core.Ready;
import io.rota.raft.core.Snapshot;
import io.rota.raft.core.SnapshotBytes;
import io.rota.raft.core.SnapshotData;
import io.rota.raft.core.SnapshotMetadata;

import java.io.ByteArrayOutputStream;
import java.io.IOException;

import java.util.ArrayList;
import java.util.List;

/**
 * A {@link LogStore} in memory, with exactly the semantics of the durable one: for tests of other
 * components, and as the model the RocksDB store is checked against. "Durable" here means: survives
 * {@link #close()}; a new {@link #load()} sees everything persisted.
 */
public final class MemoryLogStore implements LogStore {

    private HardState hardState = HardState.EMPTY;
    private Snapshot snapshot;
    private long compactedIndex;
    private long compactedTerm;
    private final List<Entry> entries = new ArrayList<>();

    /** An empty store, as on a brand-new node. */
    public MemoryLogStore() {
    }

    /** A store that already holds {@code state}, e.g. a disk prepared by a test. */
    public MemoryLogStore(PersistentState state) {
        hardState = state.hardState();
        snapshot = state.snapshot();
        compactedIndex = state.compactedIndex();
        compactedTerm = state.compactedTerm();
        entries.addAll(state.entries());
    }

    @Override
    public PersistentState load() {
        return new PersistentState(hardState, snapshot, compactedIndex, compactedTerm, entries);
    }

    @Override
    public void persist(Ready ready) {
        if (ready.snapshot() != null) {
            LogStores.checkNewer(ready.snapshot(), snapshot);
        }
        if (!ready.entries().isEmpty()) {
            long first = ready.entries().get(0).index();
            long base = ready.snapshot() != null ? ready.snapshot().index() : compactedIndex;
            long last = ready.snapshot() != null ? base : compactedIndex + entries.size();
            LogStores.checkAppend(first, base, last);
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
     * The image, in memory: it becomes part of this "disk" when {@link #compact} records it, and a crash
     * before that loses it — as a crash before the durable store's record would orphan its file.
     */
    @Override
    public SnapshotData saveSnapshot(SnapshotMetadata metadata, SnapshotStore.ImageWriter image) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            image.writeTo(out);
        } catch (IOException e) {
            throw new StorageException("cannot write the image of snapshot " + metadata.lastIncludedIndex(), e);
        }
        return new SnapshotBytes(out.toByteArray());
    }

    @Override
    public void compact(Snapshot latest, long newFirstIndex) {
        LogStores.checkCompact(latest, newFirstIndex, snapshot, compactedIndex, compactedIndex + entries.size());
        snapshot = latest;
        int drop = (int) (newFirstIndex - 1 - compactedIndex);
        if (drop > 0) {
            compactedTerm = entries.get(drop - 1).term();
            entries.subList(0, drop).clear();
            compactedIndex += drop;
        }
    }

    @Override
    public void close() {
        // Nothing to release: the state outlives close() so that a test can "restart" from it.
    }
}
