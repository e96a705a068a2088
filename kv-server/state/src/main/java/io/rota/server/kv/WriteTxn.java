package io.rota.server.kv;

import com.google.protobuf.ByteString;
import io.rota.proto.DeleteRangeRequest;
import io.rota.proto.DeleteRangeResponse;
import io.rota.proto.Error;
import io.rota.proto.Event;
import io.rota.proto.KeyValue;
import io.rota.proto.PutRequest;
import io.rota.proto.PutResponse;
import io.rota.proto.RangeRequest;
import io.rota.proto.RangeResponse;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongPredicate;

/**
 * One write transaction on a {@link KvStore}: ops apply in place, in order (later ops see earlier ones),
 * each key put at most once (a txn's puts are checked for that before, by {@link TxnTree#check}),
 * all with the same revision, and each remembers what it overwrote so {@link #rollback()} can undo the lot
 * when a later op fails — the all-or-nothing of etcd's Txn without copying the store.
 */
final class WriteTxn {

    /** What one write overwrote: the previous key, or null if it did not exist. */
    private record Undo(ByteString key, KeyValue previous) {
    }

    private final KvStore store;
    private final long revision;
    private final Limits limits;
    private final LongPredicate leaseExists;
    private final List<Event> events = new ArrayList<>();
    private final ArrayDeque<Undo> undo = new ArrayDeque<>();

    WriteTxn(KvStore store, long revision, Limits limits, LongPredicate leaseExists) {
        this.store = store;
        this.revision = revision;
        this.limits = limits;
        this.leaseExists = leaseExists;
    }

    long revision() {
        return revision;
    }

    List<Event> events() {
        return events;
    }

    RangeResponse range(RangeRequest req) {
        return store.range(req, events);
    }

    /** etcd's Put; the response header is filled by the caller once the revision is known. */
    PutResponse.Builder put(PutRequest req) {
        ByteString key = req.getKey();
        store.checkedRange(key, ByteString.EMPTY);
        if (req.getValue().size() > limits.maxValueBytes()) {
            throw StoreException.tooLarge(Limits.over("a value", req.getValue().size(), "value",
                    limits.maxValueBytes()));
        }
        KeyValue prev = store.get(key);
        if (prev == null && (req.getIgnoreValue() || req.getIgnoreLease())) {
            throw StoreException.invalid(Error.Reason.IGNORED_KEY_MISSING,
                    "ignore_value/ignore_lease on a missing key");
        }
        long lease = req.getIgnoreLease() ? prev.getLease() : req.getLease();
        if (lease != 0 && !leaseExists.test(lease)) {
            throw StoreException.leaseNotFound(lease);
        }
        if (prev == null && store.size() >= limits.maxKeys()) {
            throw StoreException.full("store full (" + limits.maxKeys() + " keys)");
        }
        KeyValue kv = KeyValue.newBuilder()
                .setKey(key)
                .setValue(req.getIgnoreValue() ? prev.getValue() : req.getValue())
                .setLease(lease)
                .setCreateRevision(prev == null ? revision : prev.getCreateRevision())
                .setModRevision(revision)
                .setVersion(prev == null ? 1 : prev.getVersion() + 1)
                .build();
        record(key, prev);
        store.write(kv);
        Event.Builder event = Event.newBuilder().setType(Event.EventType.PUT).setKv(kv);
        PutResponse.Builder out = PutResponse.newBuilder();
        if (prev != null) {
            event.setPrevKv(prev);
            if (req.getPrevKv()) {
                out.setPrevKv(prev);
            }
        }
        events.add(event.build());
        return out;
    }

    /** etcd's DeleteRange; deleting nothing writes nothing. */
    DeleteRangeResponse.Builder delete(DeleteRangeRequest req) {
        KeyRange range = store.checkedRange(req.getKey(), req.getRangeEnd());
        List<KeyValue> victims = List.copyOf(store.slice(range).values());
        DeleteRangeResponse.Builder out = DeleteRangeResponse.newBuilder().setDeleted(victims.size());
        for (KeyValue prev : victims) {
            deleteKey(prev);
            if (req.getPrevKv()) {
                out.addPrevKvs(prev);
            }
        }
        return out;
    }

    /** Delete one existing key (a revoke deletes its lease's keys this way). */
    void deleteKey(KeyValue prev) {
        record(prev.getKey(), prev);
        store.remove(prev.getKey());
        events.add(Event.newBuilder()
                .setType(Event.EventType.DELETE)
                .setKv(KeyValue.newBuilder().setKey(prev.getKey()).setModRevision(revision))
                .setPrevKv(prev)
                .build());
    }

    private void record(ByteString key, KeyValue previous) {
        undo.push(new Undo(key, previous));
    }

    /** Undo every write of this transaction, newest first; the store is as before {@link KvStore#begin}. */
    void rollback() {
        while (!undo.isEmpty()) {
            Undo u = undo.pop();
            if (u.previous() == null) {
                store.remove(u.key());
            } else {
                store.write(u.previous());
            }
        }
        events.clear();
    }
}
