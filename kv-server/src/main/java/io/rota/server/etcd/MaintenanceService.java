package io.rota.server.etcd;

import io.grpc.stub.StreamObserver;
import io.rota.etcd.api.AlarmRequest;
import io.rota.etcd.api.AlarmResponse;
import io.rota.etcd.api.DefragmentRequest;
import io.rota.etcd.api.DefragmentResponse;
import io.rota.etcd.api.HashKVRequest;
import io.rota.etcd.api.HashKVResponse;
import io.rota.etcd.api.MaintenanceGrpc;
import io.rota.etcd.api.MoveLeaderRequest;
import io.rota.etcd.api.MoveLeaderResponse;
import io.rota.etcd.api.ResponseHeader;
import io.rota.etcd.api.StatusRequest;
import io.rota.etcd.api.StatusResponse;
import io.rota.proto.Frame;
import io.rota.proto.HashKvRequest;

/**
 * etcd's Maintenance service: Status, HashKV and MoveLeader from Rota's own; Alarm lists none (Rota raises no
 * alarms: a full store refuses writes with a retry-after instead) and Defragment has nothing to do (RocksDB
 * compacts its files by itself). Hash (of the whole backend file) and Snapshot (a bbolt file) have no
 * Rota equivalent and stay UNIMPLEMENTED.
 */
final class MaintenanceService extends MaintenanceGrpc.MaintenanceImplBase {

    /**
     * The etcd API level Rota speaks, reported as Status's version: etcd clients read it as the server's
     * etcd version (Rota's own version is in the native status and in /status).
     */
    static final String ETCD_API_VERSION = "3.4.0";

    private final Calls calls;

    MaintenanceService(Calls calls) {
        this.calls = calls;
    }

    @Override
    public void status(StatusRequest request, StreamObserver<StatusResponse> out) {
        calls.unary(() -> Frame.newBuilder().setStatusRequest(io.rota.proto.StatusRequest.getDefaultInstance()).build(),
                f -> {
                    io.rota.proto.StatusResponse s = f.getStatusResponse();
                    return StatusResponse.newBuilder().setHeader(EtcdCodec.header(s.getHeader(), calls.clusterId))
                            .setVersion(ETCD_API_VERSION).setLeader(s.getLeader()).setRaftIndex(s.getRaftIndex())
                            .setRaftTerm(s.getRaftTerm()).setRaftAppliedIndex(s.getRaftAppliedIndex())
                            .addAllErrors(s.getErrorsList()).build();
                }, out);
    }

    @Override
    public void hashKV(HashKVRequest request, StreamObserver<HashKVResponse> out) {
        calls.unary(() -> Frame.newBuilder().setHashKvRequest(HashKvRequest.newBuilder()
                        .setRevision(request.getRevision())).build(),
                f -> EtcdCodec.recode(f.getHashKvResponse(), HashKVResponse.getDefaultInstance(), calls.clusterId), out);
    }

    @Override
    public void moveLeader(MoveLeaderRequest request, StreamObserver<MoveLeaderResponse> out) {
        calls.unary(() -> Frame.newBuilder().setMoveLeaderRequest(io.rota.proto.MoveLeaderRequest.newBuilder()
                        .setTargetId(request.getTargetID())).build(),
                f -> MoveLeaderResponse.newBuilder().setHeader(EtcdCodec.header(f.getMoveLeaderResponse().getHeader(),
                        calls.clusterId)).build(), out);
    }

    @Override
    public void alarm(AlarmRequest request, StreamObserver<AlarmResponse> out) {
        if (request.getAction() != AlarmRequest.AlarmAction.GET) {
            out.onError(EtcdErrors.unimplemented("etcdserver: Rota raises no alarms, so none can be activated or"
                    + " deactivated; only GET (which lists none) is served"));
            return;
        }
        out.onNext(AlarmResponse.newBuilder().setHeader(ResponseHeader.newBuilder().setClusterId(calls.clusterId))
                .build());
        out.onCompleted();
    }

    @Override
    public void defragment(DefragmentRequest request, StreamObserver<DefragmentResponse> out) {
        out.onNext(DefragmentResponse.newBuilder().setHeader(ResponseHeader.newBuilder().setClusterId(calls.clusterId))
                .build());
        out.onCompleted();
    }
}
