package io.rota.server.api;

import io.rota.proto.Error;
import io.rota.raft.core.ConfChangeResult;
import io.rota.raft.node.ConfChangeRefusedException;
import io.rota.raft.node.RaftException;
import io.rota.server.auth.AuthException;
import io.rota.server.cluster.ClusterView;
import io.rota.server.kv.StoreException;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeoutException;

/**
 * The server's one error map: every failure a call can meet becomes here the typed {@link Error} the client
 * gets. Facts a client acts on travel in {@code Error}'s fields (leader hint, compact revision, retry-after),
 * never only in the message. A {@link StoreException} already carries its {@code Error} (the state machine
 * builds it with the proto code), so the only table is {@link #fromRaft} from the driver's codes.
 */
final class Errors {

    private Errors() {
    }

    /** The failure a future failed with: {@link CompletionException}'s cause (the one unwrap on this side). */
    static Throwable unwrap(Throwable failure) {
        return failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
    }

    /** Whether {@code failure} is the driver's {@code code}. */
    static boolean isRaft(Throwable failure, RaftException.Code code) {
        return unwrap(failure) instanceof RaftException re && re.code() == code;
    }

    static Error of(Throwable failure, ClusterView view) {
        Throwable e = unwrap(failure);
        if (e instanceof StoreException se) {
            return se.error();
        }
        if (e instanceof AuthException ae) {
            return ae.error();
        }
        if (e instanceof MembershipRequests.ApplyError ae) {
            return ae.error;
        }
        if (e instanceof ConfChangeRefusedException refused) {
            return membershipRefused(refused);
        }
        if (e instanceof RaftException re) {
            Error.Builder error = fromRaft(re);
            return error.getCode() == Error.Code.NOT_LEADER ? withLeaderHint(error, view) : error.build();
        }
        if (e instanceof Forwarder.Unreachable) {
            return Frames.error(Error.Code.UNAVAILABLE, e.getMessage() + "; retry shortly (not applied)");
        }
        if (e instanceof TimeoutException || e instanceof IOException) {
            return Frames.error(Error.Code.TIMEOUT, "the leader did not answer the forwarded request ("
                    + e.getMessage() + "); it may or may not have been applied");
        }
        return internal(e);
    }

    /**
     * The driver's failure codes as the protocol's, one row each. Exhaustive with no default: a new
     * {@link RaftException.Code} does not compile until it has a row here.
     */
    static Error.Builder fromRaft(RaftException e) {
        return switch (e.code()) {
            case NOT_LEADER -> builder(Error.Code.NOT_LEADER, e.getMessage());
            case UNAVAILABLE -> builder(Error.Code.UNAVAILABLE, e.getMessage());
            case NO_LEADER -> builder(Error.Code.UNAVAILABLE, e.getMessage()).setReason(Error.Reason.NO_LEADER);
            case TIMEOUT -> builder(Error.Code.TIMEOUT, e.getMessage());
            case BUSY -> builder(Error.Code.UNAVAILABLE, "busy: " + e.getMessage());
            case STOPPED -> builder(Error.Code.UNAVAILABLE, e.getMessage() + "; use another member");
        };
    }

    /**
     * A refused membership change: MEMBERSHIP_REFUSED with the core's reason as a field, and, when waiting
     * helps (a change in progress, a learner catching up), a retry-after of one second.
     */
    static Error membershipRefused(ConfChangeRefusedException e) {
        String message = e.reason() == ConfChangeResult.Reason.QUORUM_AT_RISK
                ? e.getMessage() + ". " + QUORUM_AT_RISK_ADVICE : e.getMessage();
        Error.Builder error = builder(Error.Code.MEMBERSHIP_REFUSED, message)
                .setMembershipRefusal(e.reason().name()).setMembershipRetryable(e.retryable());
        if (e.retryable()) {
            error.setRetryAfterMs(MEMBERSHIP_RETRY_AFTER_MS);
        }
        return error.build();
    }

    /** What the operator can do about QUORUM_AT_RISK; the etcd door, which has no force, says etcd's words instead. */
    static final String QUORUM_AT_RISK_ADVICE = "Start the silent members, or use --force to change anyway"
            + " (docs/operations.md, 'Membership changes that lose quorum')";

    /** A second: a change in progress commits within a round trip, a learner catches up within seconds. */
    static final long MEMBERSHIP_RETRY_AFTER_MS = 1_000;

    /** A bug or an unexpected failure: UNAVAILABLE, so a client may try another member. */
    static Error internal(Throwable e) {
        return Frames.error(Error.Code.UNAVAILABLE, "internal error: " + e);
    }

    /** NOT_LEADER with the leader hint: the leader's id and client address when this member knows them. */
    static Error notLeader(String message, ClusterView view) {
        return withLeaderHint(builder(Error.Code.NOT_LEADER, message), view);
    }

    /**
     * The answer of a member that retried {@code error} itself until its deadline: an UNAVAILABLE one (no
     * leader yet, the leader busy or unreachable) tells the client to wait at least {@code retryInterval},
     * the interval the member itself was retrying at, before trying again.
     */
    static Error gaveUp(Error error, Duration retryInterval) {
        if (error.getCode() != Error.Code.UNAVAILABLE || error.getRetryAfterMs() > 0) {
            return error;
        }
        return error.toBuilder().setRetryAfterMs(Math.max(1, retryInterval.toMillis())).build();
    }

    private static Error withLeaderHint(Error.Builder error, ClusterView view) {
        long leader = view.leaderId();
        error.setLeaderId(leader);
        view.clientAddress(leader).ifPresent(error::setLeaderEndpoint);
        return error.build();
    }

    private static Error.Builder builder(Error.Code code, String message) {
        return Error.newBuilder().setCode(code).setMessage(message);
    }
}
