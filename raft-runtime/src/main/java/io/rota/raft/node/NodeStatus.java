package io.rota.raft.node;

import io.rota.raft.core.Configuration;
import io.rota.raft.core.RaftNode;
import io.rota.raft.core.Role;

import java.util.Map;

/**
 * A consistent picture of one node, taken on the driver thread. {@code progress} is the leader's per-member
 * replication state (empty unless leading); {@code configuration} is the node's latest configuration, the
 * one in force for it (§4.1: from the append, committed or not).
 */
public record NodeStatus(long id, Role role, long term, long leaderId, long firstIndex, long lastIndex,
                         long commitIndex, long appliedIndex, long snapshotIndex,
                         Map<Long, RaftNode.ProgressView> progress, Configuration configuration) {
}
