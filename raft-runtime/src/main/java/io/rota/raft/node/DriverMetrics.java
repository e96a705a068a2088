package io.rota.raft.node;

import io.rota.raft.core.Role;

/**
 * What the driver thread reports about its own work, for a server's /metrics. Called on the driver
 * thread, so an implementation must be cheap and must not block (counters, not I/O). It lives here, in
 * the runtime, so the pure core ({@code io.rota.raft.core}) never learns that anyone is measuring it.
 */
public interface DriverMetrics {

    /** Measures nothing: for tests and embedders that do not export metrics. */
    DriverMetrics NONE = new DriverMetrics() {
    };

    /** A {@code LogStore.persist} that had to be durable (an fsync) took {@code nanos}. */
    default void synced(long nanos) {
    }

    /** {@code entries} committed entries were applied to the state machine. */
    default void applied(int entries) {
    }

    /** A snapshot was taken, made durable, and the log compacted to it. */
    default void snapshotted() {
    }

    /**
     * The node's role, term, known leader or vote changed (and once at start): for a timeline of elections.
     * Seen once per Ready (its soft and hard state), so a role that comes and goes within one driver turn
     * is seen only by its outcome.
     *
     * @param votedFor the candidate this node voted for in {@code term} (§5.2), or {@code RaftNode.NONE}
     */
    default void roleChanged(Role role, long term, long leaderId, long votedFor) {
    }
}
