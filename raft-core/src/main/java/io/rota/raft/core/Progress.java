package io.rota.raft.core;

/**
 * The leader's view of one follower (Figure 2, "Volatile state on leaders": nextIndex[], matchIndex[]),
 * plus the flow-control state that makes replication fast without being reckless.
 *
 * <p>States:
 * <ul>
 *   <li>{@link State#PROBE}: we do not know where the follower's log matches ours; send one
 *       AppendEntries at a time and back off on rejection (§5.3);</li>
 *   <li>{@link State#REPLICATE}: the follower matches; send optimistically, advancing nextIndex as soon
 *       as a message leaves, with at most {@link Inflights} outstanding (pipelining, §10.2.2);</li>
 *   <li>{@link State#SNAPSHOT}: the follower needs entries we compacted; an InstallSnapshot is in flight
 *       (§7) and nothing else is sent until it is acknowledged or times out.</li>
 * </ul>
 * Invariant: {@code matchIndex < nextIndex}; matchIndex never decreases within a term.
 */
final class Progress {

    enum State { PROBE, REPLICATE, SNAPSHOT }

    /** Highest index known to be replicated on the follower (Figure 2). Never decreases. */
    long matchIndex;
    /** Index of the next entry to send (Figure 2). */
    long nextIndex;
    State state = State.PROBE;
    /** In PROBE: a probe is outstanding, wait for its answer or the next heartbeat. */
    boolean probeSent;
    /** In SNAPSHOT: the index of the snapshot being sent, and ticks spent waiting for it. */
    long pendingSnapshotIndex;
    int snapshotTicks;
    /**
     * The oldest snapshot sent that may still be streaming to the follower, 0 if none: the leader's
     * compaction keeps the entries after it (§7), so that once the follower installs it, the log continues
     * it. Unlike pendingSnapshotIndex it survives a retry, because the transport finishes the transfer it
     * started instead of restarting it for a newer snapshot. Cleared by an answer at or past it, by a
     * reported transfer failure, or by the leader's bound on pinned entries.
     */
    long inFlightSnapshotIndex;
    /** Heard from since the last CheckQuorum round (§6.2). */
    boolean recentActive;
    /**
     * The leader's {@link RaftNode} tick count when it last received any message from this server in its
     * term, or {@link #NEVER}. Unlike {@link #recentActive} it is kept whether or not CheckQuorum is on:
     * strict reconfiguration (§4.1, design MF2) asks which servers answered within an election timeout.
     */
    long lastHeardTick = NEVER;

    /** {@link #lastHeardTick} of a server not heard from in this term. */
    static final long NEVER = Long.MIN_VALUE;
    /** Highest read round (§6.4) this follower has confirmed. */
    long readRoundAcked;
    final Inflights inflights;

    Progress(long nextIndex, int maxInflightMessages, long maxInflightBytes) {
        this.nextIndex = nextIndex;
        this.inflights = new Inflights(maxInflightMessages, maxInflightBytes);
    }

    /** Whether the leader should hold further AppendEntries to this follower for now. */
    boolean isPaused() {
        return switch (state) {
            case PROBE -> probeSent;
            case REPLICATE -> inflights.full();
            case SNAPSHOT -> true;
        };
    }

    void becomeProbe() {
        // Coming back from a snapshot, continue right after it; otherwise right after what matches.
        long next = state == State.SNAPSHOT ? Math.max(matchIndex + 1, pendingSnapshotIndex + 1) : matchIndex + 1;
        state = State.PROBE;
        nextIndex = next;
        probeSent = false;
        pendingSnapshotIndex = 0;
        inflights.reset();
    }

    void becomeReplicate() {
        state = State.REPLICATE;
        nextIndex = matchIndex + 1;
        probeSent = false;
        inflights.reset();
    }

    void becomeSnapshot(long snapshotIndex) {
        state = State.SNAPSHOT;
        pendingSnapshotIndex = snapshotIndex;
        if (inFlightSnapshotIndex == 0) {
            inFlightSnapshotIndex = snapshotIndex;
        }
        snapshotTicks = 0;
        probeSent = false;
        inflights.reset();
    }

    /** A successful answer up to {@code index}. Returns whether matchIndex moved. */
    boolean maybeUpdate(long index) {
        boolean updated = false;
        if (matchIndex < index) {
            matchIndex = index;
            updated = true;
            probeSent = false;
        }
        if (matchIndex >= inFlightSnapshotIndex) {
            inFlightSnapshotIndex = 0; // installed (or overtaken): nothing older is still on its way
        }
        nextIndex = Math.max(nextIndex, index + 1);
        return updated;
    }

    /**
     * A rejection of the AppendEntries whose prevLogIndex was {@code rejectedIndex}; {@code hintNext} is
     * where the conflict hint says to continue (§5.3). A pipelining follower that rejects falls back to
     * probing. Returns false for a stale rejection (an answer to an older message), which changes nothing.
     */
    boolean maybeDecreaseTo(long rejectedIndex, long hintNext) {
        if (state == State.REPLICATE) {
            if (rejectedIndex <= matchIndex) {
                return false;
            }
            becomeProbe();
        } else if (rejectedIndex != nextIndex - 1) {
            return false;
        }
        nextIndex = Math.max(matchIndex + 1, Math.min(rejectedIndex, hintNext));
        probeSent = false;
        return true;
    }

    @Override
    public String toString() {
        return state + "{match=" + matchIndex + " next=" + nextIndex + " inflight=" + inflights.count()
                + (state == State.SNAPSHOT ? " snapshot=" + pendingSnapshotIndex : "")
                + (inFlightSnapshotIndex > 0 ? " pin=" + inFlightSnapshotIndex : "") + "}";
    }
}
