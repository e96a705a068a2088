package io.rota.raft.core;

import java.util.Objects;

/**
 * A state-machine image at {@link SnapshotMetadata#lastIncludedIndex()} (§7).
 *
 * @param metadata the log prefix the image replaces
 * @param data     the image, opaque to the core: a reference to a file, or bytes in memory
 *                 ({@link SnapshotData}); the core never reads it
 */
public record Snapshot(SnapshotMetadata metadata, SnapshotData data) {

    public Snapshot {
        Objects.requireNonNull(metadata, "metadata");
        Objects.requireNonNull(data, "data");
    }

    /** A snapshot whose image is in memory (tests, the in-memory store). */
    public Snapshot(SnapshotMetadata metadata, byte[] data) {
        this(metadata, new SnapshotBytes(data));
    }

    public long index() {
        return metadata.lastIncludedIndex();
    }

    public long term() {
        return metadata.lastIncludedTerm();
    }

    @Override
    public String toString() {
        return "Snapshot{" + index() + "@" + term() + ", " + data.size() + "B}";
    }
}
