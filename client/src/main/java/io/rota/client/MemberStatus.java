package io.rota.client;

import java.util.List;

/**
 * What one member says about itself and the cluster (its answer to a Status call).
 *
 * @param endpoint         the client address the status was read from
 * @param memberId         the answering member's Raft id
 * @param name             its name, or "" if it has not published its addresses yet
 * @param version          its server version
 * @param leaderId         the leader it knows (0: none)
 * @param raftTerm         its current Raft term
 * @param raftIndex        its commit index
 * @param raftAppliedIndex the last log index applied to its state machine
 * @param revision         its store revision
 * @param errors           problems it reports (e.g. "no leader is known"); immutable, empty when healthy
 */
public record MemberStatus(String endpoint, long memberId, String name, String version, long leaderId,
                           long raftTerm, long raftIndex, long raftAppliedIndex, long revision,
                           List<String> errors) {

    /**
     * Copies the list.
     *
     * @param endpoint see the record component
     * @param memberId see the record component
     * @param name see the record component
     * @param version see the record component
     * @param leaderId see the record component
     * @param raftTerm see the record component
     * @param raftIndex see the record component
     * @param raftAppliedIndex see the record component
     * @param revision see the record component
     * @param errors see the record component
     */
    public MemberStatus {
        errors = List.copyOf(errors);
    }

    /**
     * Whether the answering member is the leader.
     *
     * @return true if it leads
     */
    public boolean isLeader() {
        return memberId != 0 && memberId == leaderId;
    }
}
