package io.rota.server.etcd;

import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.netty.util.concurrent.EventExecutorGroup;
import io.rota.proto.Frame;
import io.rota.server.api.RequestRouter;

import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * What every etcd service does with a call: build Rota's request frame, hand it to the native
 * {@link RequestRouter} (the one path writes and reads take, whichever door they came in by), and answer
 * with the translated response or etcd's error status. Answers are written from {@code responders}, never
 * from the Raft driver's thread that completes the router's futures (as the native ClientHandler hops to
 * its event loop).
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
        unary(request, router::handle, answer, out);
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
}
