package io.rota.server.etcd;

import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.netty.util.concurrent.EventExecutorGroup;
import io.rota.proto.Frame;
import io.rota.server.api.RequestRouter;
import io.rota.server.authgate.AuthGate;
import io.rota.server.auth.AuthState;
import io.rota.server.etcd.EtcdCallers.Caller;

import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * What every etcd service does with a call: build Rota's request frame, hand it to the native
 * {@link RequestRouter} (the one path writes and reads take, whichever door they came in by), and answer
 * with the translated response or etcd's error status. Answers are written from {@code responders}, never
 * from the Raft driver's thread that completes the router's futures (as the native ClientHandler hops to
 * its event loop).
 *
 * <p>While auth is enabled every request is checked by the native {@link AuthGate} as the calling
 * {@link Caller} (its token or its certificate's user) before it is routed, exactly as the native port checks
 * its frames: {@link #route} is the one way in for every etcd service.
 */
final class Calls {

    final RequestRouter router;
    final long clusterId;
    final EventExecutorGroup responders;

    Calls(RequestRouter router, long clusterId, EventExecutorGroup responders) {
        this.router = router;
        this.clusterId = clusterId;
        this.responders = responders;
    }

    /**
     * A unary call: {@code request} builds Rota's frame (it may throw a status for a request Rota cannot
     * serve), {@code answer} turns the successful response frame into etcd's.
     */
    <R> void unary(Supplier<Frame> request, Function<Frame, R> answer, StreamObserver<R> out) {
        Caller caller = Caller.current();
        unary(request, frame -> route(frame, caller), answer, out);
    }

    /** As {@link #unary(Supplier, Function, StreamObserver)}, with {@code send} in place of one router call. */
    <R> void unary(Supplier<Frame> request, Function<Frame, CompletableFuture<Frame>> send, Function<Frame, R> answer,
                   StreamObserver<R> out) {
        Frame frame;
        try {
            frame = request.get();
        } catch (StatusRuntimeException e) {
            out.onError(e);
            return;
        }
        send.apply(frame).whenCompleteAsync((f, e) -> {
            R r;
            try {
                if (e != null) {
                    throw EtcdErrors.internal(e);
                }
                r = answer.apply(EtcdCodec.ok(f));
            } catch (StatusRuntimeException s) {
                out.onError(s);
                return;
            } catch (RuntimeException x) {
                out.onError(EtcdErrors.internal(x));
                return;
            }
            out.onNext(r);
            out.onCompleted();
        }, responders);
    }

    /**
     * Route {@code frame} as {@code caller}. Auth disabled: straight to the router (one volatile read). Enabled:
     * the gate checks the caller's token (or certificate user) and the request's keys; a refusal completes the
     * future exceptionally with etcd's status, and an allowed request is routed with its user, so a lease revoke
     * or a time-to-live with keys gets the router's further checks.
     */
    CompletableFuture<Frame> route(Frame frame, Caller caller) {
        AuthGate gate = router.gate();
        AuthState seen = gate.applied();
        CompletableFuture<Frame> answer;
        if (!seen.enabled()) {
            answer = router.handle(frame, null, seen.revision());
        } else {
            AuthGate.Verdict verdict;
            try {
                verdict = check(gate, frame, caller);
            } catch (StatusRuntimeException refused) {
                return CompletableFuture.failedFuture(refused);
            }
            answer = router.handle(verdict.frame(), verdict.user(), seen.revision());
        }
        if (!AuthGate.readsAfterBarrier(frame)) {
            return answer;   // the leader checks a write it is forwarded against its own state
        }
        // A read answers from the state after its ReadIndex: checked again if that holds an auth change this
        // member had not applied when the call came in (AuthGate.applied), as etcd checks a read after its barrier.
        return answer.thenCompose(f -> {
            StatusRuntimeException refused = gate.changedSince(seen) ? refusal(frame, caller) : null;
            return refused == null ? CompletableFuture.completedFuture(f) : CompletableFuture.failedFuture(refused);
        });
    }

    /** Null if {@code caller} may make this request (or auth is disabled), else etcd's refusal. */
    StatusRuntimeException refusal(Frame frame, Caller caller) {
        AuthGate gate = router.gate();
        if (!gate.enabled()) {
            return null;
        }
        try {
            check(gate, frame, caller);
            return null;
        } catch (StatusRuntimeException refused) {
            return refused;
        }
    }

    private static AuthGate.Verdict check(AuthGate gate, Frame frame, Caller caller) {
        if (caller.anonymous()) {
            throw EtcdErrors.invalid(EtcdCallers.USER_EMPTY);
        }
        Frame named = caller.token().isEmpty() ? frame : frame.toBuilder().setAuthToken(caller.token()).build();
        AuthGate.Verdict verdict = gate.check(named, caller.certUser(), caller.remote());
        if (verdict.error() != null) {
            throw EtcdErrors.of(verdict.error());
        }
        return verdict;
    }
}
