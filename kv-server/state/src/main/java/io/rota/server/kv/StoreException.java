package io.rota.server.kv;

import io.rota.proto.Error;

/**
 * A typed refusal of a command or read (bad input, missing lease, compacted revision, ...). The state
 * machine turns it into an {@link Error} result; it never escapes {@link CoordinationStateMachine#apply}.
 * The read-side API throws it to the server, which sends {@link #error()} to the client.
 */
public final class StoreException extends RuntimeException {

    /**
     * How long a client is told to wait when a bounded table is full: a table drains as leases expire or
     * keys are deleted, and leases count in whole seconds, so retrying sooner only adds load. A constant, as
     * the state machine's results must be the same on every member.
     */
    static final long FULL_RETRY_AFTER_MS = 1_000;

    private final transient Error error;

    StoreException(Error.Code code, String message) {
        this(Error.newBuilder().setCode(code).setMessage(message).build());
    }

    StoreException(Error error) {
        // No stack trace: this is an expected outcome, not a bug, and apply must stay cheap.
        super(error.getMessage(), null, false, false);
        this.error = error;
    }

    static StoreException compacted(long requested, long compactRevision) {
        return new StoreException(Error.newBuilder().setCode(Error.Code.COMPACTED)
                .setMessage("revision " + requested + " is compacted (history starts after " + compactRevision + ")")
                .setCompactRevision(compactRevision).build());
    }

    static StoreException invalid(String message) {
        return new StoreException(Error.Code.INVALID_ARGUMENT, message);
    }

    /** INVALID_ARGUMENT of a case a door tells apart: {@code reason} says which, the message is for humans. */
    static StoreException invalid(Error.Reason reason, String message) {
        return new StoreException(Error.newBuilder().setCode(Error.Code.INVALID_ARGUMENT).setReason(reason)
                .setMessage(message).build());
    }

    static StoreException tooLarge(String message) {
        return new StoreException(Error.Code.REQUEST_TOO_LARGE, message);
    }

    /** REQUEST_TOO_LARGE of a case a door tells apart (a txn with too many ops). */
    static StoreException tooLarge(Error.Reason reason, String message) {
        return new StoreException(Error.newBuilder().setCode(Error.Code.REQUEST_TOO_LARGE).setReason(reason)
                .setMessage(message).build());
    }

    /** A bounded table is full: UNAVAILABLE, with a retry-after the client's backoff honours. */
    static StoreException full(String message) {
        return new StoreException(Error.newBuilder().setCode(Error.Code.UNAVAILABLE).setMessage(message)
                .setRetryAfterMs(FULL_RETRY_AFTER_MS).build());
    }

    static StoreException leaseNotFound(long id) {
        return new StoreException(Error.Code.LEASE_NOT_FOUND, "lease " + id + " not found");
    }

    public Error error() {
        return error;
    }
}
