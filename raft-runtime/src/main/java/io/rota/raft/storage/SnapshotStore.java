package io.rota.raft.storage;

import io.rota.raft.core.Snapshot;
import io.rota.raft.core.SnapshotData;
import io.rota.raft.core.SnapshotMetadata;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.CRC32C;

/**
 * Snapshot files (§7) in one directory, named {@code snapshot-<index>-<term>.snap}.
 *
 * <p>A file is written as a stream to a temporary name ({@link Writer}), forced to disk, renamed atomically
 * and the directory forced, so a crash leaves either the whole new file or none of it. Nothing holds a whole
 * image in memory: the state machine writes its image into {@link Writer#data()}, a follower writes the
 * leader's InstallSnapshot chunks into one, and readers get a {@link SnapshotFile} — a reference to the
 * image inside the file — and stream it.
 *
 * <p>Layout (version 3): {@code magic (4) | version (1) | metadata | image | image length (8) | crc32c of
 * all before (4)}, with the metadata as in {@link Codec}. The length and checksum trail the image because a
 * stream's length is known only at its end. Versions 1 and 2 put a 4-byte length before the image
 * ({@code ... | metadata | length (4) | image | crc32c}); they are still read, so data directories from
 * before keep starting (version 1's metadata has no learners). The checksum is verified, by streaming the
 * file once, whenever {@link #latest()} finds a file. The newest {@value #KEEP} files are kept, older ones
 * pruned — except the one the log refers to ({@link #protect}), which is never pruned.
 *
 * <p>Several threads may write at once: the driver's snapshot thread writes a local snapshot while a
 * connection's event loop writes one received from the leader. Temporary names are unique, final names
 * differ (a leader's snapshot is newer than anything this member applied, and two files of one index and
 * term hold the same state), and pruning is serialised. Files newer than the log's own may exist for a
 * moment; protecting the referenced file keeps a crash in that moment from leaving the log pointing at a
 * pruned file, and {@link #discardNewerThan} removes them at the next start.
 */
public final class SnapshotStore {

    /** Files kept: the current snapshot and the one before it. */
    static final int KEEP = 2;
    private static final int MAGIC = 0x524F5441; // "ROTA"
    /** Streamed files: the image length and checksum at the end. */
    private static final byte VERSION = 3;
    /** Files written whole, before images were streamed: a 4-byte length before the image. */
    private static final byte VERSION_WITH_LEARNERS = 2;
    /** Files written before learners existed: the metadata ends after the voters. */
    private static final byte VERSION_WITHOUT_LEARNERS = 1;
    /** Bytes after the image in a version 3 file: its length and the checksum. */
    private static final int TRAILER_BYTES = 8 + 4;
    /** Largest header read: the metadata of a configuration of a few thousand members fits. */
    private static final int MAX_HEADER_BYTES = 1 << 16;
    private static final int IO_BUFFER_BYTES = 1 << 20;
    private static final Pattern NAME = Pattern.compile("snapshot-(\\d{20})-(\\d{20})\\.snap");
    private static final String TMP_SUFFIX = ".tmp";

    private final Path dir;
    /** File name of the snapshot the log refers to, or null: never pruned. */
    private volatile String referenced;

    /** Opens (creating if missing) {@code dir}, removing temporary files a crash left behind. */
    public SnapshotStore(Path dir) {
        this.dir = dir;
        try {
            Files.createDirectories(dir);
            try (DirectoryStream<Path> tmps = Files.newDirectoryStream(dir, "*" + TMP_SUFFIX)) {
                for (Path tmp : tmps) {
                    Files.delete(tmp);
                }
            }
        } catch (IOException e) {
            throw new StorageException("cannot open snapshot directory " + dir, e);
        }
    }

    /** The directory the files are in. */
    public Path directory() {
        return dir;
    }

    /**
     * Starts writing the snapshot named by {@code metadata} into {@code dir} (a store's {@link #directory()}):
     * write the image into {@link Writer#data()}, then {@link Writer#commit()}. Nothing is pruned; the store
     * prunes when it {@link #save}s the file. Used by a follower receiving a snapshot, off the driver thread.
     */
    public static Writer writer(Path dir, SnapshotMetadata metadata) {
        return new Writer(dir, metadata);
    }

    /** Writes a snapshot durably from a stream, then prunes all but the newest {@value #KEEP} files. */
    public SnapshotFile save(SnapshotMetadata metadata, ImageWriter image) {
        try (Writer w = new Writer(dir, metadata)) {
            image.writeTo(w.data());
            SnapshotFile file = w.commit();
            prune();
            return file;
        } catch (IOException e) {
            throw new StorageException("cannot write snapshot " + name(metadata), e);
        }
    }

