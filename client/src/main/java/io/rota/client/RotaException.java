package io.rota.client;

import io.rota.proto.Error;

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
        SESSION_EXPIRED
    }

    private final Code code;
    private final long compactRevision;

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
     * Creates a COMPACTED exception naming the revision the history is compacted at.
     *
     * @param message         a human-readable description
     * @param compactRevision the compact revision (read at it, watch from the next one)
     * @return the exception
     */
    static RotaException compacted(String message, long compactRevision) {
        return new RotaException(Code.COMPACTED, message, null, compactRevision);
    }

    private RotaException(Code code, String message, Throwable cause, long compactRevision) {
        super(code + ": " + message, cause);
        this.code = code;
        this.compactRevision = compactRevision;
    }

    /**
     * Creates an exception with a cause.
     *
     * @param code    the kind of failure
     * @param message a human-readable description
     * @param cause   the underlying failure
     */
    public RotaException(Code code, String message, Throwable cause) {
        this(code, message, cause, 0);
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
     * The kind of failure.
     *
     * @return the code
     */
    public Code code() {
        return code;
    }

    /** Maps a server error; an unspecified code counts as UNAVAILABLE. */
    static RotaException fromError(Error error) {
        Code code = switch (error.getCode()) {
            case NOT_LEADER -> Code.NOT_LEADER;
            case TIMEOUT -> Code.TIMEOUT;
            case COMPACTED -> Code.COMPACTED;
            case LEASE_NOT_FOUND -> Code.LEASE_NOT_FOUND;
            case REQUEST_TOO_LARGE -> Code.REQUEST_TOO_LARGE;
            case INVALID_ARGUMENT -> Code.INVALID_ARGUMENT;
            case SESSION_EXPIRED -> Code.SESSION_EXPIRED;
            default -> Code.UNAVAILABLE;
        };
        return new RotaException(code, error.getMessage(), null, error.getCompactRevision());
    }
}
