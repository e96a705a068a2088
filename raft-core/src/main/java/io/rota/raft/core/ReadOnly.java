package io.rota.raft.core;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads waiting for the leader to confirm it is still the leader (§6.4, ReadIndex).
 *
 * <p>Reads are grouped into numbered rounds. A round is one broadcast of heartbeats carrying its number;
 * a follower's answer to round r also confirms every earlier round, because it proves the leader was
 * still the leader after all of them were sent. Reads that arrive while a round is in flight join the
 * next round, which starts as soon as the current one is confirmed: under load, one heartbeat round
 * confirms a whole batch of reads.
 */
final class ReadOnly {

    /** A read accepted by the leader: release it once {@code round} is confirmed. */
    record PendingRead(long requester, List<Long> contexts, long readIndex, long round) {
    }

    private final ArrayDeque<PendingRead> queue = new ArrayDeque<>();
    /** Reads that arrived before the leader committed an entry of its own term (§6.4 step 1). */
    private final List<PendingRead> awaitingCommit = new ArrayList<>();
    /** Highest round broadcast. */
    private long sentRound;
    /** Highest round a quorum confirmed. */
    private long confirmedRound;

    long sentRound() {
        return sentRound;
    }

    void awaitCommit(long requester, List<Long> contexts) {
        awaitingCommit.add(new PendingRead(requester, contexts, 0, 0));
    }

    List<PendingRead> takeAwaitingCommit() {
        List<PendingRead> taken = List.copyOf(awaitingCommit);
        awaitingCommit.clear();
        return taken;
    }

    /** Queue a read at {@code readIndex}; returns true if a new round must be broadcast now. */
    boolean add(long requester, List<Long> contexts, long readIndex) {
        queue.addLast(new PendingRead(requester, contexts, readIndex, sentRound + 1));
        if (sentRound == confirmedRound) {
            sentRound++;
            return true;
        }
        return false;
    }

    /**
     * A quorum has confirmed {@code round}: return the reads it releases. If reads wait for the next
     * round, it is started and {@link #sentRound()} moves on; the caller broadcasts it.
     */
    Confirmation confirm(long round) {
        if (round <= confirmedRound) {
            return new Confirmation(List.of(), false);
        }
        confirmedRound = Math.min(round, sentRound);
        List<PendingRead> released = new ArrayList<>();
        while (!queue.isEmpty() && queue.peekFirst().round() <= confirmedRound) {
            released.add(queue.removeFirst());
        }
        boolean startNext = !queue.isEmpty() && sentRound == confirmedRound;
        if (startNext) {
            sentRound++;
        }
        return new Confirmation(released, startNext);
    }

    /** Reads released by a confirmed round, and whether the next round must be broadcast now. */
    record Confirmation(List<PendingRead> released, boolean startNextRound) {
    }

    int pending() {
        return queue.size() + awaitingCommit.size();
    }

    void reset() {
        queue.clear();
        awaitingCommit.clear();
        sentRound = 0;
        confirmedRound = 0;
    }
}
