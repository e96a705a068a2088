package io.rota.server.etcd;

import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import io.rota.etcd.api.KeyValue;
import io.rota.etcd.api.ResponseHeader;
import io.rota.proto.Frame;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.List;

/**
 * Translation between etcd's messages ({@code io.rota.etcd.api}) and Rota's ({@code io.rota.proto}).
 * Most pairs have the same wire format field for field (Rota's client protocol was modelled on etcd's), so
 * they are recoded by their bytes ({@link #recode}); EtcdWireTest checks every pair recoded that way. The
 * rest — the response header, whose field numbers differ, the range request, the txn and the watch
 * response — are translated field by field.
 */
final class EtcdCodec {

    private EtcdCodec() {
    }

    /**
     * Rota's {@code --cluster-id} (a name) as etcd's 64-bit cluster id: the first 8 bytes of its SHA-256,
     * so every member of a cluster reports the same id and two clusters with different names differ.
     */
    static long clusterId(String name) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(name.getBytes(StandardCharsets.UTF_8));
            long id = 0;
            for (int i = 0; i < Long.BYTES; i++) {
                id = (id << 8) | (d[i] & 0xff);
            }
            return id;
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }

    /** etcd's header from Rota's (revision, raft term, member id) plus the cluster id. */
    static ResponseHeader header(io.rota.proto.ResponseHeader h, long clusterId) {
        return ResponseHeader.newBuilder().setClusterId(clusterId).setMemberId(h.getMemberId())
                .setRevision(h.getRevision()).setRaftTerm(h.getRaftTerm()).build();
    }

    /**
     * {@code from} decoded as {@code type}'s type: for messages whose field numbers and types are the same in
     * both protocols. A "header" field, if {@code from} has one, is translated with {@link #header} instead.
     */
    @SuppressWarnings("unchecked")
    static <T extends Message> T recode(Message from, T type, long clusterId) {
        Message.Builder to = type.newBuilderForType();
        FieldDescriptor h = from.getDescriptorForType().findFieldByName("header");
        Message body = h == null ? from : from.toBuilder().clearField(h).build();
        try {
            to.mergeFrom(body.toByteString());
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException("not the same wire format: " + from.getDescriptorForType().getFullName()
                    + " and " + to.getDescriptorForType().getFullName(), e);
        }
        if (h != null && from.hasField(h)) {
            to.setField(to.getDescriptorForType().findFieldByName("header"),
                    header((io.rota.proto.ResponseHeader) from.getField(h), clusterId));
        }
        return (T) to.build();
    }

    /** Same as {@link #recode(Message, Message, long)} for messages without a header. */
    static <T extends Message> T recode(Message from, T type) {
        return recode(from, type, 0);
    }

    static KeyValue kv(io.rota.proto.KeyValue kv) {
        return recode(kv, KeyValue.getDefaultInstance());
    }

    static List<KeyValue> kvs(List<io.rota.proto.KeyValue> kvs) {
        List<KeyValue> out = new ArrayList<>(kvs.size());
        kvs.forEach(kv -> out.add(kv(kv)));
        return out;
    }

    /** etcd's RangeRequest as Rota's, the min/max mod/create revision filters included (the store applies them). */
    static io.rota.proto.RangeRequest range(io.rota.etcd.api.RangeRequest r) {
        return io.rota.proto.RangeRequest.newBuilder().setKey(r.getKey()).setRangeEnd(r.getRangeEnd())
                .setLimit(r.getLimit()).setRevision(r.getRevision()).setSerializable(r.getSerializable())
                .setKeysOnly(r.getKeysOnly()).setCountOnly(r.getCountOnly())
                .setSortOrderValue(r.getSortOrderValue()).setSortTargetValue(r.getSortTargetValue())
                .setMinModRevision(r.getMinModRevision()).setMaxModRevision(r.getMaxModRevision())
                .setMinCreateRevision(r.getMinCreateRevision()).setMaxCreateRevision(r.getMaxCreateRevision())
                .build();
    }

    /**
     * etcd's Txn as Rota's, nested txns (etcd 3.3+) included: Rota's RequestOp carries one at etcd's field
     * number. The depth is bounded by gRPC's parse of etcd's message (protobuf's recursion limit), the state
     * machine refuses more than its own limit (design Y40).
     */
    static io.rota.proto.TxnRequest txn(io.rota.etcd.api.TxnRequest t) {
        io.rota.proto.TxnRequest.Builder out = io.rota.proto.TxnRequest.newBuilder();
        t.getCompareList().forEach(c -> out.addCompare(recode(c, io.rota.proto.Compare.getDefaultInstance())));
        t.getSuccessList().forEach(op -> out.addSuccess(op(op)));
        t.getFailureList().forEach(op -> out.addFailure(op(op)));
        return out.build();
    }

    private static io.rota.proto.RequestOp op(io.rota.etcd.api.RequestOp op) {
        io.rota.proto.RequestOp.Builder out = io.rota.proto.RequestOp.newBuilder();
        switch (op.getRequestCase()) {
            case REQUEST_RANGE -> out.setRequestRange(range(op.getRequestRange()));
            case REQUEST_PUT -> out.setRequestPut(recode(op.getRequestPut(), io.rota.proto.PutRequest.getDefaultInstance()));
            case REQUEST_DELETE_RANGE -> out.setRequestDeleteRange(
                    recode(op.getRequestDeleteRange(), io.rota.proto.DeleteRangeRequest.getDefaultInstance()));
            case REQUEST_TXN -> out.setRequestTxn(txn(op.getRequestTxn()));
            case REQUEST_NOT_SET -> throw EtcdErrors.invalid("etcdserver: txn op without a request");
        }
        return out.build();
    }

    static io.rota.etcd.api.TxnResponse txn(io.rota.proto.TxnResponse t, long clusterId) {
        io.rota.etcd.api.TxnResponse.Builder out = io.rota.etcd.api.TxnResponse.newBuilder()
                .setHeader(header(t.getHeader(), clusterId)).setSucceeded(t.getSucceeded());
        for (io.rota.proto.ResponseOp r : t.getResponsesList()) {
            io.rota.etcd.api.ResponseOp.Builder op = io.rota.etcd.api.ResponseOp.newBuilder();
            switch (r.getResponseCase()) {
                case RESPONSE_RANGE -> op.setResponseRange(
                        recode(r.getResponseRange(), io.rota.etcd.api.RangeResponse.getDefaultInstance(), clusterId));
                case RESPONSE_PUT -> op.setResponsePut(
                        recode(r.getResponsePut(), io.rota.etcd.api.PutResponse.getDefaultInstance(), clusterId));
                case RESPONSE_DELETE_RANGE -> op.setResponseDeleteRange(recode(r.getResponseDeleteRange(),
                        io.rota.etcd.api.DeleteRangeResponse.getDefaultInstance(), clusterId));
                case RESPONSE_TXN -> op.setResponseTxn(txn(r.getResponseTxn(), clusterId));
                case RESPONSE_NOT_SET -> {
                }
            }
            out.addResponses(op);
        }
        return out.build();
    }

    /** etcd's watch create request as Rota's (fragment is dropped: Rota never splits a response). */
    static io.rota.proto.WatchCreateRequest watchCreate(io.rota.etcd.api.WatchCreateRequest w) {
        io.rota.proto.WatchCreateRequest.Builder out = io.rota.proto.WatchCreateRequest.newBuilder()
                .setKey(w.getKey()).setRangeEnd(w.getRangeEnd()).setStartRevision(w.getStartRevision())
                .setProgressNotify(w.getProgressNotify()).setPrevKv(w.getPrevKv()).setWatchId(w.getWatchId());
        w.getFiltersValueList().forEach(out::addFiltersValue);
        return out.build();
    }

    /**
     * Rota's watch response as etcd's. Rota's cancel code has no etcd field: the reason says it; a cancel
     * for compaction carries compact_revision, which is what etcd clients act on.
     */
    static io.rota.etcd.api.WatchResponse watchResponse(io.rota.proto.WatchResponse w, long clusterId) {
        io.rota.etcd.api.WatchResponse.Builder out = io.rota.etcd.api.WatchResponse.newBuilder()
                .setHeader(header(w.getHeader(), clusterId)).setWatchId(w.getWatchId()).setCreated(w.getCreated())
                .setCanceled(w.getCanceled()).setCompactRevision(w.getCompactRevision())
                .setCancelReason(w.getCancelReason());
        w.getEventsList().forEach(e -> out.addEvents(recode(e, io.rota.etcd.api.Event.getDefaultInstance())));
        return out.build();
    }

    /** The body of a frame that must carry one (an error frame is turned into a status by the caller). */
    static Frame ok(Frame f) {
        if (f.hasError()) {
            throw EtcdErrors.of(f.getError());
        }
        return f;
    }
}
