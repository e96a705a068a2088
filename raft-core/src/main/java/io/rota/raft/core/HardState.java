package io.rota.raft.core;

/**
 * The state a server must write to stable storage before it answers any RPC (Figure 2, "Persistent
 * state on all servers"), plus the commit index so a restart need not re-learn it.
 *
 * @param currentTerm latest term this server has seen; increases monotonically
 * @param votedFor    candidate that received this server's vote in {@code currentTerm}, or
 *                    {@link RaftNode#NONE}
 * @param commitIndex highest log index known to be committed; persisted only as an optimisation
 *                    (Figure 2 lists it as volatile), never ahead of the durable log
 */
public record HardState(long currentTerm, long votedFor, long commitIndex) {

    public static final HardState EMPTY = new HardState(0, RaftNode.NONE, 0);

    public HardState {
        if (currentTerm < 0 || commitIndex < 0) {
            throw new IllegalArgumentException("negative term or commit index: " + currentTerm + ", " + commitIndex);
        }
    }
}
