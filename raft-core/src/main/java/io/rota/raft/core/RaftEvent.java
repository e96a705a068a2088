package io.rota.raft.core;

/**
 * Something a node did that an operator wants to read about afterwards: an election, a vote, a change of
 * role, leader or term, a leadership transfer, a snapshot received, proposals refused. The core logs
 * nothing (it stays pure); it reports these in {@link Ready#events()}, in the order they happened, and the
 * runtime turns each into one log line (design decision H9).
 *
 * <p>Events are facts, not work: nothing in the {@link Ready} contract depends on them, and a runtime may
 * ignore them. Every event carries the term it happened in; for a pre-vote, the term the node would
 * campaign in (§9.6).
 */
public sealed interface RaftEvent {

    /** The term the event happened in (for a pre-vote: the proposed term). */
    long term();

    /** Calls the {@code visit} method of {@code visitor} for this record's type and returns its result. */
    <R> R accept(Visitor<R> visitor);

    /**
     * One method per event type, so that a new event fails to compile until every consumer (the driver's
     * log lines, for one) says what to do with it. No default methods, on purpose.
     *
     * @param <R> what the consumer computes
     */
    interface Visitor<R> {
        R visit(ElectionStarted e);

        R visit(VoteGranted e);

        R visit(VoteDenied e);

        R visit(ElectionLost e);

        R visit(BecameLeader e);

        R visit(BecameFollower e);

        R visit(SteppedDown e);

        R visit(LeaderChanged e);

        R visit(TransferStarted e);

        R visit(TransferAborted e);

        R visit(SnapshotInstalled e);

        R visit(ProposalsRefused e);
    }

    /**
     * The node started a pre-vote (§9.6) or an election (§5.2) for {@code term}.
     *
     * @param cause what set it off
     */
    record ElectionStarted(long term, boolean preVote, Cause cause) implements RaftEvent {

        /** What starts a campaign. */
        public enum Cause {
            /** No word from a leader within the randomized election timeout (§5.2). */
            ELECTION_TIMEOUT,
            /**
             * The runtime reported the leader's process gone ({@link RaftNode#reportPeerDown}), which cut the
             * election timer short.
             */
            LEADER_DOWN,
            /** A majority granted the pre-vote, so the real election follows at once (§9.6). */
            PRE_VOTE_WON,
            /** The leader sent TimeoutNow to hand over leadership (§3.10). */
            LEADERSHIP_TRANSFER
        }

        @Override
        public <R> R accept(Visitor<R> visitor) {
            return visitor.visit(this);
        }
    }

    /** This node granted its vote (or a pre-vote) to {@code candidate} for {@code term} (§5.2, §5.4.1). */
    record VoteGranted(long term, long candidate, boolean preVote) implements RaftEvent {
        @Override
        public <R> R accept(Visitor<R> visitor) {
            return visitor.visit(this);
        }
    }

    /** This node refused its vote (or a pre-vote) to {@code candidate} for {@code term}, for {@code reason}. */
    record VoteDenied(long term, long candidate, boolean preVote, Reason reason) implements RaftEvent {

        /** Why a vote is refused; each names the rule. */
        public enum Reason {
            /** "Reply false if term &lt; currentTerm" (Figure 2, RequestVote receiver, rule 1). */
            STALE_TERM("the candidate's term is older than ours"),
            /**
             * A leader was heard from within the minimum election timeout, so the request is ignored and
             * the term kept (§4.2.3, with CheckQuorum).
             */
            LEADER_LEASE("a leader was heard from within the election timeout; request ignored"),
            /** One vote per term (§5.2). */
            ALREADY_VOTED("already voted for another candidate in this term"),
            /** A follower of a live leader does not vote for another node in the same term (§5.2). */
            LEADER_KNOWN("already following a leader in this term"),
            /** The election restriction (§5.4.1). */
            LOG_NOT_UP_TO_DATE("the candidate's log is not as up to date as ours");

            private final String description;

            Reason(String description) {
                this.description = description;
            }

            /** The rule, in words, for log lines. */
            public String description() {
                return description;
            }
        }

        @Override
        public <R> R accept(Visitor<R> visitor) {
            return visitor.visit(this);
        }
    }

