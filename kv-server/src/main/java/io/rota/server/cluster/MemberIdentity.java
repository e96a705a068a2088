package io.rota.server.cluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Optional;
import java.util.Properties;
import java.util.stream.Stream;

/**
 * Who a data directory belongs to (issue 13): the cluster id, the member id and whether the member has
 * joined — its own publication has been applied from its log, so it has taken part in the cluster and may
 * have voted and acknowledged entries. Kept in {@value #FILE}, written whole and fsync'd (temp file, fsync,
 * atomic rename, fsync of the directory), so it is either the old or the new one after a crash.
 *
 * <p>What it is for: a member that starts with no file in an empty directory is <em>fresh</em> and says so
 * in every peer handshake; the others refuse a fresh member under an id they know as joined or removed
 * (see {@code PeerAdmission}), since an empty log under a known id forgets the member's votes and the
 * entries it acknowledged. A directory whose file names another cluster or member is refused at start.
 *
 * @param clusterId the cluster's id (--cluster-id)
 * @param memberId  this member's id
 * @param joined    whether the member has joined (its publication applied from its own log)
 */
public record MemberIdentity(String clusterId, long memberId, boolean joined) {

    /** The file's name in the data directory. */
    public static final String FILE = "member.identity";

    /**
     * The identity stored in {@code dataDir}, if any.
     *
     * @throws MemberRefusedException if the file is damaged
     */
    public static Optional<MemberIdentity> read(Path dataDir) {
        Path file = dataDir.resolve(FILE);
        if (!Files.exists(file)) {
            return Optional.empty();
        }
        Properties p = new Properties();
        try (var in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            p.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
        try {
            return Optional.of(new MemberIdentity(p.getProperty("cluster-id", ""),
                    Long.parseLong(p.getProperty("member-id", "0")), Boolean.parseBoolean(p.getProperty("joined"))));
        } catch (NumberFormatException e) {
            throw new MemberRefusedException(file + " is damaged (member-id is not a number); it identifies this data"
                    + " directory's member and must not be edited", e);
        }
    }

    /** Whether {@code dataDir} holds anything but this file (a log, a snapshot): an older member's directory. */
    public static boolean hasData(Path dataDir) {
        if (!Files.isDirectory(dataDir)) {
            return false;
        }
        try (Stream<Path> entries = Files.list(dataDir)) {
            return entries.anyMatch(p -> !p.getFileName().toString().startsWith(FILE));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + dataDir, e);
        }
    }

    /** Store this identity in {@code dataDir}, durably. */
    public void write(Path dataDir) {
        try {
            Files.createDirectories(dataDir);
            Path tmp = dataDir.resolve(FILE + ".tmp");
            String text = "# Rota member identity: do not edit or copy to another member (docs/operations.md)\n"
                    + "cluster-id=" + clusterId + "\nmember-id=" + memberId + "\njoined=" + joined + "\n";
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING)) {
                ch.write(java.nio.ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8)));
                ch.force(true);
            }
            Files.move(tmp, dataDir.resolve(FILE), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            try (FileChannel dir = FileChannel.open(dataDir, StandardOpenOption.READ)) {
                dir.force(true);
            } catch (IOException ignored) {
                // Some platforms cannot open a directory for fsync; the rename is still atomic.
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + dataDir.resolve(FILE), e);
        }
    }

    /**
     * The identity of {@code dataDir} for this start: the stored one (checked against {@code clusterId} and
     * {@code memberId}), or a new one — joined if the directory already holds a log (written by a version
     * before this file existed), fresh if it is empty.
     *
     * @throws MemberRefusedException if the directory belongs to another cluster or member, or its identity
     *                                 file is damaged
     */
    public static MemberIdentity open(Path dataDir, String clusterId, long memberId) {
        Optional<MemberIdentity> stored = read(dataDir);
        if (stored.isPresent()) {
            MemberIdentity s = stored.get();
            if (!s.clusterId().equals(clusterId) || s.memberId() != memberId) {
                throw new MemberRefusedException("data dir " + dataDir + " belongs to member " + s.memberId()
                        + " of cluster '" + s.clusterId() + "', not to member " + memberId + " of cluster '" + clusterId
                        + "': check --data-dir, --name, --initial-cluster and --cluster-id (a data dir is never moved"
                        + " to another member; see docs/operations.md)");
            }
            return s;
        }
        MemberIdentity created = new MemberIdentity(clusterId, memberId, hasData(dataDir));
        created.write(dataDir);
        return created;
    }
}
