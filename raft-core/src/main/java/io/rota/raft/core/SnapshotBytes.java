package io.rota.raft.core;

import java.util.Objects;

/**
 * A snapshot image held in memory: for the in-memory store, the simulator and tests, where images are
 * small. Real members keep images in files ({@code io.rota.raft.storage.SnapshotFile}).
 *
 * @param bytes the image; never modified after construction
 */
public record SnapshotBytes(byte[] bytes) implements SnapshotData {

    public SnapshotBytes {
        Objects.requireNonNull(bytes, "bytes");
    }

    @Override
    public long size() {
        return bytes.length;
    }

    @Override
    public String toString() {
        return bytes.length + "B in memory";
    }
}
