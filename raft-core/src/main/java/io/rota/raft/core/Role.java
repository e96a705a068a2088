package io.rota.raft.core;

/** The roles of §5.1, plus the pre-candidate of §9.6 (PreVote). */
public enum Role {
    FOLLOWER,
    /** Asks whether it could win before it disrupts the cluster by raising its term (§9.6). */
    PRE_CANDIDATE,
    CANDIDATE,
    LEADER
}
