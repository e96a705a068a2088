package io.rota.client;

import io.rota.proto.SnapshotInfo;

import java.util.HexFormat;
import java.util.List;

/**
 * What a backup file holds (the {@code SnapshotInfo} at its head), as {@link Maintenance#snapshot} wrote it or
 * {@link Maintenance#verify} checked it.
 *
 * @param revision      the store revision of the image
 * @param appliedIndex  the Raft entry the image is as of
 * @param appliedTerm   that entry's term
 * @param clusterId     the cluster it was taken from
 * @param memberId      the member that produced it
 * @param keys          live keys in the image
 * @param leases        live leases in the image
 * @param imageBytes    size of the state-machine image
 * @param sha256        SHA-256 of the image, lowercase hex
 * @param voters        voter ids of the configuration when it was taken
 * @param createdUnixMs the member's wall clock when it took the image (for humans)
 * @param version       the member's server version
 */
public record SnapshotSummary(long revision, long appliedIndex, long appliedTerm, String clusterId, long memberId,
                              long keys, long leases, long imageBytes, String sha256, List<Long> voters,
                              long createdUnixMs, String version) {

    public SnapshotSummary {
        voters = List.copyOf(voters);
    }

    static SnapshotSummary of(SnapshotInfo info) {
        return new SnapshotSummary(info.getRevision(), info.getAppliedIndex(), info.getAppliedTerm(),
                info.getClusterId(), info.getMemberId(), info.getKeyCount(), info.getLeaseCount(),
                info.getImageBytes(), HexFormat.of().formatHex(info.getImageSha256().toByteArray()),
                info.getVotersList(), info.getCreatedUnixMs(), info.getVersion());
    }
}
