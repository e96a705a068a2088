package io.rota.raft.node;

import io.rota.raft.core.ConfChange;
import io.rota.raft.core.ConfChangeResult;
import io.rota.raft.core.Configuration;

import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * The leader refused a membership change ({@link RaftDriver#changeMembership}); {@link #reason()} says why,
 * and so whether to retry: {@code CHANGE_IN_PROGRESS}, {@code NOT_YET_COMMITTED_IN_TERM},
 * {@code TRANSFERRING_LEADERSHIP}, {@code LEARNER_BEHIND} and {@code LEARNER_NOT_RESPONDING} pass with time;
 * the others need a different request ({@code QUORUM_AT_RISK}: bring the silent members back, or force).
 * A refusal because this node does not lead is a {@link RaftException} NOT_LEADER instead, as for writes,
 * so that callers route both the same way.
 */
public final class ConfChangeRefusedException extends RuntimeException {

    private final ConfChangeResult.Reason reason;
    private final Set<Long> responding;

    public ConfChangeRefusedException(ConfChange change, ConfChangeResult.Reason reason) {
        this(change, reason, Set.of(), null);
    }

    /**
     * @param responding the servers the leader heard from within an election timeout, itself included
     *                   ({@link ConfChangeResult.Refused#responding()})
     * @param current    the leader's configuration when it refused, to say what the change would have made of
     *                   it; {@code null} if unknown
     */
    public ConfChangeRefusedException(ConfChange change, ConfChangeResult.Reason reason, Set<Long> responding,
                                      Configuration current) {
        this(change.type().name().toLowerCase().replace('_', ' ') + " " + change.node(), reason, responding,
                reason == ConfChangeResult.Reason.QUORUM_AT_RISK && current != null ? change.applyTo(current) : null);
    }

    private ConfChangeRefusedException(String subject, ConfChangeResult.Reason reason, Set<Long> responding,
                                       Configuration next) {
        super(subject + " refused: " + explain(reason, responding, next), null, false, false);
        this.reason = Objects.requireNonNull(reason, "reason");
        this.responding = Set.copyOf(responding);
    }

    /**
     * QUORUM_AT_RISK for adding a voter not yet registered, so without an id: {@code name} says which. For a
     * server that checks before it registers the member (the core checks again when the change is proposed).
     */
    public static ConfChangeRefusedException voterAddAtRisk(String name, Set<Long> responding, Configuration current) {
        long newcomer = 1;   // any id outside the configuration: only the count of voters matters here
        while (current.isMember(newcomer)) {
            newcomer++;
        }
        return new ConfChangeRefusedException("add voter " + name, ConfChangeResult.Reason.QUORUM_AT_RISK, responding,
                ConfChange.addVoter(newcomer).applyTo(current));
    }

    public ConfChangeResult.Reason reason() {
        return reason;
    }

    /** For QUORUM_AT_RISK and LEARNER_NOT_RESPONDING: who answered the leader within an election timeout. */
    public Set<Long> responding() {
        return responding;
    }

    /** Whether the same request may succeed later without anything else changing. */
    public boolean retryable() {
        return switch (reason) {
            case CHANGE_IN_PROGRESS, NOT_YET_COMMITTED_IN_TERM, TRANSFERRING_LEADERSHIP, LEARNER_BEHIND,
                 LEARNER_NOT_RESPONDING, NOT_LEADER -> true;
            case ALREADY_MEMBER, NOT_A_MEMBER, NOT_A_LEARNER, LAST_VOTER, QUORUM_AT_RISK -> false;
        };
    }

    private static String explain(ConfChangeResult.Reason reason, Set<Long> responding, Configuration next) {
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
            case LEARNER_NOT_RESPONDING -> "the learner has not answered the leader within an election timeout,"
                    + " so it would be a voter that does not vote; start it or check its network, then retry"
                    + " (members answering: " + ids(responding) + ")";
            case LAST_VOTER -> "a cluster needs at least one voter";
            case QUORUM_AT_RISK -> quorumAtRisk(responding, next);
        };
    }

    /** Says how many voters the new configuration would have, how many of them answer, and how many it needs. */
    private static String quorumAtRisk(Set<Long> responding, Configuration next) {
        if (next == null) {
            return "too few of the new configuration's voters answer the leader to commit it";
        }
        Set<Long> answering = new TreeSet<>(next.voters());
        answering.retainAll(responding);
        return "the new configuration would have " + next.voters().size() + " voters, of which "
                + answering.size() + (answering.size() == 1 ? " answers" : " answer")
                + (answering.isEmpty() ? "" : " (" + ids(answering) + ")") + ", short of the " + next.quorum()
                + " votes it needs to commit anything; members answering within an election timeout: "
                + ids(responding);
    }

    private static String ids(Set<Long> ids) {
        return ids.isEmpty() ? "none" : new TreeSet<>(ids).stream().map(String::valueOf).collect(Collectors.joining(", "));
    }
}
