package io.rota.server.kv;

import com.google.protobuf.ByteString;
import io.rota.proto.Command;
import io.rota.proto.CommandResult;
import io.rota.proto.Compare;
import io.rota.proto.DeleteRangeRequest;
import io.rota.proto.DeleteRangeResponse;
import io.rota.proto.Error;
import io.rota.proto.KeyValue;
import io.rota.proto.LeaseExpireRequest;
import io.rota.proto.LeaseGrantRequest;
import io.rota.proto.LeaseGrantResponse;
import io.rota.proto.LeaseLeasesResponse;
import io.rota.proto.LeaseStatus;
import io.rota.proto.PutRequest;
import io.rota.proto.PutResponse;
import io.rota.proto.RangeRequest;
import io.rota.proto.RangeResponse;
import io.rota.proto.RequestOp;
import io.rota.proto.ResponseHeader;
import io.rota.proto.ResponseOp;
import io.rota.proto.TxnRequest;
import io.rota.proto.TxnResponse;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The reference model of {@link StateMachineModelTest}: etcd v3's KV, Txn and Lease semantics written as simply
 * as they are documented — a sorted map of keys, a revision counter, a lease → keys map.
 */
final class ReferenceModel {

    /** The bounds the model knows; the state machine it is compared with gets the same. */
    static final Limits LIMITS = Harness.LIMITS.toBuilder().maxKeys(10_000).build();

    /** One key as etcd describes it. */
    record Kv(ByteString value, long create, long mod, long version, long lease) {
        KeyValue proto(ByteString key) {
            return KeyValue.newBuilder().setKey(key).setValue(value).setCreateRevision(create)
                    .setModRevision(mod).setVersion(version).setLease(lease).build();
        }
    }

    /** A failed op: only its error code is modelled (the message is for humans). */
    static final class Refused extends RuntimeException {
        final Error.Code code;

        Refused(Error.Code code) {
            super(code.toString(), null, false, false);
            this.code = code;
        }
    }

    TreeMap<ByteString, Kv> kvs = new TreeMap<>(ByteString.unsignedLexicographicalComparator());
    TreeMap<Long, Long> leaseTtl = new TreeMap<>();
    /** Lease id → the index of its grant (the model has no keep-alives): what an expiry must name. */
    TreeMap<Long, Long> leaseRenewal = new TreeMap<>();
    TreeMap<Long, TreeSet<ByteString>> leaseKeys = new TreeMap<>();
    long revision = 1;

    /** etcd's range_end rules. */
    List<ByteString> keysIn(ByteString key, ByteString end) {
        List<ByteString> out = new ArrayList<>();
        for (ByteString k : kvs.keySet()) {
            if (inRange(k, key, end)) {
                out.add(k);
            }
        }
        return out;
    }

    static boolean inRange(ByteString k, ByteString key, ByteString end) {
        var order = ByteString.unsignedLexicographicalComparator();
        if (end.isEmpty()) {
            return k.equals(key);
        }
        if (end.equals(ByteString.copyFrom(new byte[] {0}))) {
            return order.compare(k, key) >= 0;
        }
        return order.compare(k, key) >= 0 && order.compare(k, end) < 0;
    }

    static void checkKey(ByteString key) {
        if (key.isEmpty()) {
            throw new Refused(Error.Code.INVALID_ARGUMENT);
        }
    }

    void write(ByteString key, Kv kv) {
        remove(key);
        kvs.put(key, kv);
        if (kv.lease() != 0) {
            leaseKeys.computeIfAbsent(kv.lease(), l -> new TreeSet<>(ByteString.unsignedLexicographicalComparator()))
                    .add(key);
        }
    }

    void remove(ByteString key) {
        Kv old = kvs.remove(key);
        if (old != null && old.lease() != 0) {
            leaseKeys.get(old.lease()).remove(key);
        }
    }

    /** A put at {@code rev} (the revision of the write in progress). */
    PutResponse.Builder put(PutRequest req, long rev) {
        checkKey(req.getKey());
        if (req.getLease() != 0 && !leaseTtl.containsKey(req.getLease())) {
            throw new Refused(Error.Code.LEASE_NOT_FOUND);
        }
        Kv prev = kvs.get(req.getKey());
        write(req.getKey(), new Kv(req.getValue(), prev == null ? rev : prev.create(), rev,
                prev == null ? 1 : prev.version() + 1, req.getLease()));
        PutResponse.Builder out = PutResponse.newBuilder();
        if (prev != null && req.getPrevKv()) {
            out.setPrevKv(prev.proto(req.getKey()));
        }
        return out;
    }

