package io.rota.raft.core;

import java.util.List;

/**
 * The messages Raft servers exchange. Every message carries the sender's {@code term}: a server that
 * sees a larger term adopts it and steps down (§5.1). Protobuf lives at the transport edge; inside the
 * core messages are plain records.
 *
 * <h2>Adding a message type</h2>
 * Every concern that treats the types differently — dispatch to a handler, the higher-term and lower-term
 * rules (§5.1), whether a leader may send it before its own write (§10.2.1), the wire codec both ways —
 * is a {@link Visitor}, not a chain of {@code instanceof}. A new record must implement
 * {@link #accept}, which needs a new {@code visit} method, and then every visitor fails to compile until
 * it says what the new type means for its concern. Nothing is silently dropped by a forgotten branch
 * (design decision H8).
 */
public sealed interface Message {

    long term();

    long from();

    long to();

    /** Calls the {@code visit} method of {@code visitor} for this record's type and returns its result. */
    <R> R accept(Visitor<R> visitor);

    /**
     * One method per message type: an implementation is one per-type concern, written out for every type
     * (Java 17 has no exhaustive pattern switch over a sealed interface; this is its checked equivalent).
     * Deliberately no default methods and no {@code visit(Message)}: either would let a new type through
     * unhandled.
     *
     * @param <R> what the concern computes ({@link Void} when it only acts)
     */
    interface Visitor<R> {
        R visit(RequestVote m);

        R visit(RequestVoteResponse m);

        R visit(AppendEntries m);

        R visit(AppendEntriesResponse m);

        R visit(Heartbeat m);

        R visit(HeartbeatResponse m);

        R visit(InstallSnapshot m);

        R visit(TimeoutNow m);

        R visit(ReadIndexRequest m);

        R visit(ReadIndexResponse m);
    }

    /**
     * RequestVote RPC (§5.2, Figure 2). With {@code preVote} set it is the PreVote of §9.6: "would you
     * vote for me in {@code term}?", which changes no one's term or vote. {@code leadershipTransfer}
     * marks the election a {@link TimeoutNow} started (§3.10), which voters let through even while they
     * hear from a leader.
     */
    record RequestVote(long term, long from, long to, long lastLogIndex, long lastLogTerm,
                       boolean preVote, boolean leadershipTransfer) implements Message {
        @Override
        public <R> R accept(Visitor<R> visitor) {
            return visitor.visit(this);
        }
    }

    /** Reply to {@link RequestVote}; a granted pre-vote echoes the proposed term. */
    record RequestVoteResponse(long term, long from, long to, boolean voteGranted, boolean preVote)
            implements Message {
        @Override
        public <R> R accept(Visitor<R> visitor) {
            return visitor.visit(this);
        }
    }

    /**
     * AppendEntries RPC (§5.3, Figure 2): replicate {@code entries} after {@code prevLogIndex}, which the
     * receiver must hold with {@code prevLogTerm}.
     *
     * <p>{@code commitNotice} marks the leader's broadcast after its commit index moved: no entries, only
     * the new {@code leaderCommit}, sent to a follower in REPLICATE state. The follower still checks
     * prevLogIndex/prevLogTerm (which is what makes committing up to prevLogIndex safe) but answers only if
     * the check fails: a success would tell the leader nothing it does not already count, and not sending a
     * message is the same as losing it, which Raft tolerates (the next heartbeat's answer recovers any
     * acknowledgement that was really lost). It saves two messages per write at one write in flight.
     */
    record AppendEntries(long term, long from, long to, long prevLogIndex, long prevLogTerm,
                         List<Entry> entries, long leaderCommit, boolean commitNotice) implements Message {
        /** An AppendEntries that wants its answer (every one but the leader's commit broadcast). */
        public AppendEntries(long term, long from, long to, long prevLogIndex, long prevLogTerm,
                             List<Entry> entries, long leaderCommit) {
            this(term, from, to, prevLogIndex, prevLogTerm, entries, leaderCommit, false);
        }

        public AppendEntries {
            entries = List.copyOf(entries);
            if (commitNotice && !entries.isEmpty()) {
                throw new IllegalArgumentException("malformed AppendEntries: a commit notice carries no entries, got "
                        + entries.size());
            }
            // A well-formed message carries the entries right after prevLogIndex, in order, no newer than
            // the sender's term and never older than prevLogTerm (terms only grow along a log).
            long expected = prevLogIndex + 1;
            long lastTerm = prevLogTerm;
            for (Entry e : entries) {
                if (e.index() != expected++ || e.term() < lastTerm || e.term() > term) {
                    throw new IllegalArgumentException("malformed AppendEntries: entry " + e + " after prevLogIndex "
                            + prevLogIndex + "@" + prevLogTerm + " in term " + term);
                }
                lastTerm = e.term();
            }
        }

        @Override
        public String toString() {
            return "AppendEntries{t" + term + " " + from + "->" + to + " prev=" + prevLogIndex + "@" + prevLogTerm
                    + " n=" + entries.size() + " commit=" + leaderCommit + (commitNotice ? " notice" : "") + "}";
        }

        @Override
        public <R> R accept(Visitor<R> visitor) {
            return visitor.visit(this);
        }
    }

