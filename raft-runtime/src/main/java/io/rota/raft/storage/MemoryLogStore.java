package io.rota.raft.storage;

import io.rota.raft.core.MemoryStorage;
import io.rota.raft.core.PersistentState;
import io.rota.raft.core.Ready;
import io.rota.raft.core.Snapshot;
import io.rota.raft.core.SnapshotBytes;
import io.rota.raft.core.SnapshotData;
import io.rota.raft.core.SnapshotMetadata;

import java.io.ByteArrayOutputStream;
import java.io.IOException;

/**
 * A {@link LogStore} in memory, with exactly the semantics of the durable one: for tests of other
 * components, and as the model the RocksDB store is checked against. "Durable" here means: survives
 * {@link #close()}; a new {@link #load()} sees everything persisted. The state and its rules are the core's
 * {@link MemoryStorage}; this port adds only the image writer, {@link #saveSnapshot}.
 */
public final class MemoryLogStore implements LogStore {

    private final MemoryStorage storage;

    /** An empty store, as on a brand-new node. */
    public MemoryLogStore() {
        storage = new MemoryStorage();
    }

    /** A store that already holds {@code state}, e.g. a disk prepared by a test. */
    public MemoryLogStore(PersistentState state) {
        storage = new MemoryStorage(state);
    }

    @Override
    public PersistentState load() {
        return storage.load();
    }

    @Override
    public void persist(Ready ready) {
        storage.persist(ready);
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
        storage.compact(latest, newFirstIndex);
    }

    @Override
    public void close() {
        // Nothing to release: the state outlives close() so that a test can "restart" from it.
    }
}
