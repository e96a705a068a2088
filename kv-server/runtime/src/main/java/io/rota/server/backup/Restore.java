package io.rota.server.backup;

import io.rota.proto.StoreSnapshot;
import io.rota.raft.core.Configuration;
import io.rota.raft.core.HardState;
import io.rota.raft.core.RaftNode;
import io.rota.raft.core.Ready;
import io.rota.raft.core.Snapshot;
import io.rota.raft.core.SnapshotMetadata;
import io.rota.raft.storage.RocksDbLogStore;
import io.rota.raft.storage.StorageConfig;
import io.rota.server.cluster.MemberIdentity;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Builds one member's data directory of a NEW cluster from a backup (etcdutl's {@code snapshot restore}):
 * the log starts from a Raft snapshot holding the backup's state, at the backup's applied entry, with the
 * configuration given (every member of {@code --initial-cluster} a voter), and the member's identity file
 * names the new cluster id. Run it once per member, with the same file, cluster list and cluster id; the
 * members then start with {@code rota server} as a new cluster that has the backup's keys and revision.
 *
 * <p>What the image keeps and drops (docs/design.md O2):
 * <ul>
 *   <li>keys, revision, history and compact revision, and the log clock: kept as they are;</li>
 *   <li>leases: kept, each with its full TTL from the restore on (etcd's policy: the time a lease had left
 *       when the backup was taken is no promise after an outage of unknown length, and expiring it at once
 *       would delete its keys before the holder can reconnect);</li>
 *   <li>published members and the member registry: dropped — they are the old cluster's addresses; the new
 *       members publish theirs when they start;</li>
 *   <li>client sessions: dropped — their clients re-register (the SDK does on SESSION_EXPIRED);</li>
 *   <li>alarms: dropped — a restored cluster still over its quota is armed again by its leader.</li>
 * </ul>
 */
public final class Restore {

    private Restore() {
    }

    /**
     * The image as the new cluster starts from it (see the class comment).
     *
     * @param voters the new cluster's member ids
     */
    static StoreSnapshot forNewCluster(StoreSnapshot image, Set<Long> voters) {
        StoreSnapshot.Builder out = image.toBuilder().clearMembers().clearRegistry().clearSessions().clearAlarms()
                .setNextMemberId(voters.stream().mapToLong(Long::longValue).max().orElse(0) + 1)
                .clearLeases();
        for (StoreSnapshot.LeaseImage lease : image.getLeasesList()) {
            out.addLeases(lease.toBuilder().setRemainingMs(lease.getTTL() * 1000));
        }
        return out.build();
    }

    /**
     * Writes {@code dataDir} for member {@code memberId} of cluster {@code clusterId}.
     *
     * @param voters           the new cluster's member ids (all of --initial-cluster)
     * @param bootstrapCluster --initial-cluster as {@code NAME=ID@HOST:PORT,...}, recorded in the identity as
     *                         a bootstrap member's is (docs/design.md MF4): a later start that names other
     *                         members is refused
     * @return the Raft snapshot the log starts from
     * @throws IllegalStateException if {@code dataDir} exists and is not empty (never overwrite a member's data)
     */
    public static Snapshot write(BackupFile backup, Path dataDir, String clusterId, long memberId, Set<Long> voters,
                                 String bootstrapCluster) {
        if (Files.exists(dataDir) && !empty(dataDir)) {
            throw new IllegalStateException("--data-dir " + dataDir + " is not empty: a restore builds a new member's"
                    + " directory and never overwrites one; give a new or empty directory");
        }
        StoreSnapshot image = forNewCluster(backup.image(), voters);
        // Where the new log starts: the backup's applied entry (at least entry 1 at term 1, as a snapshot must).
        long index = Math.max(1, image.getAppliedIndex());
        long term = Math.max(1, image.getAppliedTerm());
        Snapshot snapshot = new Snapshot(new SnapshotMetadata(index, term, new Configuration(voters)),
                image.toByteArray());
        // The identity first: "joined", since this member's log is not empty and it has a place in the cluster.
        new MemberIdentity(clusterId, memberId, true, bootstrapCluster, 0).write(dataDir);
        try (RocksDbLogStore store = RocksDbLogStore.open(StorageConfig.defaults(dataDir))) {
            store.persist(new Ready(null, new HardState(term, RaftNode.NONE, index), snapshot, List.of(), List.of(),
                    List.of(), List.of(), List.of(), true, List.of()));
        }
        return snapshot;
    }

    private static boolean empty(Path dir) {
        try (Stream<Path> entries = Files.list(dir)) {
            return entries.findAny().isEmpty();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + dir, e);
        }
    }
}
