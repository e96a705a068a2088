package io.rota.server.etcd;

import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.netty.util.concurrent.EventExecutor;
import io.rota.etcd.api.LeaseGrantRequest;
import io.rota.etcd.api.LeaseGrantResponse;
import io.rota.etcd.api.LeaseGrpc;
import io.rota.etcd.api.LeaseKeepAliveRequest;
import io.rota.etcd.api.LeaseKeepAliveResponse;
import io.rota.etcd.api.LeaseLeasesRequest;
import io.rota.etcd.api.LeaseLeasesResponse;
import io.rota.etcd.api.LeaseRevokeRequest;
import io.rota.etcd.api.LeaseRevokeResponse;
import io.rota.etcd.api.LeaseTimeToLiveRequest;
import io.rota.etcd.api.LeaseTimeToLiveResponse;
import io.rota.etcd.api.ResponseHeader;
import io.rota.proto.Error;
import io.rota.proto.Frame;

/**
 * etcd's Lease service on Rota's leases. Two answers follow etcd rather than Rota's native protocol: a
 * keep-alive of a lease that does not exist answers TTL 0 (not an error: clients take it as "expired"), and
 * TimeToLive of one answers TTL -1.
 */
final class LeaseService extends LeaseGrpc.LeaseImplBase {

    private final Calls calls;

    LeaseService(Calls calls) {
        this.calls = calls;
    }

    @Override
    public void leaseGrant(LeaseGrantRequest request, StreamObserver<LeaseGrantResponse> out) {
        calls.unary(() -> Frame.newBuilder().setLeaseGrantRequest(EtcdCodec.recode(
                        request, io.rota.proto.LeaseGrantRequest.getDefaultInstance())).build(),
                f -> EtcdCodec.recode(f.getLeaseGrantResponse(), LeaseGrantResponse.getDefaultInstance(), calls.clusterId), out);
    }

    @Override
    public void leaseRevoke(LeaseRevokeRequest request, StreamObserver<LeaseRevokeResponse> out) {
        calls.unary(() -> Frame.newBuilder().setLeaseRevokeRequest(
                        io.rota.proto.LeaseRevokeRequest.newBuilder().setID(request.getID())).build(),
                f -> EtcdCodec.recode(f.getLeaseRevokeResponse(), LeaseRevokeResponse.getDefaultInstance(), calls.clusterId),
                out);
    }

    @Override
    public void leaseTimeToLive(LeaseTimeToLiveRequest request, StreamObserver<LeaseTimeToLiveResponse> out) {
        Frame frame = Frame.newBuilder().setLeaseTimeToLiveRequest(io.rota.proto.LeaseTimeToLiveRequest.newBuilder()
                .setID(request.getID()).setKeys(request.getKeys())).build();
        calls.unary(() -> frame, f -> EtcdCodec.recode(f.getLeaseTimeToLiveResponse(),
                LeaseTimeToLiveResponse.getDefaultInstance(), calls.clusterId), new StreamObserver<LeaseTimeToLiveResponse>() {
            @Override
            public void onNext(LeaseTimeToLiveResponse value) {
                out.onNext(value);
            }

            @Override
            public void onError(Throwable t) {
                if (io.grpc.Status.fromThrowable(t).getCode() == io.grpc.Status.Code.NOT_FOUND) {
                    out.onNext(LeaseTimeToLiveResponse.newBuilder().setHeader(ResponseHeader.newBuilder()
                            .setClusterId(calls.clusterId)).setID(request.getID()).setTTL(-1).build());
                    out.onCompleted();
                } else {
                    out.onError(t);
                }
            }

            @Override
            public void onCompleted() {
                out.onCompleted();
            }
        });
    }

    @Override
    public void leaseLeases(LeaseLeasesRequest request, StreamObserver<LeaseLeasesResponse> out) {
        calls.unary(() -> Frame.newBuilder().setLeaseLeasesRequest(io.rota.proto.LeaseLeasesRequest.getDefaultInstance())
                        .build(),
                f -> EtcdCodec.recode(f.getLeaseLeasesResponse(), LeaseLeasesResponse.getDefaultInstance(), calls.clusterId),
                out);
    }

    /**
     * The keep-alive stream: each request renews its lease through the log (as the native protocol does)
     * and is answered in turn. Answers are written on one executor per stream, so they never interleave.
     */
    @Override
    public StreamObserver<LeaseKeepAliveRequest> leaseKeepAlive(StreamObserver<LeaseKeepAliveResponse> responses) {
        ServerCallStreamObserver<LeaseKeepAliveResponse> out = (ServerCallStreamObserver<LeaseKeepAliveResponse>) responses;
        EventExecutor loop = calls.responders.next();
        EtcdCallers.Caller caller = EtcdCallers.Caller.current();   // checked again for every renewal
        boolean[] closed = {false};
        out.setOnCancelHandler(() -> loop.execute(() -> closed[0] = true));
        return new StreamObserver<>() {
            @Override
            public void onNext(LeaseKeepAliveRequest request) {
                Frame frame = Frame.newBuilder().setLeaseKeepAliveRequest(
                        io.rota.proto.LeaseKeepAliveRequest.newBuilder().setID(request.getID())).build();
                calls.route(frame, caller).whenCompleteAsync((f, e) -> {
                    if (closed[0]) {
                        return;
                    }
                    if (e != null) {
                        closed[0] = true;
                        out.onError(EtcdErrors.internal(e));
                    } else if (f.hasError() && f.getError().getCode() == Error.Code.LEASE_NOT_FOUND) {
                        out.onNext(LeaseKeepAliveResponse.newBuilder().setHeader(ResponseHeader.newBuilder()
                                .setClusterId(calls.clusterId)).setID(request.getID()).setTTL(0).build());
                    } else if (f.hasError()) {
                        closed[0] = true;
                        out.onError(EtcdErrors.of(f.getError()));
                    } else {
                        out.onNext(EtcdCodec.recode(f.getLeaseKeepAliveResponse(), LeaseKeepAliveResponse.getDefaultInstance(),
                                calls.clusterId));
                    }
                }, loop);
            }

            @Override
            public void onError(Throwable t) {
                loop.execute(() -> closed[0] = true);
            }

            @Override
            public void onCompleted() {
                loop.execute(() -> {
                    if (!closed[0]) {
                        closed[0] = true;
                        out.onCompleted();
                    }
                });
            }
        };
    }
}
