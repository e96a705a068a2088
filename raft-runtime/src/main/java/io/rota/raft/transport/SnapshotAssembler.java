package io.rota.raft.transport;

import io.rota.proto.InstallSnapshot;
import io.rota.raft.core.Message;
import io.rota.raft.core.Snapshot;
import io.rota.raft.core.SnapshotMetadata;
import io.rota.raft.storage.SnapshotFile;
import io.rota.raft.storage.SnapshotStore;
import io.rota.raft.storage.StorageException;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Writes the InstallSnapshot chunks of one connection into a snapshot file (§7, Figure 13: "create new
 * snapshot file if first chunk (offset is 0)", "write data into snapshot file at given offset", "reply and
 * wait for more data chunks if done is false"), and hands the core the finished file — forced to disk and
 * renamed into the snapshot directory — only with the last chunk. Memory: one chunk and the file writer's
 * buffer, whatever the snapshot's size.
 *
 * <p>One assembler per connection, so one sender; at most one snapshot is in assembly. Chunks must come in
 * order, which TCP gives us: a gap or a chunk of another snapshot means something was lost, and the partial
 * file is deleted (the leader will send it again). So is a partial file whose connection closes
 * ({@link #discard()}). Before the first byte, the disk must have room for the whole image plus
 * {@link #DISK_RESERVE_BYTES}. Not thread-safe: used on the connection's event loop only.
 */
final class SnapshotAssembler {

    /** Free space left beside a received snapshot: room for the log and the store to go on (64 MiB). */
    static final long DISK_RESERVE_BYTES = 64L << 20;

    /** What became of a chunk. */
    sealed interface Outcome {
    }

    /** The chunk was taken; more are expected. */
    record Pending() implements Outcome {
    }

    /** The last chunk arrived: here is the whole snapshot, durable in its file, for the core. */
    record Complete(Message.InstallSnapshot message) implements Outcome {
    }

    /** The chunk was refused and any partial snapshot discarded. */
    record Rejected(String reason) implements Outcome {
    }

    /** Identifies one snapshot transfer. */
    private record Key(long from, long term, long lastIncludedIndex) {
        static Key of(InstallSnapshot chunk) {
            return new Key(chunk.getFrom(), chunk.getTerm(), chunk.getMetadata().getLastIncludedIndex());
        }

        @Override
        public String toString() {
            return "snapshot " + lastIncludedIndex + " from node " + from + " in term " + term;
        }
    }

    private final Path dir;
    private final long maxSnapshotBytes;

    // The transfer in progress, or null.
    private Key current;
    private SnapshotMetadata metadata;
    private SnapshotStore.Writer writer;
    private long receivedBytes;

    /** Writes received snapshots into {@code dir}, the node's snapshot directory. */
    SnapshotAssembler(Path dir, long maxSnapshotBytes) {
        this.dir = dir;
        this.maxSnapshotBytes = maxSnapshotBytes;
    }

    /**
     * Takes the next chunk.
     *
     * @throws IllegalArgumentException if the chunk's metadata is invalid (a malformed frame)
     */
    Outcome accept(InstallSnapshot chunk) {
        Key key = Key.of(chunk);
        if (chunk.getOffset() == 0) {
            discard();
            SnapshotMetadata m = MessageCodec.fromProto(chunk.getMetadata());
            String refusal = roomFor(key, chunk.getTotalBytes());
            if (refusal != null) {
                return new Rejected(refusal);
            }
            try {
                writer = SnapshotStore.writer(dir, m);
            } catch (StorageException e) {
                return new Rejected(key + ": " + e.getMessage());
            }
            current = key;
            metadata = m;
        } else if (!key.equals(current) || chunk.getOffset() != receivedBytes) {
            String expected = current == null ? "offset 0 of a new snapshot"
                    : "offset " + receivedBytes + " of " + current;
            discard();
            return new Rejected("expected " + expected + ", received offset " + chunk.getOffset() + " of " + key);
        }
        if (receivedBytes + chunk.getData().size() > maxSnapshotBytes) {
            discard();
            return new Rejected(key + " exceeds the maximum snapshot size of " + maxSnapshotBytes + " bytes");
        }
        try {
            chunk.getData().writeTo(writer.data());
            receivedBytes += chunk.getData().size();
            if (!chunk.getDone()) {
                return new Pending();
            }
            if (chunk.getTotalBytes() != 0 && chunk.getTotalBytes() != receivedBytes) {
                discard();
                return new Rejected(key + " ended after " + receivedBytes + " of its " + chunk.getTotalBytes()
                        + " bytes");
            }
            // Durable before the core sees it: the follower acknowledges only a snapshot a crash keeps.
            SnapshotFile file = writer.commit();
            Message.InstallSnapshot whole = new Message.InstallSnapshot(chunk.getTerm(), chunk.getFrom(),
                    chunk.getTo(), new Snapshot(metadata, file));
            writer = null;
            discard();
            return new Complete(whole);
        } catch (IOException | StorageException e) {
            discard();
            return new Rejected(key + ": cannot write it to " + dir + ": " + e);
        }
    }

    /** Null if the disk has room for {@code totalBytes} and the reserve; else why not. */
    private String roomFor(Key key, long totalBytes) {
        if (totalBytes > maxSnapshotBytes) {
            return key + " of " + totalBytes + " bytes exceeds the maximum snapshot size of " + maxSnapshotBytes
                    + " bytes";
        }
        try {
            Files.createDirectories(dir);
            long usable = Files.getFileStore(dir).getUsableSpace();
            if (usable < totalBytes + DISK_RESERVE_BYTES) {
                return key + " needs " + totalBytes + " bytes (and " + DISK_RESERVE_BYTES + " to spare) but "
                        + dir + " has " + usable + " usable; free disk space on this member";
            }
            return null;
        } catch (IOException e) {
            return key + ": cannot check the free space of " + dir + ": " + e;
        }
    }

    /** Drops any partial snapshot and deletes its file (a new one started, or the connection closed). */
    void discard() {
        if (writer != null) {
            try {
                writer.close();
            } catch (StorageException ignored) {
                // The temporary file's name ends in .tmp: the store deletes it when it next opens.
            }
        }
        writer = null;
        current = null;
        metadata = null;
        receivedBytes = 0;
    }

    /** True while a snapshot is partially received. */
    boolean inProgress() {
        return current != null;
    }
}