    /**
     * A majority refused: the (pre-)candidate is a follower again and waits for a leader or its next
     * timeout (§5.2).
     *
     * @param votesGranted votes granted, its own included
     * @param voters       voters in the configuration
     */
    record ElectionLost(long term, boolean preVote, int votesGranted, int voters) implements RaftEvent {
        @Override
        public <R> R accept(Visitor<R> visitor) {
            return visitor.visit(this);
        }
    }

    /**
     * The node won the election for {@code term} (§5.2).
     *
     * @param preVoteRounds pre-vote rounds (§9.6) this node ran since it last followed a leader, the winning
     *                      one included; 0 without PreVote or after a leadership transfer
     */
    record BecameLeader(long term, int preVoteRounds) implements RaftEvent {
        @Override
        public <R> R accept(Visitor<R> visitor) {
            return visitor.visit(this);
        }
    }

    /**
     * A candidate or pre-candidate gave up its campaign: it heard from the leader of its term, or saw a
     * higher term (§5.2).
     *
     * @param leader       the leader it now follows, or {@link RaftNode#NONE} if none is known yet
     * @param previousRole what it was
     */
    record BecameFollower(long term, long leader, Role previousRole) implements RaftEvent {
        @Override
        public <R> R accept(Visitor<R> visitor) {
            return visitor.visit(this);
        }
    }

    /**
     * The leader became a follower.
     *
     * @param peer the node whose higher term deposed it, or {@link RaftNode#NONE} for {@link Cause#QUORUM_LOST}
     */
    record SteppedDown(long term, Cause cause, long peer) implements RaftEvent {

        /** Why a leader steps down. */
        public enum Cause {
            /** CheckQuorum: no word from a majority within an election timeout (§6.2). */
            QUORUM_LOST,
            /** A message with a higher term (§5.1). */
            HIGHER_TERM,
            /** The target of a leadership transfer started its election (§3.10). */
            TRANSFER_COMPLETED,
            /**
             * The committed configuration no longer has this node as a voter (§4.2.2); {@code peer} is the
             * voter it handed over to with TimeoutNow, or {@link RaftNode#NONE} if none was caught up.
             */
            REMOVED_FROM_CONFIGURATION
        }

        @Override
        public <R> R accept(Visitor<R> visitor) {
            return visitor.visit(this);
        }
    }

    /**
     * A follower's leader or term changed: it heard from a new leader, adopted a higher term (§5.1), or was
     * told its leader's process is gone ({@link RaftNode#reportPeerDown}).
     *
     * @param leader         the leader now, or {@link RaftNode#NONE}
     * @param previousLeader the leader before, or {@link RaftNode#NONE}
     */
    record LeaderChanged(long term, long leader, long previousLeader) implements RaftEvent {
        @Override
        public <R> R accept(Visitor<R> visitor) {
            return visitor.visit(this);
        }
    }

    /** The leader began handing leadership to {@code target} (§3.10). */
    record TransferStarted(long term, long target) implements RaftEvent {
        @Override
        public <R> R accept(Visitor<R> visitor) {
            return visitor.visit(this);
        }
    }

    /** The transfer to {@code target} did not finish within an election timeout and was abandoned (§3.10). */
    record TransferAborted(long term, long target) implements RaftEvent {
        @Override
        public <R> R accept(Visitor<R> visitor) {
            return visitor.visit(this);
        }
    }

    /**
     * A snapshot from leader {@code from} replaced this node's log up to {@code index} (§7, Figure 13,
     * rules 7–8); it reaches the state machine through the same Ready.
     */
    record SnapshotInstalled(long term, long from, long index) implements RaftEvent {
        @Override
        public <R> R accept(Visitor<R> visitor) {
            return visitor.visit(this);
        }
    }

    /**
     * The leader started refusing proposals because its uncommitted tail reached its byte limit
     * ({@link RaftOptions#maxUncommittedBytes()}). Reported once per episode: again only after a proposal
     * was accepted in between.
     */
    record ProposalsRefused(long term, long uncommittedBytes, long limit) implements RaftEvent {
        @Override
        public <R> R accept(Visitor<R> visitor) {
            return visitor.visit(this);
        }
    }
}
