package io.rota.server.backup;

import com.google.protobuf.InvalidProtocolBufferException;
import io.rota.proto.SnapshotFile;
import io.rota.proto.SnapshotInfo;
import io.rota.proto.StoreSnapshot;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * A backup file, read and checked: it parses as a {@link SnapshotFile}, the image's SHA-256 is the one the
 * member recorded, and the image's revision and applied entry are those of the header. The SDK's
 * {@code Maintenance.verify} makes the same checks for {@code rotactl snapshot status}; the server cannot use
 * it (kv-server does not depend on the client), and the format itself is the generated proto code.
 *
 * @param info  the header
 * @param image the state-machine image it checked
 */
public record BackupFile(SnapshotInfo info, StoreSnapshot image) {

    /** A file that is not a valid backup; the message says what is wrong with it. */
    public static final class InvalidBackupException extends Exception {
        private static final long serialVersionUID = 1L;

        InvalidBackupException(Path file, String why) {
            super(file + " is not a valid backup: " + why);
        }
    }

    /**
     * Reads and checks {@code file}.
     *
     * @throws InvalidBackupException what is wrong with it (damaged, truncated, not a backup)
     * @throws IOException            if it cannot be read
     */
    public static BackupFile read(Path file) throws IOException, InvalidBackupException {
        SnapshotFile parsed;
        try (InputStream in = Files.newInputStream(file)) {
            parsed = SnapshotFile.parseFrom(in);
        } catch (InvalidProtocolBufferException e) {
            throw new InvalidBackupException(file, "it does not parse (" + e.getMessage() + "): truncated, or not"
                    + " written by 'rotactl snapshot save'");
        }
        SnapshotInfo info = parsed.getInfo();
        if (!parsed.hasInfo() || info.getImageBytes() != parsed.getImage().size()) {
            throw new InvalidBackupException(file, "its image is " + parsed.getImage().size() + " bytes, its header"
                    + " says " + info.getImageBytes() + ": truncated, or not written by 'rotactl snapshot save'");
        }
        byte[] sha;
        try {
            sha = MessageDigest.getInstance("SHA-256").digest(parsed.getImage().toByteArray());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
        if (!MessageDigest.isEqual(sha, info.getImageSha256().toByteArray())) {
            throw new InvalidBackupException(file, "the image's SHA-256 differs from the one recorded when it was"
                    + " taken: the file is damaged; use another backup");
        }
        StoreSnapshot image;
        try {
            image = StoreSnapshot.parseFrom(parsed.getImage());
        } catch (InvalidProtocolBufferException e) {
            throw new InvalidBackupException(file, "the image does not parse (" + e.getMessage() + ")");
        }
        if (image.getRevision() != info.getRevision() || image.getAppliedIndex() != info.getAppliedIndex()
                || image.getAppliedTerm() != info.getAppliedTerm()) {
            throw new InvalidBackupException(file, "the header (revision " + info.getRevision() + ", entry "
                    + info.getAppliedIndex() + ") does not match the image (revision " + image.getRevision()
                    + ", entry " + image.getAppliedIndex() + ")");
        }
        return new BackupFile(info, image);
    }
}
