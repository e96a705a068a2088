package io.rota.server.etcd;

import com.google.protobuf.ByteString;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.rota.etcd.api.LockGrpc;
import io.rota.etcd.api.LockRequest;
import io.rota.etcd.api.LockResponse;
import io.rota.etcd.api.UnlockRequest;
import io.rota.etcd.api.UnlockResponse;
import io.rota.proto.DeleteRangeRequest;
import io.rota.proto.Frame;
import io.rota.server.watch.WatchHub;

/**
 * etcd's v3lock service, the server side of etcd's mutex recipe, on Rota's KV and watches: Lock takes a
 * {@link Turn} for the key {@code name/<lease in hex>} owned by the lease, and answers when the turn comes
 * (no key of the lock with a lower create revision). Unlock deletes the key. A caller that gives up while
 * waiting has its key deleted, as etcd's mutex does.
 */
final class LockService extends LockGrpc.LockImplBase {

    private final Calls calls;
    private final WatchHub hub;

    LockService(Calls calls, WatchHub hub) {
        this.calls = calls;
        this.hub = hub;
    }

    @Override
    public void lock(LockRequest request, StreamObserver<LockResponse> responses) {
        ServerCallStreamObserver<LockResponse> out = (ServerCallStreamObserver<LockResponse>) responses;
        ByteString prefix = request.getName().concat(ByteString.copyFromUtf8("/"));
        ByteString key = Turn.key(prefix, request.getLease());
        Turn turn = new Turn(calls, hub, prefix, key, (header, rev) -> {
            out.onNext(LockResponse.newBuilder().setHeader(EtcdCodec.header(header, calls.clusterId)).setKey(key)
                    .build());
            out.onCompleted();
        }, out::onError);
        out.setOnCancelHandler(() -> turn.loop.execute(turn::abandon));
        turn.enter(ByteString.EMPTY, request.getLease(), kv -> { });
    }

    @Override
    public void unlock(UnlockRequest request, StreamObserver<UnlockResponse> out) {
        calls.unary(() -> Frame.newBuilder().setDeleteRangeRequest(DeleteRangeRequest.newBuilder()
                        .setKey(request.getKey())).build(),
                f -> UnlockResponse.newBuilder().setHeader(EtcdCodec.header(f.getDeleteRangeResponse().getHeader(),
                        calls.clusterId)).build(), out);
    }
}
