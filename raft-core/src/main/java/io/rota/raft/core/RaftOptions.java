package io.rota.raft.core;

import java.util.Objects;

/**
 * Tunables of one Raft node. Time is counted in ticks; the runtime decides how long a tick is (100 ms by
 * default, so the defaults below are a 100 ms heartbeat and a 1–2 s randomised election timeout).
 *
 * <p>Build one with {@link #builder}, which starts from the {@code DEFAULT_} constants, or derive one with
 * {@link #toBuilder}. Every construction is validated, fields alone and against each other; an error
 * names the field (this package knows nothing of command-line flags; the server names its flags itself).
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
 * @param maxSnapshotPinEntries    while a snapshot streams to a follower, the leader keeps the entries after
 *                                 it (§7: so the follower continues from the log once it installs it) — but
 *                                 never more than this many behind the leader's own newer snapshot
 */
public record RaftOptions(long id, Configuration configuration, int electionTicks, int heartbeatTicks,
                          boolean preVote, boolean checkQuorum, long maxEntriesBytesPerMessage,
                          int maxInflightMessages, long maxInflightBytes, long maxUncommittedBytes,
                          long maxCommittedBytesPerReady, long snapshotCatchUpEntries, int snapshotRetryTicks,
                          long maxSnapshotPinEntries) {

    /** Ten heartbeats: a follower misses several before it stands (etcd's default ratio; §5.6 wants ≫ 1). */
    public static final int DEFAULT_ELECTION_TICKS = 10;
    /** The leader speaks every tick, so one tick is the heartbeat interval. */
    public static final int DEFAULT_HEARTBEAT_TICKS = 1;
    /** On: a partitioned node that rejoins does not depose a healthy leader by its raised term (§9.6). */
    public static final boolean DEFAULT_PRE_VOTE = true;
    /** On: a leader cut off from its quorum steps down instead of accepting writes it cannot commit. */
    public static final boolean DEFAULT_CHECK_QUORUM = true;
    /** 1 MiB (etcd server's maxSizePerMsg): batches many small entries, does not hog the peer connection. */
    public static final long DEFAULT_MAX_ENTRIES_BYTES_PER_MESSAGE = 1 << 20;
    /** 256 AppendEntries in flight per follower: a deep pipeline across a round trip, still bounded. */
    public static final int DEFAULT_MAX_INFLIGHT_MESSAGES = 256;
    /** 16 MiB unacknowledged per follower: bounds what a slow follower costs the leader's memory. */
    public static final long DEFAULT_MAX_INFLIGHT_BYTES = 16L << 20;
    /** 64 MiB of proposals may wait for commitment; beyond it the leader answers "busy" (back-pressure). */
    public static final long DEFAULT_MAX_UNCOMMITTED_BYTES = 64L << 20;
    /** 16 MiB of committed entries per Ready: one Ready's apply stays short. */
    public static final long DEFAULT_MAX_COMMITTED_BYTES_PER_READY = 16L << 20;
    /** 1,000 entries kept behind a snapshot: a follower a little behind is caught up from the log. */
    public static final long DEFAULT_SNAPSHOT_CATCH_UP_ENTRIES = 1_000;
    /** 50 ticks (5 s at 100 ms): long enough for a large snapshot to arrive, short enough to retry a loss. */
    public static final int DEFAULT_SNAPSHOT_RETRY_TICKS = 50;
    /**
     * 100,000 entries (a hundred times the catch-up entries; tens of MiB of small writes held in memory): a
     * transfer lasting several snapshot intervals still ends in log replication instead of another snapshot.
     */
    public static final long DEFAULT_MAX_SNAPSHOT_PIN_ENTRIES = 100_000;

    /**
     * Checks every field alone and against each other, so that no invalid options exist; throws
     * {@link IllegalArgumentException} naming the field. Not checked, on purpose:
     * {@code maxEntriesBytesPerMessage <= maxInflightBytes} (the in-flight window always admits one message
     * into an empty window, so a large message still goes; the simulator draws such combinations), and
     * {@code id ∈ configuration} (a server being added (§4) starts before it is a voter).
     */
    public RaftOptions {
        Objects.requireNonNull(configuration, "configuration");
        require(id != RaftNode.NONE, "id " + RaftNode.NONE + " is reserved for 'none'");
        require(heartbeatTicks >= 1, "heartbeatTicks must be at least 1, got " + heartbeatTicks);
        // §5.6: broadcastTime ≪ electionTimeout, or followers time out between two heartbeats.
        require(heartbeatTicks < electionTicks, "heartbeatTicks (" + heartbeatTicks
                + ") must be less than electionTicks (" + electionTicks + "): a follower must hear a heartbeat"
                + " before its election timeout (§5.6)");
        require(maxEntriesBytesPerMessage >= 1, "maxEntriesBytesPerMessage must be at least 1, got "
                + maxEntriesBytesPerMessage);
        require(maxInflightMessages >= 1, "maxInflightMessages must be at least 1, got " + maxInflightMessages);
        require(maxInflightBytes >= 1, "maxInflightBytes must be at least 1, got " + maxInflightBytes);
        require(maxUncommittedBytes >= 1, "maxUncommittedBytes must be at least 1, got " + maxUncommittedBytes);
        require(maxCommittedBytesPerReady >= 1, "maxCommittedBytesPerReady must be at least 1, got "
                + maxCommittedBytesPerReady);
        require(snapshotCatchUpEntries >= 0, "snapshotCatchUpEntries must not be negative, got "
                + snapshotCatchUpEntries);
        require(snapshotRetryTicks >= 1, "snapshotRetryTicks must be at least 1, got " + snapshotRetryTicks);
        require(maxSnapshotPinEntries >= 0, "maxSnapshotPinEntries must not be negative, got "
                + maxSnapshotPinEntries);
    }

    /** The defaults: {@code builder(id, configuration).build()}. */
    public static RaftOptions defaults(long id, Configuration configuration) {
        return builder(id, configuration).build();
    }

    /** A builder for server {@code id} of {@code configuration}, every other field at its default. */
    public static Builder builder(long id, Configuration configuration) {
        return new Builder(id, configuration);
    }

    /** A builder holding these options, to change some of them. */
    public Builder toBuilder() {
        return new Builder(id, configuration).electionTicks(electionTicks).heartbeatTicks(heartbeatTicks)
                .preVote(preVote).checkQuorum(checkQuorum).maxEntriesBytesPerMessage(maxEntriesBytesPerMessage)
                .maxInflightMessages(maxInflightMessages).maxInflightBytes(maxInflightBytes)
                .maxUncommittedBytes(maxUncommittedBytes).maxCommittedBytesPerReady(maxCommittedBytesPerReady)
                .snapshotCatchUpEntries(snapshotCatchUpEntries).snapshotRetryTicks(snapshotRetryTicks)
                .maxSnapshotPinEntries(maxSnapshotPinEntries);
    }

    private static void require(boolean condition, String message) {
        if (!condition) {
            throw new IllegalArgumentException(message);
        }
    }

    /** Builds {@link RaftOptions}; starts from the defaults. Setters are named like the fields. */
    public static final class Builder {
        private final long id;
        private final Configuration configuration;
        private int electionTicks = DEFAULT_ELECTION_TICKS;
        private int heartbeatTicks = DEFAULT_HEARTBEAT_TICKS;
        private boolean preVote = DEFAULT_PRE_VOTE;
        private boolean checkQuorum = DEFAULT_CHECK_QUORUM;
        private long maxEntriesBytesPerMessage = DEFAULT_MAX_ENTRIES_BYTES_PER_MESSAGE;
        private int maxInflightMessages = DEFAULT_MAX_INFLIGHT_MESSAGES;
        private long maxInflightBytes = DEFAULT_MAX_INFLIGHT_BYTES;
        private long maxUncommittedBytes = DEFAULT_MAX_UNCOMMITTED_BYTES;
        private long maxCommittedBytesPerReady = DEFAULT_MAX_COMMITTED_BYTES_PER_READY;
        private long snapshotCatchUpEntries = DEFAULT_SNAPSHOT_CATCH_UP_ENTRIES;
        private int snapshotRetryTicks = DEFAULT_SNAPSHOT_RETRY_TICKS;
        private long maxSnapshotPinEntries = DEFAULT_MAX_SNAPSHOT_PIN_ENTRIES;

        private Builder(long id, Configuration configuration) {
            this.id = id;
            this.configuration = configuration;
        }

        public Builder electionTicks(int electionTicks) {
            this.electionTicks = electionTicks;
            return this;
        }

        public Builder heartbeatTicks(int heartbeatTicks) {
            this.heartbeatTicks = heartbeatTicks;
            return this;
        }

        public Builder preVote(boolean preVote) {
            this.preVote = preVote;
            return this;
        }

        public Builder checkQuorum(boolean checkQuorum) {
            this.checkQuorum = checkQuorum;
            return this;
        }

        public Builder maxEntriesBytesPerMessage(long maxEntriesBytesPerMessage) {
            this.maxEntriesBytesPerMessage = maxEntriesBytesPerMessage;
            return this;
        }

        public Builder maxInflightMessages(int maxInflightMessages) {
            this.maxInflightMessages = maxInflightMessages;
            return this;
        }

        public Builder maxInflightBytes(long maxInflightBytes) {
            this.maxInflightBytes = maxInflightBytes;
            return this;
        }

        public Builder maxUncommittedBytes(long maxUncommittedBytes) {
            this.maxUncommittedBytes = maxUncommittedBytes;
            return this;
        }

        public Builder maxCommittedBytesPerReady(long maxCommittedBytesPerReady) {
            this.maxCommittedBytesPerReady = maxCommittedBytesPerReady;
            return this;
        }

        public Builder snapshotCatchUpEntries(long snapshotCatchUpEntries) {
            this.snapshotCatchUpEntries = snapshotCatchUpEntries;
            return this;
        }

        public Builder snapshotRetryTicks(int snapshotRetryTicks) {
            this.snapshotRetryTicks = snapshotRetryTicks;
            return this;
        }

        public Builder maxSnapshotPinEntries(long maxSnapshotPinEntries) {
            this.maxSnapshotPinEntries = maxSnapshotPinEntries;
            return this;
        }

        /** The options; throws {@link IllegalArgumentException} naming the field when they are invalid. */
        public RaftOptions build() {
            return new RaftOptions(id, configuration, electionTicks, heartbeatTicks, preVote, checkQuorum,
                    maxEntriesBytesPerMessage, maxInflightMessages, maxInflightBytes, maxUncommittedBytes,
                    maxCommittedBytesPerReady, snapshotCatchUpEntries, snapshotRetryTicks, maxSnapshotPinEntries);
        }
    }
}
