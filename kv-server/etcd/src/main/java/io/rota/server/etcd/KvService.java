package io.rota.server.etcd;

import io.grpc.stub.StreamObserver;
import io.rota.etcd.api.CompactionRequest;
import io.rota.etcd.api.CompactionResponse;
import io.rota.etcd.api.DeleteRangeRequest;
import io.rota.etcd.api.DeleteRangeResponse;
import io.rota.etcd.api.KVGrpc;
import io.rota.etcd.api.PutRequest;
import io.rota.etcd.api.PutResponse;
import io.rota.etcd.api.RangeRequest;
import io.rota.etcd.api.RangeResponse;
import io.rota.etcd.api.TxnRequest;
import io.rota.etcd.api.TxnResponse;
import io.rota.proto.Frame;

/**
 * etcd's KV service: Range, Put, DeleteRange, Txn and Compact as Rota's requests. Range's min/max mod/create
 * revision filters travel in Rota's RangeRequest and are applied by the store, inside a txn too (design Y44).
 */
final class KvService extends KVGrpc.KVImplBase {

    private final Calls calls;

    KvService(Calls calls) {
        this.calls = calls;
    }

    @Override
    public void range(RangeRequest request, StreamObserver<RangeResponse> out) {
        calls.unary(() -> Frame.newBuilder().setRangeRequest(EtcdCodec.range(request)).build(),
                f -> EtcdCodec.recode(f.getRangeResponse(), RangeResponse.getDefaultInstance(), calls.clusterId), out);
    }

    @Override
    public void put(PutRequest request, StreamObserver<PutResponse> out) {
        calls.unary(() -> Frame.newBuilder().setPutRequest(
                        EtcdCodec.recode(request, io.rota.proto.PutRequest.getDefaultInstance())).build(),
                f -> EtcdCodec.recode(f.getPutResponse(), PutResponse.getDefaultInstance(), calls.clusterId), out);
    }

    @Override
    public void deleteRange(DeleteRangeRequest request, StreamObserver<DeleteRangeResponse> out) {
        calls.unary(() -> Frame.newBuilder().setDeleteRangeRequest(EtcdCodec.recode(
                        request, io.rota.proto.DeleteRangeRequest.getDefaultInstance())).build(),
                f -> EtcdCodec.recode(f.getDeleteRangeResponse(), DeleteRangeResponse.getDefaultInstance(), calls.clusterId),
                out);
    }

    @Override
    public void txn(TxnRequest request, StreamObserver<TxnResponse> out) {
        calls.unary(() -> {
            TxnIntervals.check(request);
            return Frame.newBuilder().setTxnRequest(EtcdCodec.txn(request)).build();
        },
                f -> EtcdCodec.txn(f.getTxnResponse(), calls.clusterId), out);
    }

    /**
     * Rota's replicated compaction: the history at and below the revision goes, on every member; a later read
     * or watch of it gets etcd's compacted error. {@code physical} asks etcd to answer only once the backend
     * has dropped the old versions; Rota drops them as it applies the command, before it answers, so every
     * answer is already physical.
     */
    @Override
    public void compact(CompactionRequest request, StreamObserver<CompactionResponse> out) {
        calls.unary(() -> Frame.newBuilder().setCompactionRequest(io.rota.proto.CompactionRequest.newBuilder()
                        .setRevision(request.getRevision())).build(),
                f -> CompactionResponse.newBuilder().setHeader(EtcdCodec.header(f.getCompactionResponse().getHeader(),
                        calls.clusterId)).build(), out);
    }
}
