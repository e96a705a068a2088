package io.rota.raft.transport;

import com.google.protobuf.ByteString;
import io.rota.proto.InstallSnapshot;
import io.rota.raft.core.Message;
import io.rota.raft.core.Snapshot;
import io.rota.raft.core.SnapshotMetadata;

import java.util.ArrayList;
import java.util.List;

/**
 * Reassembles the InstallSnapshot chunks of one connection into the whole snapshot the core expects
 * (§7: "create new snapshot file if first chunk (offset is 0)", "write data into snapshot file at given
 * offset", "reply and wait for more data chunks if done is false").
 *
 * <p>One assembler per connection, so one sender; at most one snapshot is in assembly. Chunks must come in
 * order, which TCP gives us: a gap or a chunk of another snapshot means something was lost, and the partial
 * snapshot is discarded (the leader will send it again). Memory is bounded by {@code maxSnapshotBytes}.
 * Not thread-safe: used on the connection's event loop only.
 */
final class SnapshotAssembler {

    /** What became of a chunk. */
    sealed interface Outcome {
    }

    /** The chunk was taken; more are expected. */
    record Pending() implements Outcome {
    }

    /** The last chunk arrived: here is the whole snapshot for the core. */
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

    private final long maxSnapshotBytes;

    // The transfer in progress, or null.
    private Key current;
    private SnapshotMetadata metadata;
    private final List<ByteString> chunks = new ArrayList<>();
    private long receivedBytes;

    SnapshotAssembler(long maxSnapshotBytes) {
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
            current = key;
            metadata = MessageCodec.fromProto(chunk.getMetadata());
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
        chunks.add(chunk.getData());
        receivedBytes += chunk.getData().size();
        if (!chunk.getDone()) {
            return new Pending();
        }
        byte[] data = ByteString.copyFrom(chunks).toByteArray();
        Message.InstallSnapshot whole = new Message.InstallSnapshot(chunk.getTerm(), chunk.getFrom(), chunk.getTo(),
                new Snapshot(metadata, data));
        discard();
        return new Complete(whole);
    }

    /** Drops any partial snapshot (a new one started, or the connection closed). */
    void discard() {
        current = null;
        metadata = null;
        chunks.clear();
        receivedBytes = 0;
    }

    /** True while a snapshot is partially received. */
    boolean inProgress() {
        return current != null;
    }
}
