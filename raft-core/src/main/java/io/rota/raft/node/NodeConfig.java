package io.rota.raft.node;

import io.rota.raft.core.Configuration;
import io.rota.raft.core.RaftOptions;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;

/**
 * How a {@link RaftDriver} runs one node.
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

    public NodeConfig {
        Objects.requireNonNull(raft, "raft");
        if (tick.isNegative() || tick.isZero() || snapshotCount < 1 || inboxCapacity < 1 || maxBatch < 1) {
            throw new IllegalArgumentException("invalid node config: tick " + tick + ", snapshotCount "
                    + snapshotCount + ", inbox " + inboxCapacity + ", batch " + maxBatch);
        }
        memberAddresses = Map.copyOf(memberAddresses);
    }

    /** Defaults: 100 ms ticks (heartbeat 100 ms, election 1–2 s), a snapshot every 10,000 entries. */
    public static NodeConfig defaults(long id, Configuration configuration, Map<Long, String> memberAddresses) {
        return new NodeConfig(RaftOptions.defaults(id, configuration), Duration.ofMillis(100), 10_000,
                65_536, 4_096, memberAddresses);
    }

    public NodeConfig withTick(Duration newTick) {
        return new NodeConfig(raft, newTick, snapshotCount, inboxCapacity, maxBatch, memberAddresses);
    }

    public NodeConfig withSnapshotCount(long count) {
        return new NodeConfig(raft, tick, count, inboxCapacity, maxBatch, memberAddresses);
    }

    public NodeConfig withRaft(RaftOptions options) {
        return new NodeConfig(options, tick, snapshotCount, inboxCapacity, maxBatch, memberAddresses);
    }
}
