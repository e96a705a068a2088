package io.rota.raft.core;

/**
 * The image of a {@link Snapshot}, opaque to the core (§7: the core only forwards it): the runtime keeps the
 * bytes in a file and puts a reference here ({@code io.rota.raft.storage.SnapshotFile}); tests and the
 * in-memory store hold them in memory ({@link SnapshotBytes}). The core never reads the bytes, so it needs
 * no I/O to handle an image of any size.
 */
public interface SnapshotData {

    /** The image's length in bytes. */
    long size();
}
