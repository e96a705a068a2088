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
 * <p>A member that bootstrapped a new cluster also records the {@code --initial-cluster} it bootstrapped
 * with (issue 32, docs/design.md MF4), so a later start whose {@code --initial-cluster} names other members
 * or ids is refused with a message that says the data dir wins: the configuration is in the log now.
 *
 * @param clusterId      the cluster's id (--cluster-id)
 * @param memberId       this member's id
 * @param joined         whether the member has joined (its publication applied from its own log)
 * @param initialCluster the {@code --initial-cluster} this member bootstrapped with, as
 *                       {@code NAME=ID@HOST:PORT,...} in id order; empty if not recorded (a joining member,
 *                       or a file written before issue 32)
 * @param forcedAt       the index of the configuration entry {@code --force-new-cluster} appended to this data
 *                       dir's log, or 0 if it never did (docs/design.md MF10)
 */
public record MemberIdentity(String clusterId, long memberId, boolean joined, String initialCluster, long forcedAt) {

    /** The file's name in the data directory. */
    public static final String FILE = "member.identity";

    public MemberIdentity {
        initialCluster = initialCluster == null ? "" : initialCluster;
    }

    /** An identity with no bootstrap recorded. */
    public MemberIdentity(String clusterId, long memberId, boolean joined) {
        this(clusterId, memberId, joined, "", 0);
    }

    /** This identity, joined. */
    public MemberIdentity asJoined() {
        return new MemberIdentity(clusterId, memberId, true, initialCluster, forcedAt);
    }

    /** This identity, forced into a cluster of one by the configuration entry at {@code index}. */
    public MemberIdentity forcedAt(long index) {
        return new MemberIdentity(clusterId, memberId, joined, initialCluster, index);
    }

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
                    Long.parseLong(p.getProperty("member-id", "0")), Boolean.parseBoolean(p.getProperty("joined")),
                    p.getProperty("initial-cluster", ""), Long.parseLong(p.getProperty("forced-new-cluster-at", "0"))));
        } catch (NumberFormatException e) {
            throw new MemberRefusedException(file + " is damaged (member-id or forced-new-cluster-at is not a number); it"
                    + " identifies this data directory's member and must not be edited", e);
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
                    + "cluster-id=" + clusterId + "\nmember-id=" + memberId + "\njoined=" + joined + "\n"
                    + (initialCluster.isEmpty() ? "" : "initial-cluster=" + initialCluster + "\n")
                    + (forcedAt == 0 ? "" : "forced-new-cluster-at=" + forcedAt + "\n");
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
     * {@code memberId}, and — when this start bootstraps, {@code bootstrapCluster} not null — against the
     * recorded {@code --initial-cluster}), or a new one — joined if the directory already holds a log
     * (written by a version before this file existed), fresh if it is empty.
     *
     * <p>What "disagrees" means for {@code --initial-cluster}: a bootstrap member left out, or given another
     * id. Members added since may be appended (with the ids {@code member add} gave them: a script that
     * lists every member keeps working), and peer addresses may differ: after {@code rotactl member update}
     * the member's own entry names its new address, and the replicated registry, not the flag, is where the
     * members dial each other. A file without a recorded bootstrap (older, or a joining member's) is not
     * checked; it records this one.
     *
     * @param bootstrapCluster this start's {@code --initial-cluster} as {@code NAME=ID@HOST:PORT,...} when it
     *                         bootstraps a new cluster ({@code --initial-cluster-state new}), null when joining
     * @throws MemberRefusedException if the directory belongs to another cluster or member, was bootstrapped
     *                                 with another {@code --initial-cluster}, or its identity file is damaged
     */
    public static MemberIdentity open(Path dataDir, String clusterId, long memberId, String bootstrapCluster) {
        Optional<MemberIdentity> stored = read(dataDir);
        if (stored.isPresent()) {
            MemberIdentity s = stored.get();
            if (!s.clusterId().equals(clusterId) || s.memberId() != memberId) {
                throw new MemberRefusedException("data dir " + dataDir + " belongs to member " + s.memberId()
                        + " of cluster '" + s.clusterId() + "', not to member " + memberId + " of cluster '" + clusterId
                        + "': check --data-dir, --name, --initial-cluster and --cluster-id (a data dir is never moved"
                        + " to another member; see docs/operations.md)");
            }
            if (bootstrapCluster == null) {
                return s;
            }
            if (s.initialCluster().isEmpty()) {
                MemberIdentity recorded = new MemberIdentity(s.clusterId(), memberId, s.joined(), bootstrapCluster,
                        s.forcedAt());
                recorded.write(dataDir);
                return recorded;
            }
            if (!membersById(bootstrapCluster).entrySet().containsAll(membersById(s.initialCluster()).entrySet())) {
                throw new MemberRefusedException("the data dir " + dataDir + " was bootstrapped as member " + memberId
                        + " of {" + s.initialCluster() + "}; --initial-cluster now says {" + bootstrapCluster + "}. The"
                        + " data dir wins: membership changes after bootstrap are made with `rotactl member add/remove`,"
                        + " not by editing --initial-cluster. Start with the original --initial-cluster (members added"
                        + " since may be appended, with their ids), or with an empty data dir to join afresh (rotactl member add, then --initial-cluster-state existing;"
                        + " docs/operations.md, \"I changed --initial-cluster\")");
            }
            return s;
        }
        MemberIdentity created = new MemberIdentity(clusterId, memberId, hasData(dataDir), bootstrapCluster, 0);
        created.write(dataDir);
        return created;
    }

    /** Member name → id of a recorded {@code NAME=ID@HOST:PORT,...}: what must agree (addresses may move). */
    private static java.util.Map<String, String> membersById(String cluster) {
        java.util.Map<String, String> out = new java.util.TreeMap<>();
        for (String member : cluster.split(",")) {
            int eq = member.indexOf('=');
            int at = member.indexOf('@', eq);
            out.put(member.substring(0, eq), member.substring(eq + 1, at < 0 ? member.length() : at));
        }
        return out;
    }
}
