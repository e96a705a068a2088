package io.rota.client;

/**
 * A failed Rota call: a {@link Code} saying what kind of failure it was, and the server's (or the
 * client's) human-readable message. Unchecked; the blocking methods throw it directly, the async ones
 * complete their future exceptionally with it.
 */
public final class RotaException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** The kind of failure; the server's codes from {@code rota.v1.Error.Code}. */
    public enum Code {
        /** The member asked is not the leader and could not forward (the client follows the hint itself). */
        NOT_LEADER,
        /** No leader, no member reachable, the client is closed, or the cluster is overloaded. */
        UNAVAILABLE,
        /** The call did not complete before its deadline; a write may or may not have been applied. */
        TIMEOUT,
        /** The requested revision is older than the retained history. */
        COMPACTED,
        /** The lease does not exist (never granted, revoked or expired). */
        LEASE_NOT_FOUND,
        /** A key, value, transaction or frame exceeds the server's bound. */
        REQUEST_TOO_LARGE,
        /** The request is malformed or inconsistent with the state (e.g. an empty key). */
        INVALID_ARGUMENT,
        /** The client's session is unknown or expired on the server (the request was not applied). */
        SESSION_EXPIRED,
        /**
         * A membership change was refused; {@link #membershipRefusal()} says why (for example
         * {@code LEARNER_BEHIND}: promote again once the learner has caught up).
         */
        MEMBERSHIP_REFUSED,
        /**
         * The cluster's space quota is used up (its NOSPACE alarm is armed): a write that adds data was refused
         * and not applied. Free space (compact the history, delete keys), then disarm the alarm
         * ({@link Maintenance#disarmAlarms}).
         */
        NO_SPACE,
        /**
         * Auth is enabled and the user lacks the permission: a key outside its roles' ranges, or a call that
         * needs the root role (membership, maintenance, auth administration).
         */
        PERMISSION_DENIED,
        /**
         * Login refused: unknown user or wrong password. After repeated failures {@link #retryAfterMs()} says
         * how long the server will refuse further attempts without checking them.
         */
        AUTH_FAILED,
        /**
         * Auth is enabled and the call carried no token, or a token issued before the latest user or role
         * change. A client built with {@link RotaClient.Builder#credentials} logs in again by itself (once per
         * call); without credentials the call fails with this code.
         */
        INVALID_AUTH_TOKEN,
        /** An auth call that needs auth enabled (a login) while it is disabled. */
        AUTH_NOT_ENABLED
    }

    private final Code code;
    private final long compactRevision;
    private final long retryAfterMs;
    private final String membershipRefusal;

    /**
     * Creates an exception.
     *
     * @param code    the kind of failure
     * @param message a human-readable description
     */
    public RotaException(Code code, String message) {
        this(code, message, null);
    }

    /**
     * An exception with the typed facts a server's error carries (built by {@link Errors}, the client's one
     * error map).
     *
     * @param compactRevision for COMPACTED, the compact revision (0: not known)
     * @param retryAfterMs    how long the server asked the client to wait before retrying (0: not said)
     */
    static RotaException of(Code code, String message, long compactRevision, long retryAfterMs) {
        return new RotaException(code, message, null, compactRevision, retryAfterMs, "");
    }

    /** A refused membership change, with the server's reason name. */
    static RotaException membershipRefused(String message, String reason, long retryAfterMs) {
        return new RotaException(Code.MEMBERSHIP_REFUSED, message, null, 0, retryAfterMs, reason);
    }

    private RotaException(Code code, String message, Throwable cause, long compactRevision, long retryAfterMs,
                          String membershipRefusal) {
        super(code + ": " + message, cause);
        this.code = code;
        this.compactRevision = compactRevision;
        this.retryAfterMs = retryAfterMs;
        this.membershipRefusal = membershipRefusal;
    }

    /**
     * Creates an exception with a cause.
     *
     * @param code    the kind of failure
     * @param message a human-readable description
     * @param cause   the underlying failure
     */
    public RotaException(Code code, String message, Throwable cause) {
        this(code, message, cause, 0, 0, "");
    }

    /**
     * For COMPACTED: the revision the history is compacted at (read at it, watch from the next one).
     *
     * @return the compact revision, or 0 when not known or not COMPACTED
     */
    public long compactRevision() {
        return compactRevision;
    }

    /**
     * For UNAVAILABLE from the server: how long it asked clients to wait before trying again (a full table,
     * no leader yet). The SDK's own retries already wait at least this long.
     *
     * @return the wait in milliseconds, or 0 when not said
     */
    public long retryAfterMs() {
        return retryAfterMs;
    }

    /**
     * For MEMBERSHIP_REFUSED: why, as the server names it — the Raft core's reasons
     * ({@code CHANGE_IN_PROGRESS}, {@code NOT_YET_COMMITTED_IN_TERM}, {@code TRANSFERRING_LEADERSHIP},
     * {@code ALREADY_MEMBER}, {@code NOT_A_MEMBER}, {@code NOT_A_LEARNER}, {@code LEARNER_BEHIND},
     * {@code LEARNER_NOT_RESPONDING}, {@code LAST_VOTER}, {@code QUORUM_AT_RISK}: strict reconfiguration,
     * see {@link Cluster#removeMemberAsync(long, boolean)}) or the server's ({@code NAME_TAKEN}, {@code NOT_A_VOTER}).
     *
     * @return the reason, or "" when not MEMBERSHIP_REFUSED
     */
    public String membershipRefusal() {
        return membershipRefusal;
    }

    /**
     * The kind of failure.
     *
     * @return the code
     */
    public Code code() {
        return code;
    }
}
