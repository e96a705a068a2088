package io.rota.raft.storage;

import java.nio.file.Path;

/**
 * A snapshot file failed its checksum or is malformed. The log before the snapshot is gone (§7), so the
 * state it covers can only come from a peer.
 */
public class CorruptSnapshotException extends StorageException {

    public CorruptSnapshotException(Path file, String what) {
        super("snapshot file " + file + " is corrupt: " + what
                + "; restore this node's data directory from a healthy peer");
    }
}
