package io.rota.raft.node;

import io.rota.raft.core.RaftNode;
import io.rota.raft.core.Role;

import java.util.Map;

/** A consistent picture of one node, taken on the driver thread. */
public record NodeStatus(long id, Role role, long term, long leaderId, long firstIndex, long lastIndex,
                         long commitIndex, long appliedIndex, long snapshotIndex,
                         Map<Long, RaftNode.ProgressView> progress) {
}
