package io.rota.raft.node;

import io.rota.raft.core.RaftNode;
import io.rota.raft.core.Role;
import io.rota.raft.core.SoftState;

/**
 * This member's role, term and known leader, as one Ready's soft state reported them: what a
 * {@link RoleListener} is told whenever any of the three changes.
 *
 * @param term     the member's current term (§5.1)
 * @param role     its role in that term
 * @param leaderId the leader it knows of in that term, itself when it leads, or {@link RaftNode#NONE}
 */
public record RoleChange(long term, Role role, long leaderId) {

    static RoleChange of(SoftState s) {
        return new RoleChange(s.currentTerm(), s.role(), s.leaderId());
    }

    public boolean isLeader() {
        return role == Role.LEADER;
    }
}
