package io.rota.raft.transport;

/**
 * Counters of one peer, for status pages and tests. Monotonic except {@code queued}.
 *
 * @param sent         core messages written to the peer's connection
 * @param dropped      messages dropped: queue full, or a frame larger than the maximum
 * @param received     core messages delivered to the inbound sink
 * @param queued       messages waiting in the per-peer queue right now
 * @param connections  handshaken connections established with the peer (either side dialled)
 * @param dialAttempts connection attempts this node made (only the lower id dials)
 * @param rejected     frames from the peer that made no valid message: a message type this version does not
 *                     know (skipped; is the peer newer?) or a malformed or oversized frame (the connection
 *                     was closed); see {@link InvalidFrameException}
 * @param snapshotTransfers snapshot transfers started to the peer (each streams one snapshot from offset 0)
 * @param snapshotTransfersAbandoned transfers given up unfinished for another snapshot (only a new term does)
 */
public record PeerStats(long sent, long dropped, long received, long queued, long connections, long dialAttempts,
                        long rejected, long snapshotTransfers, long snapshotTransfersAbandoned) {

    /** Connections established after the first one. */
    public long reconnects() {
        return Math.max(0, connections - 1);
    }
}
