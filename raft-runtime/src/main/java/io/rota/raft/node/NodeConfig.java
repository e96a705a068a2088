package io.rota.raft.node;

import io.rota.raft.core.Configuration;
import io.rota.raft.core.RaftOptions;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;

/**
 * How a {@link RaftDriver} runs one node. Build one with {@link #builder}, which starts from the
 * {@code DEFAULT_} constants, or derive one with {@link #toBuilder}. Every construction is validated, fields
 * alone and against each other; an error names the field.
 *
 * @param raft             the core's options; one tick lasts {@code tick}
 * @param tick             wall-clock length of one tick (default 100 ms: heartbeat 1 tick, election 10)
 * @param snapshotCount    take a snapshot and compact the log every this many applied entries (§7)
 * @param inboxCapacity    bound on queued inputs (peer messages, proposals, reads); beyond it callers get
 *                         {@link RaftException.Code#BUSY} and peer messages are dropped
 * @param maxBatch         inputs drained per loop turn: one Ready and one fsync cover them all
 * @param memberAddresses  an address per member id, reported in NOT_LEADER errors
 */
public record NodeConfig(RaftOptions raft, Duration tick, long snapshotCount, int inboxCapacity, int maxBatch,
                         Map<Long, String> memberAddresses) {

    /** 100 ms: with the core's defaults, a 100 ms heartbeat and a 1–2 s election timeout (etcd's defaults). */
    public static final Duration DEFAULT_TICK = Duration.ofMillis(100);
    /** 10,000 applied entries between snapshots: a restart replays at most that many (§7). */
    public static final long DEFAULT_SNAPSHOT_COUNT = 10_000;
    /** 65,536 queued inputs: absorbs a burst of many clients, then pushes back with BUSY. */
    public static final int DEFAULT_INBOX_CAPACITY = 65_536;
    /** 4,096 inputs per loop turn share one Ready and one fsync (group commit), yet a turn stays short. */
    public static final int DEFAULT_MAX_BATCH = 4_096;

    /**
     * Checks every field alone and against each other; throws {@link IllegalArgumentException} naming the
     * field. Not checked, on purpose: {@code raft.snapshotCatchUpEntries < snapshotCount} (keeping more
     * entries than one snapshot interval only keeps a longer log; tests run 1,000 behind a snapshot every 250).
     */
    public NodeConfig {
        Objects.requireNonNull(raft, "raft");
        Objects.requireNonNull(tick, "tick");
        Objects.requireNonNull(memberAddresses, "memberAddresses");
        require(!tick.isNegative() && !tick.isZero(), "tick must be positive, got " + tick);
        require(snapshotCount >= 1, "snapshotCount must be at least 1, got " + snapshotCount);
        require(inboxCapacity >= 1, "inboxCapacity must be at least 1, got " + inboxCapacity);
        require(maxBatch >= 1, "maxBatch must be at least 1, got " + maxBatch);
        // A batch is drained from the inbox: a larger batch than the inbox can hold is a bound that never binds.
        require(maxBatch <= inboxCapacity, "maxBatch (" + maxBatch + ") must not exceed inboxCapacity ("
                + inboxCapacity + "): a batch is drained from the inbox");
        memberAddresses = Map.copyOf(memberAddresses);
    }

    /** The defaults for server {@code id}: {@code builder(RaftOptions.defaults(id, configuration))…build()}. */
    public static NodeConfig defaults(long id, Configuration configuration, Map<Long, String> memberAddresses) {
        return builder(RaftOptions.defaults(id, configuration)).memberAddresses(memberAddresses).build();
    }

    /** A builder around the core's {@code raft} options, every other field at its default. */
    public static Builder builder(RaftOptions raft) {
        return new Builder(raft);
    }

    /** A builder holding this configuration, to change some of it. */
    public Builder toBuilder() {
        return new Builder(raft).tick(tick).snapshotCount(snapshotCount).inboxCapacity(inboxCapacity)
                .maxBatch(maxBatch).memberAddresses(memberAddresses);
    }

    private static void require(boolean condition, String message) {
        if (!condition) {
            throw new IllegalArgumentException(message);
        }
    }

    /** Builds a {@link NodeConfig}; starts from the defaults. Setters are named like the fields. */
    public static final class Builder {
        private RaftOptions raft;
        private Duration tick = DEFAULT_TICK;
        private long snapshotCount = DEFAULT_SNAPSHOT_COUNT;
        private int inboxCapacity = DEFAULT_INBOX_CAPACITY;
        private int maxBatch = DEFAULT_MAX_BATCH;
        private Map<Long, String> memberAddresses = Map.of();

        private Builder(RaftOptions raft) {
            this.raft = raft;
        }

        public Builder raft(RaftOptions raft) {
            this.raft = raft;
            return this;
        }

        public Builder tick(Duration tick) {
            this.tick = tick;
            return this;
        }

        public Builder snapshotCount(long snapshotCount) {
            this.snapshotCount = snapshotCount;
            return this;
        }

        public Builder inboxCapacity(int inboxCapacity) {
            this.inboxCapacity = inboxCapacity;
            return this;
        }

        public Builder maxBatch(int maxBatch) {
            this.maxBatch = maxBatch;
            return this;
        }

        public Builder memberAddresses(Map<Long, String> memberAddresses) {
            this.memberAddresses = memberAddresses;
            return this;
        }

        /** The configuration; throws {@link IllegalArgumentException} naming the field when it is invalid. */
        public NodeConfig build() {
            return new NodeConfig(raft, tick, snapshotCount, inboxCapacity, maxBatch, memberAddresses);
        }
    }
}