    /**
     * Reply to {@link AppendEntries} and to {@link InstallSnapshot}. On success {@code matchIndex} is the
     * last index the receiver now holds in agreement with the leader. On rejection {@code rejectedIndex}
     * echoes the rejected prevLogIndex, and {@code conflictIndex}/{@code conflictTerm} let the leader
     * skip a whole term of mismatched entries at once (fast backtracking, §5.3 end).
     */
    record AppendEntriesResponse(long term, long from, long to, boolean success, long matchIndex,
                                 long rejectedIndex, long conflictIndex, long conflictTerm) implements Message {
        @Override
        public <R> R accept(Visitor<R> visitor) {
            return visitor.visit(this);
        }
    }

    /**
     * The leader's heartbeat (§5.2: AppendEntries with no entries). It has its own type so that it never
     * touches the log: {@code commitIndex} is capped at what the receiver is known to hold, and
     * {@code readRound} lets one round of heartbeats confirm leadership for a batch of reads (§6.4).
     */
    record Heartbeat(long term, long from, long to, long commitIndex, long readRound) implements Message {
        @Override
        public <R> R accept(Visitor<R> visitor) {
            return visitor.visit(this);
        }
    }

    /**
     * Reply to {@link Heartbeat}: "you are still my leader", for the highest {@code readRound} seen.
     * {@code lastLogIndex} lets the leader notice a follower that lost entries it had acknowledged (its
     * disk was wiped or replaced) and repair it, by log or by snapshot.
     */
    record HeartbeatResponse(long term, long from, long to, long readRound, long lastLogIndex) implements Message {
        @Override
        public <R> R accept(Visitor<R> visitor) {
            return visitor.visit(this);
        }
    }

    /**
     * InstallSnapshot RPC (§7, Figure 13) for a follower whose next entry the leader has compacted. The
     * runtime streams the bytes in chunks; the core sees the whole snapshot. Answered by an
     * {@link AppendEntriesResponse}.
     */
    record InstallSnapshot(long term, long from, long to, Snapshot snapshot) implements Message {
        @Override
        public <R> R accept(Visitor<R> visitor) {
            return visitor.visit(this);
        }
    }

    /** Start an election now, skipping PreVote: the last step of leadership transfer (§3.10). */
    record TimeoutNow(long term, long from, long to) implements Message {
        @Override
        public <R> R accept(Visitor<R> visitor) {
            return visitor.visit(this);
        }
    }

    /** A follower asks the leader for a read index on behalf of its clients (§6.4 "followers too"). */
    record ReadIndexRequest(long term, long from, long to, List<Long> contexts) implements Message {
        public ReadIndexRequest {
            contexts = List.copyOf(contexts);
        }

        @Override
        public <R> R accept(Visitor<R> visitor) {
            return visitor.visit(this);
        }
    }

    /** The leader's confirmed read index for the contexts of a {@link ReadIndexRequest}. */
    record ReadIndexResponse(long term, long from, long to, List<Long> contexts, long readIndex)
            implements Message {
        public ReadIndexResponse {
            contexts = List.copyOf(contexts);
        }

        @Override
        public <R> R accept(Visitor<R> visitor) {
            return visitor.visit(this);
        }
    }
}