    /**
     * Makes {@code data} this store's file of the snapshot named by {@code metadata}: a file a {@link Writer}
     * already committed into this directory is taken as it is (it is durable); anything else is copied.
     */
    public SnapshotFile save(SnapshotMetadata metadata, SnapshotData data) {
        if (data instanceof SnapshotFile file && file.path().equals(dir.resolve(name(metadata)))) {
            try {
                prune();
            } catch (IOException e) {
                throw new StorageException("cannot prune snapshot directory " + dir, e);
            }
            return file;
        }
        return save(metadata, out -> {
            try (InputStream in = SnapshotFile.open(data)) {
                in.transferTo(out);
            }
        });
    }

    /** Whether the file of the snapshot named by {@code metadata} exists (whole: files appear by rename). */
    public boolean contains(SnapshotMetadata metadata) {
        return Files.exists(dir.resolve(name(metadata)));
    }

    /** The log now refers to the snapshot named by {@code metadata} (null: to none): never prune its file. */
    public void protect(SnapshotMetadata metadata) {
        referenced = metadata == null ? null : name(metadata);
    }

    private synchronized void prune() throws IOException {
        List<Path> files = files();
        for (Path old : files.subList(Math.min(KEEP, files.size()), files.size())) {
            if (!old.getFileName().toString().equals(referenced)) {
                Files.deleteIfExists(old);
            }
        }
    }

    /**
     * The newest snapshot, checksum-verified; its data is a {@link SnapshotFile}.
     *
     * @throws CorruptSnapshotException if its file is damaged
     */
    public Optional<Snapshot> latest() {
        List<Path> files = files();
        return files.isEmpty() ? Optional.empty() : Optional.of(read(files.get(0)));
    }

    /**
     * Deletes snapshots newer than {@code index}: files written just before a crash whose log record
     * never became durable, so that {@link #latest()} is the snapshot the log refers to.
     */
    void discardNewerThan(long index) {
        try {
            for (Path f : files()) {
                if (indexOf(f) > index) {
                    Files.delete(f);
                }
            }
        } catch (IOException e) {
            throw new StorageException("cannot clean snapshot directory " + dir, e);
        }
    }

    static String name(long index, long term) {
        return String.format("snapshot-%020d-%020d.snap", index, term);
    }

    private static String name(SnapshotMetadata m) {
        return name(m.lastIncludedIndex(), m.lastIncludedTerm());
    }

