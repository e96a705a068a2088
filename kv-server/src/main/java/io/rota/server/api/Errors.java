package io.rota.server.api;

import io.rota.proto.Error;
import io.rota.raft.node.RaftException;
import io.rota.server.cluster.ClusterView;
import io.rota.server.kv.StoreException;

import java.io.IOException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeoutException;

/** Every failure a call can meet, as the typed {@link Error} the client gets. */
final class Errors {

    private Errors() {
    }

    static Error of(Throwable failure, ClusterView view) {
        Throwable e = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
        if (e instanceof StoreException se) {
            return se.error();
        }
        if (e instanceof RaftException re) {
            return switch (re.code()) {
                case NOT_LEADER -> notLeader(re.getMessage(), view);
                case UNAVAILABLE -> Frames.error(Error.Code.UNAVAILABLE, re.getMessage());
                case TIMEOUT -> Frames.error(Error.Code.TIMEOUT, re.getMessage());
                case BUSY -> Frames.error(Error.Code.UNAVAILABLE, "busy: " + re.getMessage());
                case STOPPED -> Frames.error(Error.Code.UNAVAILABLE, re.getMessage() + "; use another member");
            };
        }
        if (e instanceof Forwarder.Unreachable) {
            return Frames.error(Error.Code.UNAVAILABLE, e.getMessage() + "; retry shortly (not applied)");
        }
        if (e instanceof TimeoutException || e instanceof IOException) {
            return Frames.error(Error.Code.TIMEOUT, "the leader did not answer the forwarded request ("
                    + e.getMessage() + "); it may or may not have been applied");
        }
        return Frames.error(Error.Code.UNAVAILABLE, "internal error: " + e);
    }

    /** NOT_LEADER with the leader's id and client address when this member knows them. */
    static Error notLeader(String message, ClusterView view) {
        long leader = view.leaderId();
        Error.Builder b = Error.newBuilder().setCode(Error.Code.NOT_LEADER).setMessage(message).setLeaderId(leader);
        view.clientAddress(leader).ifPresent(b::setLeaderEndpoint);
        return b.build();
    }
}
