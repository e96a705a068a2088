package io.rota.raft.storage;

import io.rota.raft.core.SnapshotBytes;
import io.rota.raft.core.SnapshotData;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Objects;

/**
 * A snapshot image that lives in a {@link SnapshotStore} file: the bytes {@code [offset, offset + size)} of
 * {@code path}. This is what the core holds as a {@link io.rota.raft.core.Snapshot}'s data, so that no
 * member ever has a whole image in memory: the state machine restores from {@link #open()}, and the
 * transport sends it in chunks read with {@link #read}.
 *
 * @param path   the snapshot file (checksum-verified when the store found or wrote it)
 * @param offset where the image starts, after the file's header
 * @param size   the image's length
 */
public record SnapshotFile(Path path, long offset, long size) implements SnapshotData {

    /** Read buffer of {@link #open()}: big enough that a restore makes few system calls. */
    private static final int BUFFER_BYTES = 1 << 16;

    public SnapshotFile {
        Objects.requireNonNull(path, "path");
        if (offset < 0 || size < 0) {
            throw new IllegalArgumentException("offset " + offset + " and size " + size + " must not be negative");
        }
    }

    /** A stream of the image, for the state machine's restore. The caller closes it. */
    public InputStream open() throws IOException {
        FileChannel ch = FileChannel.open(path, StandardOpenOption.READ);
        return new InputStream() {
            private final ByteBuffer buffer = ByteBuffer.allocate(BUFFER_BYTES).flip();
            private long position = offset;
            private final long end = offset + size;

            @Override
            public int read() throws IOException {
                return fill() ? buffer.get() & 0xff : -1;
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                if (len == 0) {
                    return 0;
                }
                if (!fill()) {
                    return -1;
                }
                int n = Math.min(len, buffer.remaining());
                buffer.get(b, off, n);
                return n;
            }

            private boolean fill() throws IOException {
                if (buffer.hasRemaining()) {
                    return true;
                }
                if (position >= end) {
                    return false;
                }
                buffer.clear().limit((int) Math.min(BUFFER_BYTES, end - position));
                while (buffer.hasRemaining()) {
                    int n = ch.read(buffer, position + buffer.position());
                    if (n < 0) {
                        throw new IOException(path + " ends before its image does (" + size + " bytes at " + offset + ")");
                    }
                }
                position += buffer.flip().remaining();
                return true;
            }

            @Override
            public void close() throws IOException {
                ch.close();
            }
        };
    }

    /**
     * Reads up to {@code length} image bytes from {@code imageOffset} into a new array: one InstallSnapshot
     * chunk (§7, Figure 13 "offset" and "data").
     */
    public byte[] read(FileChannel ch, long imageOffset, int length) throws IOException {
        int n = (int) Math.min(length, size - imageOffset);
        ByteBuffer b = ByteBuffer.allocate(n);
        while (b.hasRemaining()) {
            if (ch.read(b, offset + imageOffset + b.position()) < 0) {
                throw new IOException(path + " ends before its image does (" + size + " bytes at " + offset + ")");
            }
        }
        return b.array();
    }

    /** A stream of any snapshot image, in a file or in memory. The caller closes it. */
    public static InputStream open(SnapshotData data) throws IOException {
        if (data instanceof SnapshotFile file) {
            return file.open();
        }
        if (data instanceof SnapshotBytes bytes) {
            return new ByteArrayInputStream(bytes.bytes());
        }
        throw new IllegalArgumentException("unknown snapshot data " + data.getClass().getName());
    }

    @Override
    public String toString() {
        return size + "B in " + path.getFileName();
    }
}
