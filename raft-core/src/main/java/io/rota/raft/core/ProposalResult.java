package io.rota.raft.core;

/** Answer of {@link RaftNode#propose}: where the entries went, or why they were not accepted. */
public sealed interface ProposalResult {

    /**
     * The entries were appended at {@code firstIndex..lastIndex} in {@code term}. They are committed
     * when an applied entry at that index carries the same term; if another term shows up there, a
     * newer leader overwrote them and they were not committed.
     */
    record Accepted(long term, long firstIndex, long lastIndex) implements ProposalResult {
    }

    /** Nothing was appended. */
    record Rejected(Reason reason, long leaderHint) implements ProposalResult {
    }

    /** Why a proposal was rejected. */
    enum Reason {
        /** Only the leader appends (§5.3); {@code leaderHint} names it when known. */
        NOT_LEADER,
        /** A leadership transfer is in progress; the leader stops taking requests (§3.10). */
        TRANSFERRING_LEADERSHIP,
        /** The uncommitted tail is at its byte limit; the caller should back off. */
        TOO_MUCH_UNCOMMITTED
    }
}