    DeleteRangeResponse.Builder delete(DeleteRangeRequest req) {
        checkKey(req.getKey());
        DeleteRangeResponse.Builder out = DeleteRangeResponse.newBuilder();
        List<ByteString> victims = keysIn(req.getKey(), req.getRangeEnd());
        out.setDeleted(victims.size());
        for (ByteString k : victims) {
            if (req.getPrevKv()) {
                out.addPrevKvs(kvs.get(k).proto(k));
            }
            remove(k);
        }
        return out;
    }

    RangeResponse range(RangeRequest req) {
        checkKey(req.getKey());
        List<ByteString> keys = keysIn(req.getKey(), req.getRangeEnd());
        long limit = req.getLimit() == 0 ? Long.MAX_VALUE : req.getLimit();
        RangeResponse.Builder out = RangeResponse.newBuilder().setHeader(header(revision))
                .setCount(keys.size()).setMore(keys.size() > limit);
        if (!req.getCountOnly()) {
            for (int i = 0; i < keys.size() && i < limit; i++) {
                KeyValue kv = kvs.get(keys.get(i)).proto(keys.get(i));
                out.addKvs(req.getKeysOnly() ? kv.toBuilder().clearValue().build() : kv);
            }
        }
        return out.build();
    }

    boolean holds(Compare c) {
        List<ByteString> keys = keysIn(c.getKey(), c.getRangeEnd());
        if (keys.isEmpty()) {
            return c.getTarget() != Compare.Target.VALUE && holds(c, new Kv(ByteString.EMPTY, 0, 0, 0, 0));
        }
        return keys.stream().allMatch(k -> holds(c, kvs.get(k)));
    }

    static boolean holds(Compare c, Kv kv) {
        int cmp = switch (c.getTarget()) {
            case VERSION -> Long.compare(kv.version(), c.getVersion());
            case CREATE -> Long.compare(kv.create(), c.getCreateRevision());
            case MOD -> Long.compare(kv.mod(), c.getModRevision());
            case VALUE -> ByteString.unsignedLexicographicalComparator().compare(kv.value(), c.getValue());
            case LEASE -> Long.compare(kv.lease(), c.getLease());
            default -> throw new AssertionError(c);
        };
        return switch (c.getResult()) {
            case EQUAL -> cmp == 0;
            case NOT_EQUAL -> cmp != 0;
            case GREATER -> cmp > 0;
            case LESS -> cmp < 0;
            default -> throw new AssertionError(c);
        };
    }

    ReferenceModel copy() {
        ReferenceModel m = new ReferenceModel();
        m.kvs = new TreeMap<>(kvs);
        m.leaseTtl = new TreeMap<>(leaseTtl);
        m.leaseRenewal = new TreeMap<>(leaseRenewal);
        leaseKeys.forEach((l, keys) -> m.leaseKeys.put(l, new TreeSet<>(keys)));
        m.revision = revision;
        return m;
    }

    /** Apply one command at Raft index {@code index}; what the state machine must answer. */
    CommandResult apply(long index, Command cmd) {
        ReferenceModel before = copy();
        try {
            return execute(index, cmd);
        } catch (Refused r) {
            kvs = before.kvs;
            leaseTtl = before.leaseTtl;
            leaseRenewal = before.leaseRenewal;
            leaseKeys = before.leaseKeys;
            revision = before.revision;
            return CommandResult.newBuilder().setError(Error.newBuilder().setCode(r.code)).build();
        }
    }

    private CommandResult execute(long index, Command cmd) {
        CommandResult.Builder out = CommandResult.newBuilder();
        long next = revision + 1;
        switch (cmd.getOpCase()) {
            case PUT -> {
                PutResponse.Builder r = put(cmd.getPut(), next);
                revision = next;
                out.setPut(r.setHeader(header(revision)));
            }
            case DELETE_RANGE -> {
                DeleteRangeResponse.Builder r = delete(cmd.getDeleteRange());
                revision = r.getDeleted() > 0 ? next : revision;
                out.setDeleteRange(r.setHeader(header(revision)));
            }
            case TXN -> out.setTxn(txn(cmd.getTxn(), next));
            case LEASE_GRANT -> out.setLeaseGrant(grant(index, cmd.getLeaseGrant()));
            case LEASE_REVOKE -> out.setLeaseRevoke(io.rota.proto.LeaseRevokeResponse.newBuilder()
                    .setHeader(revoke(cmd.getLeaseRevoke().getID())));
            case LEASE_EXPIRE -> out.setLeaseExpire(expire(cmd.getLeaseExpire()));
            default -> throw new AssertionError("not modelled: " + cmd);
        }
        return out.build();
    }

