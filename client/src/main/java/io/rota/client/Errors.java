package io.rota.client;

import io.rota.proto.Error;
import io.rota.proto.WatchResponse;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;

/**
 * The client's one error map: every failure the SDK reports becomes a {@link RotaException} here — a
 * server's {@link Error} (its code through one exhaustive table, its typed facts copied), a transport
 * failure, a watch the server canceled. The server side's counterpart is {@code io.rota.server.api.Errors}.
 * What to do about a failure is decided elsewhere, by {@link Recovery}.
 */
final class Errors {

    private Errors() {
    }

    /**
     * The protocol's codes as the SDK's, one row each. Exhaustive with no default: a new
     * {@code Error.Code} does not compile until it has a row here. A code the server did not set (or one
     * newer than this client) counts as UNAVAILABLE: retryable, and not applied.
     */
    static RotaException.Code code(Error.Code code) {
        return switch (code) {
            case NOT_LEADER -> RotaException.Code.NOT_LEADER;
            case UNAVAILABLE, CODE_UNSPECIFIED, UNRECOGNIZED -> RotaException.Code.UNAVAILABLE;
            // The SDK's one "may or may not have been applied": a forgotten response is that too (issue 31).
            case TIMEOUT, OUTCOME_UNKNOWN -> RotaException.Code.TIMEOUT;
            case COMPACTED -> RotaException.Code.COMPACTED;
            case LEASE_NOT_FOUND -> RotaException.Code.LEASE_NOT_FOUND;
            case REQUEST_TOO_LARGE -> RotaException.Code.REQUEST_TOO_LARGE;
            case INVALID_ARGUMENT -> RotaException.Code.INVALID_ARGUMENT;
            case SESSION_EXPIRED -> RotaException.Code.SESSION_EXPIRED;
            case MEMBERSHIP_REFUSED -> RotaException.Code.MEMBERSHIP_REFUSED;
            case NO_SPACE -> RotaException.Code.NO_SPACE;

            case PERMISSION_DENIED -> RotaException.Code.PERMISSION_DENIED;
            case AUTH_FAILED -> RotaException.Code.AUTH_FAILED;
            case INVALID_AUTH_TOKEN -> RotaException.Code.INVALID_AUTH_TOKEN;
            case AUTH_NOT_ENABLED -> RotaException.Code.AUTH_NOT_ENABLED;
        };
    }

    /** A server's error, with its compact revision and retry-after. */
    static RotaException of(Error error) {
        if (error.getCode() == Error.Code.MEMBERSHIP_REFUSED) {
            return RotaException.membershipRefused(error.getMessage(), error.getMembershipRefusal(),
                    error.getRetryAfterMs());
        }
        return RotaException.of(code(error.getCode()), error.getMessage(), error.getCompactRevision(),
                error.getRetryAfterMs());
    }

    /**
     * A call that failed without an answer: no answer in time (TIMEOUT, {@code timeoutMessage}), a
     * RotaException it already carries (a lost connection, a refused connect), anything else UNAVAILABLE.
     *
     * @param endpoint the member asked, named in the message (null: none)
     */
    static RotaException of(Throwable failure, String endpoint, String timeoutMessage) {
        Throwable cause = unwrap(failure);
        if (cause instanceof TimeoutException) {
            return new RotaException(RotaException.Code.TIMEOUT, timeoutMessage);
        }
        if (cause instanceof RotaException r) {
            return r;
        }
        return new RotaException(RotaException.Code.UNAVAILABLE,
                endpoint == null ? String.valueOf(cause) : endpoint + ": " + cause, cause);
    }

    /** {@link #of(Throwable, String, String)} for a failure of the SDK's own calls (they time out typed). */
    static RotaException of(Throwable failure) {
        return of(failure, null, "no answer in time");
    }

    /**
     * Why the server ended a watch, from the typed fields (the reason text is only quoted): COMPACTED with
     * the compact revision, anything else UNAVAILABLE.
     */
    static RotaException ofCanceledWatch(WatchResponse canceled) {
        if (canceled.getCancelCode() == WatchResponse.CancelCode.COMPACTED) {
            return RotaException.of(RotaException.Code.COMPACTED, canceled.getCancelReason(),
                    canceled.getCompactRevision(), 0);
        }
        return new RotaException(RotaException.Code.UNAVAILABLE,
                "watch canceled by the server: " + canceled.getCancelReason());
    }

    /** What a call of a closed client fails with. */
    static RotaException closed() {
        return new RotaException(RotaException.Code.UNAVAILABLE, "the client is closed");
    }

    /** The failure a future failed with, without its {@link CompletionException}/{@link ExecutionException} wrappers. */
    static Throwable unwrap(Throwable t) {
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    /** Waits for {@code future}; a failure is thrown as the RotaException it carries. */
    static <T> T await(CompletableFuture<T> future) {
        try {
            return future.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RotaException(RotaException.Code.UNAVAILABLE, "interrupted while waiting", e);
        } catch (ExecutionException e) {
            throw of(e);
        }
    }
}
