package io.rota.raft.core;

import java.util.Set;

/** Answer of {@link RaftNode#proposeConfChange}: where the configuration entry went, or why it was refused. */
public sealed interface ConfChangeResult {

    /**
     * The configuration entry was appended at {@code index} in {@code term}, and {@code configuration} is
     * in force on this leader from now on (§4.1). The change is done when that entry is committed; if
     * another term's entry shows up at that index, a newer leader overwrote it and the change did not
     * happen.
     */
    record Accepted(long term, long index, Configuration configuration) implements ConfChangeResult {
    }

    /**
     * Nothing was appended; {@code leaderHint} names the leader when known. For
     * {@link Reason#QUORUM_AT_RISK} and {@link Reason#LEARNER_NOT_RESPONDING}, {@code responding} names the
     * servers the leader heard from within the last election timeout, itself included, so that the
     * operator's message can say who answers; empty for the other reasons.
     */
    record Refused(Reason reason, long leaderHint, Set<Long> responding) implements ConfChangeResult {
        public Refused {
            responding = Set.copyOf(responding);
        }

        public Refused(Reason reason, long leaderHint) {
            this(reason, leaderHint, Set.of());
        }
    }

    /** Why a change was refused. */
    enum Reason {
        /** Only the leader changes the configuration; retry at {@code leaderHint}. */
        NOT_LEADER,
        /** A leadership transfer is in progress (§3.10); retry in a moment. */
        TRANSFERRING_LEADERSHIP,
        /**
         * This leader has not yet committed an entry of its own term, so an uncommitted configuration of an
         * earlier leader may still be lurking in other logs (Ongaro's 2015 correction to §4.1); retry once
         * its no-op is committed, normally within a heartbeat or two.
         */
        NOT_YET_COMMITTED_IN_TERM,
        /** An earlier change is not committed yet: one change at a time (§4.1); retry when it is. */
        CHANGE_IN_PROGRESS,
        /** The server is already a voter or a learner. */
        ALREADY_MEMBER,
        /** The server is neither a voter nor a learner. */
        NOT_A_MEMBER,
        /** Only a learner can be promoted. */
        NOT_A_LEARNER,
        /** The learner is not caught up ({@link ConfChange#PROMOTION_MAX_LAG_ENTRIES}); retry later. */
        LEARNER_BEHIND,
        /**
         * The learner has not answered the leader within an election timeout (§4.2.1): promoted, it would
         * be a voter that does not vote. Start it, or check its network, and retry.
         */
        LEARNER_NOT_RESPONDING,
        /** A configuration needs at least one voter. */
        LAST_VOTER,
        /**
         * Strict reconfiguration (design MF2): the voters of the new configuration that the leader heard
         * from within an election timeout are not a quorum of it, so its entry might never commit and the
         * cluster would stop. Bring the silent members back, or force the change.
         */
        QUORUM_AT_RISK
    }
}