    private TxnResponse txn(TxnRequest req, long next) {
        if (req.getCompareCount() + req.getSuccessCount() + req.getFailureCount() > LIMITS.maxTxnOps()) {
            throw new Refused(Error.Code.REQUEST_TOO_LARGE);
        }
        // A key put twice in either branch is refused before anything runs, whichever branch would (etcd).
        for (List<RequestOp> branch : List.of(req.getSuccessList(), req.getFailureList())) {
            if (branch.stream().filter(RequestOp::hasRequestPut).map(op -> op.getRequestPut().getKey())
                    .distinct().count() < branch.stream().filter(RequestOp::hasRequestPut).count()) {
                throw new Refused(Error.Code.INVALID_ARGUMENT);
            }
        }
        boolean succeeded = req.getCompareList().stream().allMatch(this::holds);
        List<ResponseOp.Builder> responses = new ArrayList<>();
        boolean wrote = false;
        for (RequestOp op : succeeded ? req.getSuccessList() : req.getFailureList()) {
            switch (op.getRequestCase()) {
                case REQUEST_RANGE -> responses.add(ResponseOp.newBuilder()
                        .setResponseRange(range(op.getRequestRange()).toBuilder()));
                case REQUEST_PUT -> {
                    responses.add(ResponseOp.newBuilder().setResponsePut(put(op.getRequestPut(), next)));
                    wrote = true;
                }
                case REQUEST_DELETE_RANGE -> {
                    DeleteRangeResponse.Builder d = delete(op.getRequestDeleteRange());
                    wrote |= d.getDeleted() > 0;
                    responses.add(ResponseOp.newBuilder().setResponseDeleteRange(d));
                }
                default -> throw new AssertionError(op);
            }
        }
        if (wrote) {
            revision = next;
        }
        TxnResponse.Builder out = TxnResponse.newBuilder().setHeader(header(revision)).setSucceeded(succeeded);
        for (ResponseOp.Builder r : responses) {
            switch (r.getResponseCase()) {
                case RESPONSE_RANGE -> r.getResponseRangeBuilder().setHeader(header(revision));
                case RESPONSE_PUT -> r.getResponsePutBuilder().setHeader(header(revision));
                case RESPONSE_DELETE_RANGE -> r.getResponseDeleteRangeBuilder().setHeader(header(revision));
                default -> throw new AssertionError(r);
            }
            out.addResponses(r);
        }
        return out.build();
    }

    private LeaseGrantResponse grant(long index, LeaseGrantRequest req) {
        if (req.getTTL() < 1 || req.getTTL() > LIMITS.maxLeaseTtlSeconds() || req.getID() < 0
                || req.getID() != 0 && leaseTtl.containsKey(req.getID())) {
            throw new Refused(Error.Code.INVALID_ARGUMENT);
        }
        long id = req.getID();
        if (id == 0) {
            id = Math.max(1, index);
            while (leaseTtl.containsKey(id)) {
                id++;
            }
        }
        long ttl = req.getTTL();
        leaseTtl.put(id, ttl);
        leaseRenewal.put(id, index);
        return LeaseGrantResponse.newBuilder().setHeader(header(revision)).setID(id).setTTL(ttl).build();
    }

    /** An expiry of an older renewal than the lease's latest deletes nothing (issue 11, hole 1). */
    private io.rota.proto.LeaseExpireResponse expire(LeaseExpireRequest req) {
        Long renewal = leaseRenewal.get(req.getID());
        if (renewal != null && renewal != req.getRenewal()) {
            return io.rota.proto.LeaseExpireResponse.newBuilder().setHeader(header(revision))
                    .setRenewedSince(true).build();
        }
        return io.rota.proto.LeaseExpireResponse.newBuilder().setHeader(revoke(req.getID())).build();
    }

    /** Revoke and Expire: the lease and all its keys, in one revision (none if it had no keys). */
    private ResponseHeader revoke(long id) {
        if (leaseTtl.remove(id) == null) {
            throw new Refused(Error.Code.LEASE_NOT_FOUND);
        }
        leaseRenewal.remove(id);
        TreeSet<ByteString> keys = leaseKeys.remove(id);
        if (keys != null && !keys.isEmpty()) {
            keys.forEach(kvs::remove);
            revision++;
        }
        return header(revision);
    }

    LeaseLeasesResponse leases() {
        LeaseLeasesResponse.Builder out = LeaseLeasesResponse.newBuilder().setHeader(header(revision));
        leaseTtl.keySet().forEach(id -> out.addLeases(LeaseStatus.newBuilder().setID(id)));
        return out.build();
    }

    static ResponseHeader header(long revision) {
        return ResponseHeader.newBuilder().setRevision(revision).build();
    }
}
