package io.rota.client;

/**
 * The SDK's one retry classification: what a call (or a watch) does after a failure with a given
 * {@link RotaException.Code}. The retrier and the watches both ask {@link #of}; neither keeps its own list.
 */
enum Recovery {
    /** Final: the failure goes to the caller. */
    FAIL,
    /** Not applied, or safe to repeat: try again on another member after a backoff. */
    ANOTHER_MEMBER,
    /** Not applied: try again on the leader the error's hint names (or, without a hint, another member). */
    FOLLOW_LEADER,
    /** Not applied, and the session is gone: a write registers a new session and retries under it. */
    NEW_SESSION,
    /** Not applied, and the auth token is missing or stale: log in again (once per call) and retry. */
    NEW_TOKEN;

    /**
     * One row per code. Exhaustive with no default: a new {@link RotaException.Code} does not compile until
     * it is classified here.
     */
    static Recovery of(RotaException.Code code) {
        return switch (code) {
            case UNAVAILABLE, TIMEOUT -> ANOTHER_MEMBER;
            case NOT_LEADER -> FOLLOW_LEADER;
            case SESSION_EXPIRED -> NEW_SESSION;
            // The server retried the refusals that pass with time until its deadline; what is left is the caller's.
            // Not applied, and it stays so until an operator frees space and disarms the alarm.
            case NO_SPACE -> FAIL;
            case INVALID_AUTH_TOKEN -> NEW_TOKEN;
            case COMPACTED, LEASE_NOT_FOUND, REQUEST_TOO_LARGE, INVALID_ARGUMENT, MEMBERSHIP_REFUSED,
                 PERMISSION_DENIED, AUTH_FAILED, AUTH_NOT_ENABLED -> FAIL;
        };
    }

    /** Whether a call or watch without a session simply tries again (on another member or the leader). */
    boolean retries() {
        return this == ANOTHER_MEMBER || this == FOLLOW_LEADER;
    }
}
