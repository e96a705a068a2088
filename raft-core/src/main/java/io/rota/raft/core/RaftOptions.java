package io.rota.raft.core;

import java.util.Objects;

/**
 * Tunables of one Raft node. Time is counted in ticks; the runtime decides how long a tick is (100 ms by
 * default, so the defaults below are a 100 ms heartbeat and a 1–2 s randomised election timeout).
 *
 * @param id                       this server's id; never {@link RaftNode#NONE}
 * @param configuration            the voters (§4)
 * @param electionTicks            base election timeout; each node draws its timeout from
 *                                 [electionTicks, 2 × electionTicks) (§5.2)
 * @param heartbeatTicks           leader heartbeat interval; must be below electionTicks (§5.6)
 * @param preVote                  run PreVote before raising the term (§9.6)
 * @param checkQuorum              a leader that has not heard from a quorum for electionTicks steps down,
 *                                 and followers that hear from a leader ignore vote requests (§6.2, §4.2.3)
 * @param maxEntriesBytesPerMessage bound on the entries in one AppendEntries (at least one is sent)
 * @param maxInflightMessages      bound on unacknowledged AppendEntries per follower when pipelining
 * @param maxInflightBytes         bound on unacknowledged entry bytes per follower when pipelining
 * @param maxUncommittedBytes      the leader rejects proposals beyond this many uncommitted bytes
 * @param maxCommittedBytesPerReady bound on the committed entries handed to the state machine per Ready
 * @param snapshotCatchUpEntries   entries kept behind a snapshot so a slightly slow follower can still
 *                                 be served from the log instead of a snapshot
 * @param snapshotRetryTicks       a follower that has not confirmed a snapshot within this many ticks is
 *                                 probed again (the snapshot or its answer may have been lost)
 */
public record RaftOptions(long id, Configuration configuration, int electionTicks, int heartbeatTicks,
                          boolean preVote, boolean checkQuorum, long maxEntriesBytesPerMessage,
                          int maxInflightMessages, long maxInflightBytes, long maxUncommittedBytes,
                          long maxCommittedBytesPerReady, long snapshotCatchUpEntries, int snapshotRetryTicks) {

    public RaftOptions {
        Objects.requireNonNull(configuration, "configuration");
        if (id == RaftNode.NONE) {
            throw new IllegalArgumentException("node id " + RaftNode.NONE + " is reserved for 'none'");
        }
        if (heartbeatTicks < 1 || electionTicks <= heartbeatTicks) {
            throw new IllegalArgumentException("need 1 <= heartbeatTicks < electionTicks, got heartbeat="
                    + heartbeatTicks + " election=" + electionTicks);
        }
        if (maxEntriesBytesPerMessage < 1 || maxInflightMessages < 1 || maxInflightBytes < 1
                || maxUncommittedBytes < 1 || maxCommittedBytesPerReady < 1 || snapshotCatchUpEntries < 0
                || snapshotRetryTicks < 1) {
            throw new IllegalArgumentException("limits must be positive");
        }
    }

    /** Defaults: heartbeat 1 tick, election 10 ticks, PreVote and CheckQuorum on. */
    public static RaftOptions defaults(long id, Configuration configuration) {
        return new RaftOptions(id, configuration, 10, 1, true, true,
                1 << 20, 256, 16L << 20, 64L << 20, 16L << 20, 1_000, 50);
    }

    public RaftOptions withTicks(int election, int heartbeat) {
        return new RaftOptions(id, configuration, election, heartbeat, preVote, checkQuorum,
                maxEntriesBytesPerMessage, maxInflightMessages, maxInflightBytes, maxUncommittedBytes,
                maxCommittedBytesPerReady, snapshotCatchUpEntries, snapshotRetryTicks);
    }

    public RaftOptions withPreVote(boolean on) {
        return new RaftOptions(id, configuration, electionTicks, heartbeatTicks, on, checkQuorum,
                maxEntriesBytesPerMessage, maxInflightMessages, maxInflightBytes, maxUncommittedBytes,
                maxCommittedBytesPerReady, snapshotCatchUpEntries, snapshotRetryTicks);
    }

    public RaftOptions withCheckQuorum(boolean on) {
        return new RaftOptions(id, configuration, electionTicks, heartbeatTicks, preVote, on,
                maxEntriesBytesPerMessage, maxInflightMessages, maxInflightBytes, maxUncommittedBytes,
                maxCommittedBytesPerReady, snapshotCatchUpEntries, snapshotRetryTicks);
    }

    public RaftOptions withLimits(long maxEntriesBytesPerMessage, int maxInflightMessages, long maxInflightBytes,
                                  long maxUncommittedBytes) {
        return new RaftOptions(id, configuration, electionTicks, heartbeatTicks, preVote, checkQuorum,
                maxEntriesBytesPerMessage, maxInflightMessages, maxInflightBytes, maxUncommittedBytes,
                maxCommittedBytesPerReady, snapshotCatchUpEntries, snapshotRetryTicks);
    }

    public RaftOptions withSnapshotCatchUpEntries(long entries) {
        return new RaftOptions(id, configuration, electionTicks, heartbeatTicks, preVote, checkQuorum,
                maxEntriesBytesPerMessage, maxInflightMessages, maxInflightBytes, maxUncommittedBytes,
                maxCommittedBytesPerReady, entries, snapshotRetryTicks);
    }
}
