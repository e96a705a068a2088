package io.rota.raft.core;

import java.util.Objects;

/**
 * A state-machine image at {@link SnapshotMetadata#lastIncludedIndex()} (§7).
 *
 * @param metadata the log prefix the image replaces
 * @param data     the image, opaque to the core; the runtime may keep the bytes in a file and put only a
 *                 reference here. Never modified after construction.
 */
public record Snapshot(SnapshotMetadata metadata, byte[] data) {

    public Snapshot {
        Objects.requireNonNull(metadata, "metadata");
        Objects.requireNonNull(data, "data");
    }

    public long index() {
        return metadata.lastIncludedIndex();
    }

    public long term() {
        return metadata.lastIncludedTerm();
    }

    @Override
    public String toString() {
        return "Snapshot{" + index() + "@" + term() + ", " + data.length + "B}";
    }
}
