package io.rota.raft.transport;

import com.google.protobuf.UnsafeByteOperations;
import io.rota.proto.InstallSnapshot;
import io.rota.proto.RaftMessage;
import io.rota.raft.core.Message;
import io.rota.raft.core.SnapshotBytes;
import io.rota.raft.core.SnapshotData;
import io.rota.raft.storage.SnapshotFile;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import java.util.Iterator;
import java.util.NoSuchElementException;

/**
 * One InstallSnapshot transfer on the sending side (§7, Figure 13: "offset", "data", "done"): the frames of
 * a snapshot, each read from the snapshot file only when the connection asks for it, so the sender holds at
 * most one chunk in memory beyond what the connection's write buffer holds. The file is opened at once —
 * an open file stays readable even if the store prunes it meanwhile — and closed at the last chunk or by
 * {@link #close()}. An empty image is one chunk. Not thread-safe: one connection's event loop uses it.
 */
final class SnapshotChunks implements Iterator<RaftMessage>, AutoCloseable {

    private final Message.InstallSnapshot message;
    private final io.rota.proto.SnapshotMetadata metadata;
    private final SnapshotData data;
    private final int chunkBytes;
    private final FileChannel channel;
    private long offset;
    private boolean finished;

    /**
     * @throws UncheckedIOException if the snapshot file cannot be opened
     */
    SnapshotChunks(Message.InstallSnapshot message, int chunkBytes) {
        if (chunkBytes <= 0) {
            throw new IllegalArgumentException("chunkBytes must be positive, got " + chunkBytes);
        }
        this.message = message;
        this.metadata = MessageCodec.toProto(message.snapshot().metadata());
        this.data = message.snapshot().data();
        this.chunkBytes = chunkBytes;
        try {
            this.channel = data instanceof SnapshotFile file ? FileChannel.open(file.path(), StandardOpenOption.READ)
                    : null;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open " + data + " to send it", e);
        }
    }

    /** Whether {@code other} goes to the same peer in the same term: from the same leader (§5.2). */
    boolean sameTerm(Message.InstallSnapshot other) {
        return other.to() == message.to() && other.term() == message.term();
    }

    /** The message this transfer sends. */
    Message.InstallSnapshot message() {
        return message;
    }

    /** Image bytes handed to the connection so far. */
    long offset() {
        return offset;
    }

    @Override
    public boolean hasNext() {
        return !finished;
    }

    /**
     * The next chunk, read now.
     *
     * @throws UncheckedIOException if the file cannot be read (the transfer is then over: close it)
     */
    @Override
    public RaftMessage next() {
        if (finished) {
            throw new NoSuchElementException();
        }
        long size = data.size();
        int length = (int) Math.min(chunkBytes, size - offset);
        boolean done = offset + length == size;
        InstallSnapshot chunk = InstallSnapshot.newBuilder()
                .setTerm(message.term()).setFrom(message.from()).setTo(message.to())
                .setMetadata(metadata)
                .setOffset(offset)
                .setTotalBytes(size)
                .setData(UnsafeByteOperations.unsafeWrap(read(length)))
                .setDone(done)
                .build();
        offset += length;
        if (done) {
            close();
        }
        return RaftMessage.newBuilder().setInstallSnapshot(chunk).build();
    }

    private byte[] read(int length) {
        if (data instanceof SnapshotBytes bytes) {
            byte[] b = new byte[length];
            System.arraycopy(bytes.bytes(), (int) offset, b, 0, length);
            return b;
        }
        try {
            return ((SnapshotFile) data).read(channel, offset, length);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + data + " at " + offset, e);
        }
    }

    /** Ends the transfer (finished or abandoned) and closes the file. */
    @Override
    public void close() {
        finished = true;
        if (channel != null) {
            try {
                channel.close();
            } catch (IOException ignored) {
                // Read-only: nothing is lost with a failed close.
            }
        }
    }
}