    /** Verifies the checksum by streaming the file once, then parses the header; the image stays on disk. */
    static Snapshot read(Path file) {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = ch.size();
            if (size < 4 + 1 + 4 + 4) {
                throw new CorruptSnapshotException(file, "truncated (" + size + " bytes)");
            }
            ByteBuffer buf = ByteBuffer.allocate((int) Math.min(IO_BUFFER_BYTES, size));
            CRC32C crc = new CRC32C();
            ByteBuffer head = null;
            for (long pos = 0; pos < size - 4; ) {
                buf.clear().limit((int) Math.min(buf.capacity(), size - 4 - pos));
                while (buf.hasRemaining()) {
                    if (ch.read(buf, pos + buf.position()) < 0) {
                        throw new CorruptSnapshotException(file, "shrank while being read");
                    }
                }
                buf.flip();
                if (head == null) {
                    head = ByteBuffer.allocate(Math.min(MAX_HEADER_BYTES, buf.remaining()));
                    head.put(buf.duplicate().limit(head.capacity())).flip();
                }
                crc.update(buf);
                pos += buf.limit();
            }
            ByteBuffer stored = ByteBuffer.allocate(4);
            ch.read(stored, size - 4);
            if (stored.flip().getInt() != (int) crc.getValue()) {
                throw new CorruptSnapshotException(file, "checksum mismatch");
            }
            return parse(file, head, ch, size);
        } catch (IOException e) {
            throw new StorageException("cannot read snapshot " + file, e);
        }
    }

    private static Snapshot parse(Path file, ByteBuffer head, FileChannel ch, long size) throws IOException {
        int magic = head.getInt();
        byte version = head.get();
        if (magic != MAGIC || version < VERSION_WITHOUT_LEARNERS || version > VERSION) {
            throw new CorruptSnapshotException(file, "not a version " + VERSION_WITHOUT_LEARNERS + " to "
                    + VERSION + " snapshot file");
        }
        try {
            SnapshotMetadata metadata = Codec.getMetadata(head, version != VERSION_WITHOUT_LEARNERS);
            long offset;
            long length;
            if (version == VERSION) {
                offset = head.position();
                length = size - TRAILER_BYTES - offset;
                ByteBuffer stored = ByteBuffer.allocate(8);
                ch.read(stored, size - TRAILER_BYTES);
                long recorded = stored.flip().getLong();
                if (length < 0 || recorded != length) {
                    throw new CorruptSnapshotException(file, "image length " + recorded + " but " + length
                            + " bytes in the file");
                }
            } else {
                length = head.getInt();
                offset = head.position();
                if (length != size - 4 - offset) {
                    throw new CorruptSnapshotException(file, "data length " + length + " but "
                            + (size - 4 - offset) + " bytes follow");
                }
            }
            if (!file.getFileName().toString().equals(name(metadata))) {
                throw new CorruptSnapshotException(file, "holds the snapshot at "
                        + metadata.lastIncludedIndex() + "@" + metadata.lastIncludedTerm());
            }
            return new Snapshot(metadata, new SnapshotFile(file, offset, length));
        } catch (Codec.BadRecordException | java.nio.BufferUnderflowException e) {
            throw new CorruptSnapshotException(file, String.valueOf(e.getMessage()));
        }
    }

    /** Snapshot files, newest (highest index, then term) first. */
    private List<Path> files() {
        List<Path> files = new ArrayList<>();
        try (DirectoryStream<Path> all = Files.newDirectoryStream(dir)) {
            for (Path f : all) {
                if (NAME.matcher(f.getFileName().toString()).matches()) {
                    files.add(f);
                }
            }
        } catch (IOException e) {
            throw new StorageException("cannot list snapshot directory " + dir, e);
        }
        // Zero-padded names sort like (index, term).
        files.sort(Comparator.comparing((Path f) -> f.getFileName().toString()).reversed());
        return files;
    }

    private static long indexOf(Path file) {
        Matcher m = NAME.matcher(file.getFileName().toString());
        if (!m.matches()) {
            throw new IllegalArgumentException("not a snapshot file: " + file);
        }
        return Long.parseLong(m.group(1));
    }

    /** Makes a rename durable: on Linux a rename is only persistent once the directory is synced. */
    private static void forceDirectory(Path dir) throws IOException {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        }
    }

    /** Writes a state machine's image to a stream (the stream is not closed by it). */
    @FunctionalInterface
    public interface ImageWriter {
        void writeTo(OutputStream out) throws IOException;
    }

    /**
     * One snapshot file being written: the header at once, the image as it comes, and at {@link #commit()}
     * the trailer, fsync, rename and directory fsync. Closing an uncommitted writer deletes its temporary
     * file (a transfer abandoned half-way leaves nothing behind). One thread at a time.
     */
    public static final class Writer implements AutoCloseable {

        private final Path dir;
        private final Path file;
        private final Path tmp;
        private final FileChannel ch;
        private final CRC32C crc = new CRC32C();
        private final ByteBuffer buffer = ByteBuffer.allocate(IO_BUFFER_BYTES);
        private long offset;
        private long imageBytes;
        private boolean open = true;
        private final OutputStream data = new OutputStream() {
            @Override
            public void write(int b) throws IOException {
                write(new byte[] {(byte) b}, 0, 1);
            }

            @Override
            public void write(byte[] b, int off, int len) throws IOException {
                put(b, off, len);
                imageBytes += len;
            }
        };

        private Writer(Path dir, SnapshotMetadata metadata) {
            this.dir = dir;
            this.file = dir.resolve(name(metadata));
            try {
                this.tmp = Files.createTempFile(dir, file.getFileName().toString() + ".", TMP_SUFFIX);
                this.ch = FileChannel.open(tmp, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING);
                ByteBuffer header = ByteBuffer.allocate(4 + 1 + Codec.metadataBytes(metadata));
                header.putInt(MAGIC).put(VERSION);
                Codec.putMetadata(header, metadata);
                put(header.array(), 0, header.position());
                offset = header.position();
            } catch (IOException e) {
                throw new StorageException("cannot create a snapshot file in " + dir, e);
            }
        }

        /** Where the image goes; buffered, so write in any sizes. Not to be closed. */
        public OutputStream data() {
            return data;
        }

        /** Image bytes written so far. */
        public long imageBytes() {
            return imageBytes;
        }

        private void put(byte[] b, int off, int len) throws IOException {
            if (!open) {
                throw new IOException("snapshot file " + file + " is already committed or abandoned");
            }
            crc.update(b, off, len);
            while (len > 0) {
                int n = Math.min(len, buffer.remaining());
                buffer.put(b, off, n);
                off += n;
                len -= n;
                if (!buffer.hasRemaining()) {
                    flushBuffer();
                }
            }
        }

        private void flushBuffer() throws IOException {
            buffer.flip();
            while (buffer.hasRemaining()) {
                ch.write(buffer);
            }
            buffer.clear();
        }

        /** Writes the trailer, forces the file, renames it into place and forces the directory. */
        public SnapshotFile commit() throws IOException {
            ByteBuffer length = ByteBuffer.allocate(8).putLong(imageBytes);
            put(length.array(), 0, 8);
            ByteBuffer sum = ByteBuffer.allocate(4).putInt((int) crc.getValue());
            put(sum.array(), 0, 4);
            flushBuffer();
            ch.force(true);
            ch.close();
            open = false;
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            forceDirectory(dir);
            return new SnapshotFile(file, offset, imageBytes);
        }

        /** Abandons an uncommitted file: closes and deletes it. */
        @Override
        public void close() {
            if (!open) {
                return;
            }
            open = false;
            try {
                ch.close();
                Files.deleteIfExists(tmp);
            } catch (IOException e) {
                throw new StorageException("cannot delete the abandoned snapshot file " + tmp, e);
            }
        }
    }
}
