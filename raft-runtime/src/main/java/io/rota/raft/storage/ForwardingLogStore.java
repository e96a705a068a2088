package io.rota.raft.storage;

import io.rota.raft.core.PersistentState;
import io.rota.raft.core.Ready;
import io.rota.raft.core.Snapshot;
import io.rota.raft.core.SnapshotData;
import io.rota.raft.core.SnapshotMetadata;

import java.util.Objects;

/**
 * A {@link LogStore} that passes every call to another: extend it and override only what you watch or change
 * (the server's freshness tracking, a test that holds a persist).
 */
public abstract class ForwardingLogStore implements LogStore {

    /** The store every call goes to. */
    protected final LogStore inner;

    protected ForwardingLogStore(LogStore inner) {
        this.inner = Objects.requireNonNull(inner, "inner");
    }

    @Override
    public PersistentState load() {
        return inner.load();
    }

    @Override
    public void persist(Ready ready) {
        inner.persist(ready);
    }

    @Override
    public SnapshotData saveSnapshot(SnapshotMetadata metadata, SnapshotStore.ImageWriter image) {
        return inner.saveSnapshot(metadata, image);
    }

    @Override
    public void compact(Snapshot snapshot, long newFirstIndex) {
        inner.compact(snapshot, newFirstIndex);
    }

    @Override
    public void close() {
        inner.close();
    }
}
