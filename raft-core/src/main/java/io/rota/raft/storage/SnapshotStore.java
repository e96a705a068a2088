package io.rota.raft.storage;

import io.rota.raft.core.Snapshot;
import io.rota.raft.core.SnapshotMetadata;

import java.io.IOException;
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

/**
 * Snapshot files (§7) in one directory, named {@code snapshot-<index>-<term>.snap}.
 *
 * <p>A file is written to a temporary name, forced to disk, renamed atomically and the directory forced,
 * so a crash leaves either the whole new file or none of it. Its layout is
 * {@code magic (4) | version (1) | metadata | data length (4) | data | crc32c of all before (4)}, with the
 * metadata as in {@link Codec}; the checksum is verified on every read. Version 2 (issue 13) added the
 * configuration's learners to the metadata; version 1 files are still read, as configurations without
 * learners. The newest {@value #KEEP} files are kept, older ones pruned — except the one the log refers to
 * ({@link #protect}), which is never pruned.
 *
 * <p>Two threads may save at once: the driver's snapshot thread writes a local snapshot while the driver
 * thread writes one received from the leader. Their files have different names (a leader's snapshot is
 * newer than anything this member applied), and pruning is serialised. Between the two, up to two files
 * newer than the log's own may exist for a moment; protecting the referenced file keeps a crash in that
 * moment from leaving the log pointing at a pruned file.
 *
 * <p>The whole image is one {@code byte[]} here. Streaming it to followers in bounded chunks (§7's
 * InstallSnapshot "offset"/"done") is not done yet; when it is, reads should become a channel over the file.
 */
public final class SnapshotStore {

    /** Files kept: the current snapshot and the one before it. */
    static final int KEEP = 2;
    private static final int MAGIC = 0x524F5441; // "ROTA"
    private static final byte VERSION = 2;
    /** Files written before learners existed: the metadata ends after the voters. */
    private static final byte VERSION_WITHOUT_LEARNERS = 1;
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

    /** Writes the snapshot durably, then prunes all but the newest {@value #KEEP} files. */
    public Path save(SnapshotMetadata metadata, byte[] data) {
        ByteBuffer b = ByteBuffer.allocate(4 + 1 + Codec.metadataBytes(metadata) + 4 + data.length + 4);
        b.putInt(MAGIC).put(VERSION);
        Codec.putMetadata(b, metadata);
        b.putInt(data.length).put(data);
        b.putInt(Codec.crc(b.array(), b.position()));
        b.flip();

        Path file = dir.resolve(name(metadata.lastIncludedIndex(), metadata.lastIncludedTerm()));
        Path tmp = dir.resolve(file.getFileName() + TMP_SUFFIX);
        try {
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING)) {
                while (b.hasRemaining()) {
                    ch.write(b);
                }
                ch.force(true);
            }
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            forceDirectory();
            prune();
        } catch (IOException e) {
            throw new StorageException("cannot write snapshot " + file, e);
        }
        return file;
    }

    /** Whether the file of the snapshot named by {@code metadata} exists (whole: files appear by rename). */
    public boolean contains(SnapshotMetadata metadata) {
        return Files.exists(dir.resolve(name(metadata.lastIncludedIndex(), metadata.lastIncludedTerm())));
    }

    /** The log now refers to the snapshot named by {@code metadata} (null: to none): never prune its file. */
    public void protect(SnapshotMetadata metadata) {
        referenced = metadata == null ? null : name(metadata.lastIncludedIndex(), metadata.lastIncludedTerm());
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
     * The newest snapshot, checksum-verified.
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

    private static Snapshot read(Path file) {
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
        } catch (IOException e) {
            throw new StorageException("cannot read snapshot " + file, e);
        }
        if (bytes.length < 4 + 1 + 4 + 4) {
            throw new CorruptSnapshotException(file, "truncated (" + bytes.length + " bytes)");
        }
        int stored = ByteBuffer.wrap(bytes, bytes.length - 4, 4).getInt();
        if (stored != Codec.crc(bytes, bytes.length - 4)) {
            throw new CorruptSnapshotException(file, "checksum mismatch");
        }
        ByteBuffer b = ByteBuffer.wrap(bytes, 0, bytes.length - 4);
        int magic = b.getInt();
        byte version = b.get();
        if (magic != MAGIC || (version != VERSION && version != VERSION_WITHOUT_LEARNERS)) {
            throw new CorruptSnapshotException(file, "not a version " + VERSION_WITHOUT_LEARNERS + " or "
                    + VERSION + " snapshot file");
        }
        try {
            SnapshotMetadata metadata = Codec.getMetadata(b, version == VERSION);
            int length = b.getInt();
            if (length != b.remaining()) {
                throw new CorruptSnapshotException(file, "data length " + length + " but " + b.remaining()
                        + " bytes follow");
            }
            byte[] data = new byte[length];
            b.get(data);
            if (!file.getFileName().toString().equals(name(metadata.lastIncludedIndex(),
                    metadata.lastIncludedTerm()))) {
                throw new CorruptSnapshotException(file, "holds the snapshot at "
                        + metadata.lastIncludedIndex() + "@" + metadata.lastIncludedTerm());
            }
            return new Snapshot(metadata, data);
        } catch (Codec.BadRecordException | java.nio.BufferUnderflowException e) {
            throw new CorruptSnapshotException(file, e.getMessage());
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

    /** Makes the rename itself durable: on Linux a rename is only persistent once the directory is synced. */
    private void forceDirectory() throws IOException {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        }
    }
}
