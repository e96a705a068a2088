package io.rota.raft.node;

import io.rota.raft.core.RaftNode;

/**
 * Why a proposal or a read did not succeed. Every failure is typed so that callers (the server, the SDK)
 * can decide whether and where to retry.
 */
public final class RaftException extends RuntimeException {

    /** What went wrong. */
    public enum Code {
        /** This node is not the leader; {@link #leaderId()} and {@link #leaderAddress()} name it if known. */
        NOT_LEADER,
        /** No leader, or the leader cannot reach a quorum, within the deadline. */
        UNAVAILABLE,
        /** This node knows no leader right now (an election may be under way): retry shortly. */
        NO_LEADER,
        /** The deadline passed; a write may or may not have been committed (indeterminate). */
        TIMEOUT,
        /** The node's inbox or uncommitted tail is full: back off and retry. */
        BUSY,
        /** The node is shutting down or has stopped. */
        STOPPED
    }

    private final Code code;
    private final long leaderId;
    private final String leaderAddress;

    public RaftException(Code code, String message) {
        this(code, message, RaftNode.NONE, null);
    }

    public RaftException(Code code, String message, long leaderId, String leaderAddress) {
        super(message, null, false, false);
        this.code = code;
        this.leaderId = leaderId;
        this.leaderAddress = leaderAddress;
    }

    public Code code() {
        return code;
    }

    /** The leader's id when known, else {@link RaftNode#NONE}. */
    public long leaderId() {
        return leaderId;
    }

    /** The leader's address when known, else {@code null}. */
    public String leaderAddress() {
        return leaderAddress;
    }
}
