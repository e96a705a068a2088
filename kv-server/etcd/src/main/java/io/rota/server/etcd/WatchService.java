package io.rota.server.etcd;

import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.netty.util.concurrent.EventExecutor;
import io.rota.etcd.api.WatchGrpc;
import io.rota.etcd.api.WatchRequest;
import io.rota.etcd.api.WatchResponse;
import io.rota.proto.Frame;
import io.rota.proto.WatchCancelRequest;
import io.rota.proto.WatchProgressRequest;
import io.rota.server.auth.AuthState;
import io.rota.server.watch.WatchAuth;
import io.rota.server.watch.WatchHub;
import io.rota.server.watch.WatchSink;
import io.rota.server.watch.WatchStream;

/**
 * etcd's Watch service: each gRPC stream is one {@link WatchStream} of the native {@link WatchHub} — the same
 * registration, catch-up from the history, ordering, bounded queues and progress notifications as a native
 * connection — writing to the gRPC stream instead of a Netty channel. gRPC's readiness is the flow control:
 * a client that stops reading leaves responses queued in their watchers, whose bound cancels them.
 */
final class WatchService extends WatchGrpc.WatchImplBase {

    private final Calls calls;
    private final WatchHub hub;

    WatchService(Calls calls, WatchHub hub) {
        this.calls = calls;
        this.hub = hub;
    }

    @Override
    public StreamObserver<WatchRequest> watch(StreamObserver<WatchResponse> responses) {
        ServerCallStreamObserver<WatchResponse> out = (ServerCallStreamObserver<WatchResponse>) responses;
        GrpcSink sink = new GrpcSink(out, calls.responders.next(), calls.clusterId);
        WatchStream stream = hub.open(sink);
        EtcdCallers.Caller caller = EtcdCallers.Caller.current();
        out.setOnReadyHandler(() -> sink.execute(stream::drain));
        out.setOnCancelHandler(() -> sink.execute(() -> sink.close(stream)));
        return new StreamObserver<>() {
            @Override
            public void onNext(WatchRequest request) {
                sink.execute(() -> handle(stream, sink, request, caller));
            }

            @Override
            public void onError(Throwable t) {
                sink.execute(() -> sink.close(stream));
            }

            @Override
            public void onCompleted() {
                sink.execute(() -> {
                    if (!sink.closed) {
                        sink.close(stream);
                        out.onCompleted();
                    }
                });
            }
        };
    }

    /**
     * One request of the stream. A create is checked as the stream's caller first (auth enabled: the user must
     * be allowed to read the watched range, as on the native port); a refusal is answered as etcd answers it,
     * a created-and-canceled response with the reason, and the stream stays open for other watches.
     */
    private void handle(WatchStream stream, GrpcSink sink, WatchRequest request, EtcdCallers.Caller caller) {
        if (sink.closed) {
            return;
        }
        io.rota.proto.WatchRequest.Builder rota = io.rota.proto.WatchRequest.newBuilder();
        switch (request.getRequestUnionCase()) {
            case CREATE_REQUEST -> rota.setCreateRequest(EtcdCodec.watchCreate(request.getCreateRequest()));
            case CANCEL_REQUEST -> rota.setCancelRequest(
                    WatchCancelRequest.newBuilder().setWatchId(request.getCancelRequest().getWatchId()));
            case PROGRESS_REQUEST -> rota.setProgressRequest(WatchProgressRequest.getDefaultInstance());
            case REQUESTUNION_NOT_SET -> {
                return;   // etcd ignores an empty request too
            }
        }
        io.rota.proto.WatchRequest req = rota.build();
        AuthState seen = calls.router.gate().applied();
        if (req.hasCreateRequest()) {
            io.grpc.StatusRuntimeException refused = calls.refusal(Frame.newBuilder().setWatchRequest(req).build(), caller);
            if (refused != null) {
                sink.refuse(refused.getStatus().getDescription());
                return;
            }
        }
        // Who the create was checked as: an auth change after it cancels the watch unless that user is root.
        String user = !seen.enabled() ? null : caller.token().isEmpty() ? caller.certUser() : seen.userOf(caller.token(), calls.router.gate().tokens());
        stream.handle(0, req, WatchAuth.of(user, seen));
    }

    /** A gRPC response stream as a watch sink; every method but execute runs on {@link #loop}. */
    private static final class GrpcSink implements WatchSink {
        /** etcd's text for a refused permission, the start of an auth-changed cancel's reason. */
        static final String PERMISSION_DENIED = "etcdserver: permission denied";
        private final ServerCallStreamObserver<WatchResponse> out;
        private final EventExecutor loop;
        private final long clusterId;
        private boolean closed;

        GrpcSink(ServerCallStreamObserver<WatchResponse> out, EventExecutor loop, long clusterId) {
            this.out = out;
            this.loop = loop;
            this.clusterId = clusterId;
        }

        @Override
        public boolean isWritable() {
            return !closed && out.isReady();
        }

        @Override
        public void write(Frame frame) {
            if (closed) {
                return;
            }
            if (frame.hasWatchResponse()) {
                io.rota.proto.WatchResponse w = frame.getWatchResponse();
                if (w.getCancelCode() == io.rota.proto.WatchResponse.CancelCode.AUTH_CHANGED) {
                    // etcd's clients know this reason (rpctypes.ErrGRPCPermissionDenied); ours follows it.
                    w = w.toBuilder().setCancelReason(PERMISSION_DENIED + ": " + w.getCancelReason()).build();
                }
                out.onNext(EtcdCodec.watchResponse(w, clusterId));
            } else if (frame.hasError() && frame.getError().getReason() != io.rota.proto.Error.Reason.NO_SUCH_WATCH) {
                // A refused create, as etcd answers it: created and canceled at once, with watch id -1 and the
                // reason. (A cancel of an unknown watch is not answered at all, as in etcd.)
                refuse("etcdserver: " + frame.getError().getMessage());
            }
        }

        /** A create refused: created and canceled at once, watch id -1, with the reason. */
        void refuse(String reason) {
            if (!closed) {
                out.onNext(WatchResponse.newBuilder().setHeader(io.rota.etcd.api.ResponseHeader.newBuilder()
                                .setClusterId(clusterId)).setWatchId(-1).setCreated(true).setCanceled(true)
                        .setCancelReason(reason).build());
            }
        }

        @Override
        public void flush() {
            // gRPC flushes each message itself.
        }

        @Override
        public void execute(Runnable task) {
            loop.execute(task);
        }

        void close(WatchStream stream) {
            if (!closed) {
                closed = true;
                stream.close();
            }
        }
    }
}
