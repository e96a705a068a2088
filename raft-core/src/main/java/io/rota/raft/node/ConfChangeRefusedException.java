package io.rota.raft.node;

import io.rota.raft.core.ConfChange;
import io.rota.raft.core.ConfChangeResult;

import java.util.Objects;

/**
 * The leader refused a membership change ({@link RaftDriver#changeMembership}); {@link #reason()} says why,
 * and so whether to retry: {@code CHANGE_IN_PROGRESS}, {@code NOT_YET_COMMITTED_IN_TERM},
 * {@code TRANSFERRING_LEADERSHIP} and {@code LEARNER_BEHIND} pass with time; the others need a different
 * request. A refusal because this node does not lead is a {@link RaftException} NOT_LEADER instead, as for
 * writes, so that callers route both the same way.
 */
public final class ConfChangeRefusedException extends RuntimeException {

    private final ConfChangeResult.Reason reason;

    public ConfChangeRefusedException(ConfChange change, ConfChangeResult.Reason reason) {
        super(change.type().name().toLowerCase().replace('_', ' ') + " " + change.node() + " refused: "
                + explain(reason), null, false, false);
        this.reason = Objects.requireNonNull(reason, "reason");
    }

    public ConfChangeResult.Reason reason() {
        return reason;
    }

    /** Whether the same request may succeed later without anything else changing. */
    public boolean retryable() {
        return switch (reason) {
            case CHANGE_IN_PROGRESS, NOT_YET_COMMITTED_IN_TERM, TRANSFERRING_LEADERSHIP, LEARNER_BEHIND, NOT_LEADER -> true;
            case ALREADY_MEMBER, NOT_A_MEMBER, NOT_A_LEARNER, LAST_VOTER -> false;
        };
    }

    private static String explain(ConfChangeResult.Reason reason) {
        return switch (reason) {
            case NOT_LEADER -> "this node is not the leader";
            case TRANSFERRING_LEADERSHIP -> "leadership is being transferred; retry in a moment";
            case NOT_YET_COMMITTED_IN_TERM -> "the new leader has not yet committed an entry of its term; retry in a moment";
            case CHANGE_IN_PROGRESS -> "an earlier membership change is not committed yet; one change at a time";
            case ALREADY_MEMBER -> "the server is already a voter or a learner";
            case NOT_A_MEMBER -> "the server is neither a voter nor a learner";
            case NOT_A_LEARNER -> "only a learner can be promoted";
            case LEARNER_BEHIND -> "the learner is more than " + ConfChange.PROMOTION_MAX_LAG_ENTRIES
                    + " entries behind the leader; retry once it has caught up";
            case LAST_VOTER -> "a cluster needs at least one voter";
        };
    }
}
