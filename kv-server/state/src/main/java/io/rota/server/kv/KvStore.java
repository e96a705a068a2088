package io.rota.server.kv;

import com.google.protobuf.ByteString;
import io.rota.proto.Compare;
import io.rota.proto.Error;
import io.rota.proto.Event;
import io.rota.proto.KeyValue;
import io.rota.proto.RangeRequest;
import io.rota.proto.RangeResponse;
import io.rota.proto.ResponseHeader;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.NavigableMap;
import java.util.NavigableSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.LongPredicate;
import java.util.zip.CRC32C;

/**
 * The keys of the store at the current revision, the store-wide revision, and the bounded event history
 * (etcd v3's data model without its full MVCC: past revisions are readable only within the history).
 *
 * <p>Revision rules (etcd's): the store starts at revision 1; every write transaction that changes
 * something — any put, or a delete that deletes at least one key — gets the next revision; its writes
 * all carry it. Each key has create_revision, mod_revision, version (1 on create, +1 per put; a delete
 * forgets the key) and lease.
 *
 * <p>Writes go through a {@link WriteTxn}, which applies them in place and can roll them back, so a
 * transaction is all or nothing.
 */
public final class KvStore {

    private final Limits limits;
    private final TreeMap<ByteString, KeyValue> kvs = new TreeMap<>(KeyRange.ORDER);
    /** Keys per lease, kept in step with {@link #kvs} so revoke finds its keys without a scan. */
    private final TreeMap<Long, NavigableSet<ByteString>> keysByLease = new TreeMap<>();
    private final EventHistory history;
    private long revision = 1;
    /** Bytes of the live keys and values (see {@link #accountedBytes}), kept in step with {@link #kvs}. */
    private long liveBytes;

    KvStore(Limits limits) {
        this.limits = limits;
        // Nothing is compacted yet: revision 1 is the empty store's and has no events, so a watch from
        // revision 1 (etcd's "from the beginning") replays everything instead of failing COMPACTED.
        this.history = new EventHistory(limits.maxHistoryEvents(), 0);
    }

    public long revision() {
        return revision;
    }

    /** The header of an answer given now: the current revision (the door adds the term and member id). */
    ResponseHeader header() {
        return ResponseHeader.newBuilder().setRevision(revision).build();
    }

    public EventHistory history() {
        return history;
    }

    WriteTxn begin(LongPredicate leaseExists) {
        return new WriteTxn(this, revision + 1, limits, leaseExists);
    }

    /** Ends a write transaction: if it wrote, the revision advances and its events enter the history. */
    List<Event> commit(WriteTxn txn) {
        List<Event> events = txn.events();
        if (!events.isEmpty()) {
            revision = txn.revision();
            history.append(events);
        }
        return events;
    }

    /** Current keys of a range, live view. */
    NavigableMap<ByteString, KeyValue> slice(KeyRange range) {
        return range.slice(kvs);
    }

    KeyValue get(ByteString key) {
        return kvs.get(key);
    }

    public int size() {
        return kvs.size();
    }

    /** The keys attached to a lease, sorted (a copy: callers delete them while iterating). */
    List<ByteString> keysOf(long lease) {
        NavigableSet<ByteString> keys = keysByLease.get(lease);
        return keys == null ? List.of() : List.copyOf(keys);
    }

    /**
     * What the space quota counts (issue 18): the bytes of every live key and value plus those of the
     * retained history (see {@link EventHistory#bytes}). A deterministic function of the applied log, so
     * every member counts the same; it approximates the heap the data takes, not the JVM's overhead.
     */
    public long accountedBytes() {
        return liveBytes + history.bytes();
    }

    /** Write or replace one key, keeping the lease index and the byte count in step. */
    void write(KeyValue kv) {
        liveBytes += bytes(kv);
        unindex(kvs.put(kv.getKey(), kv));
        if (kv.getLease() != 0) {
            keysByLease.computeIfAbsent(kv.getLease(), l -> new TreeSet<>(KeyRange.ORDER)).add(kv.getKey());
        }
    }

    void remove(ByteString key) {
        unindex(kvs.remove(key));
    }

    static long bytes(KeyValue kv) {
        return kv.getKey().size() + kv.getValue().size();
    }

    private void unindex(KeyValue old) {
        if (old == null) {
            return;
        }
        liveBytes -= bytes(old);
        if (old.getLease() == 0) {
            return;
        }
        NavigableSet<ByteString> keys = keysByLease.get(old.getLease());
        keys.remove(old.getKey());
        if (keys.isEmpty()) {
            keysByLease.remove(old.getLease());
        }
    }

    KeyRange checkedRange(ByteString key, ByteString rangeEnd) {
        if (key.isEmpty()) {
            throw StoreException.invalid(Error.Reason.EMPTY_KEY, "key is empty");
        }
        if (key.size() > limits.maxKeyBytes() || rangeEnd.size() > limits.maxKeyBytes()) {
            throw StoreException.tooLarge(Limits.over("a key", Math.max(key.size(), rangeEnd.size()), "key",
                    limits.maxKeyBytes()));
        }
        return new KeyRange(key, rangeEnd);
    }

    /**
     * A range read, at the current revision or (within the history) a past one. {@code pending} are the
     * events of a write transaction in progress: a past-revision read inside a transaction must undo them
     * too, since they are already applied in place.
     */
    RangeResponse range(RangeRequest req, List<Event> pending) {
        KeyRange range = checkedRange(req.getKey(), req.getRangeEnd());
        if (req.getLimit() < 0) {
            throw StoreException.invalid("negative limit");
        }
        long at = req.getRevision();
        if (at > revision) {
            throw StoreException.invalid(Error.Reason.FUTURE_REVISION,
                    "revision " + at + " is in the future (current " + revision + ")");
        }
        NavigableMap<ByteString, KeyValue> view = at <= 0 || at == revision && pending.isEmpty()
                ? slice(range) : pastSlice(range, at, pending);
        RangeResponse.Builder out = RangeResponse.newBuilder()
                .setHeader(ResponseHeader.newBuilder().setRevision(revision))
                .setCount(view.size());
        long limit = req.getLimit() == 0 ? Long.MAX_VALUE : req.getLimit();
        Collection<KeyValue> kvs = req.getCountOnly() ? view.values() : filtered(view.values(), req);
        out.setMore(kvs.size() > limit);
        if (!req.getCountOnly()) {
            Iterator<KeyValue> it = sorted(kvs, req).iterator();
            for (long n = 0; n < limit && it.hasNext(); n++) {
                KeyValue kv = it.next();
                out.addKvs(req.getKeysOnly() ? kv.toBuilder().clearValue().build() : kv);
            }
        }
        return out.build();
    }

    /**
     * The keys within the request's min/max mod/create revision bounds (0: no bound; inclusive), as etcd
     * filters them: over the whole range, before the limit (design Y44).
     */
    private static Collection<KeyValue> filtered(Collection<KeyValue> byKey, RangeRequest req) {
        if (req.getMinModRevision() == 0 && req.getMaxModRevision() == 0 && req.getMinCreateRevision() == 0
                && req.getMaxCreateRevision() == 0) {
            return byKey;
        }
        return byKey.stream().filter(kv -> within(kv.getModRevision(), req.getMinModRevision(),
                req.getMaxModRevision()) && within(kv.getCreateRevision(), req.getMinCreateRevision(),
                req.getMaxCreateRevision())).toList();
    }

    private static boolean within(long revision, long min, long max) {
        return (min == 0 || revision >= min) && (max == 0 || revision <= max);
    }

    /**
     * The keys in the order the request asks for, before its limit applies (etcd sorts on the server
     * too): by key ascending unless told otherwise; a target other than KEY without an order is
     * ascending, as etcd's; ties stay in key order (the sort is stable).
     */
    private static Collection<KeyValue> sorted(Collection<KeyValue> byKey, RangeRequest req) {
        RangeRequest.SortOrder order = req.getSortOrder();
        RangeRequest.SortTarget target = req.getSortTarget();
        if (target == RangeRequest.SortTarget.KEY && order != RangeRequest.SortOrder.DESCEND) {
            return byKey;
        }
        Comparator<KeyValue> by = switch (target) {
            case KEY -> Comparator.comparing(KeyValue::getKey, KeyRange.ORDER);
            case VERSION -> Comparator.comparingLong(KeyValue::getVersion);
            case CREATE -> Comparator.comparingLong(KeyValue::getCreateRevision);
            case MOD -> Comparator.comparingLong(KeyValue::getModRevision);
            case VALUE -> Comparator.comparing(KeyValue::getValue, KeyRange.ORDER);
            case UNRECOGNIZED -> throw StoreException.invalid("unknown sort target");
        };
        if (order == RangeRequest.SortOrder.UNRECOGNIZED) {
            throw StoreException.invalid("unknown sort order");
        }
        List<KeyValue> out = new ArrayList<>(byKey);
        out.sort(order == RangeRequest.SortOrder.DESCEND ? by.reversed() : by);
        return out;
    }

    /**
     * etcd's HashKV for this member: a CRC-32C over every key as of {@code at} (0: the current revision), in
     * key order, each key's fields length-prefixed or fixed-width so that no two states hash the same
     * bytes. Deterministic: members that applied the same log prefix give the same hash at a revision.
     *
     * @return {@code [hash, revision hashed]}
     * @throws StoreException COMPACTED when {@code at} is older than the history, INVALID_ARGUMENT in the future
     */
    long[] hash(long at) {
        if (at > revision) {
            throw StoreException.invalid(Error.Reason.FUTURE_REVISION,
                    "revision " + at + " is in the future (current " + revision + ")");
        }
        long hashed = at <= 0 ? revision : at;
        KeyRange all = new KeyRange(ByteString.copyFrom(new byte[] {0}), ByteString.copyFrom(new byte[] {0}));
        Collection<KeyValue> keys = hashed == revision ? kvs.values() : pastSlice(all, hashed, List.of()).values();
        CRC32C crc = new CRC32C();
        ByteBuffer fixed = ByteBuffer.allocate(4 * Long.BYTES);
        for (KeyValue kv : keys) {
            update(crc, kv.getKey());
            update(crc, kv.getValue());
            fixed.clear();
            fixed.putLong(kv.getCreateRevision()).putLong(kv.getModRevision()).putLong(kv.getVersion())
                    .putLong(kv.getLease()).flip();
            crc.update(fixed);
        }
        return new long[] {crc.getValue(), hashed};
    }

    private static void update(CRC32C crc, ByteString bytes) {
        crc.update(ByteBuffer.allocate(Integer.BYTES).putInt(bytes.size()).flip());
        crc.update(bytes.asReadOnlyByteBuffer());
    }

    /** The range as of revision {@code at}: the current keys with every later write undone, newest first. */
    private NavigableMap<ByteString, KeyValue> pastSlice(KeyRange range, long at, List<Event> pending) {
        if (at < history.compactRevision()) {
            throw StoreException.compacted(at, history.compactRevision());
        }
        TreeMap<ByteString, KeyValue> view = new TreeMap<>(slice(range));
        for (int i = pending.size() - 1; i >= 0; i--) {
            undo(view, range, pending.get(i));
        }
        for (Iterator<Event> it = history.newestFirst(); it.hasNext(); ) {
            Event e = it.next();
            if (EventHistory.revisionOf(e) <= at) {
                break;
            }
            undo(view, range, e);
        }
        return view;
    }

    private static void undo(TreeMap<ByteString, KeyValue> view, KeyRange range, Event e) {
        ByteString key = e.getKv().getKey();
        if (!range.contains(key)) {
            return;
        }
        if (e.hasPrevKv()) {
            view.put(key, e.getPrevKv());
        } else {
            view.remove(key);
        }
    }

    /**
     * A transaction guard: every key of the compare's range (or its single key) satisfies it. A missing key
     * counts as version, create, mod and lease 0; a VALUE compare on a missing key is false (etcd).
     */
    boolean holds(Compare c) {
        Collection<KeyValue> found = slice(checkedRange(c.getKey(), c.getRangeEnd())).values();
        if (found.isEmpty()) {
            return c.getTarget() != Compare.Target.VALUE && holds(c, KeyValue.getDefaultInstance());
        }
        for (KeyValue kv : found) {
            if (!holds(c, kv)) {
                return false;
            }
        }
        return true;
    }

    private static boolean holds(Compare c, KeyValue kv) {
        int cmp = switch (c.getTarget()) {
            case VERSION -> Long.compare(kv.getVersion(), c.getVersion());
            case CREATE -> Long.compare(kv.getCreateRevision(), c.getCreateRevision());
            case MOD -> Long.compare(kv.getModRevision(), c.getModRevision());
            case VALUE -> KeyRange.ORDER.compare(kv.getValue(), c.getValue());
            case LEASE -> Long.compare(kv.getLease(), c.getLease());
            case UNRECOGNIZED -> throw StoreException.invalid("unknown compare target");
        };
        return switch (c.getResult()) {
            case EQUAL -> cmp == 0;
            case NOT_EQUAL -> cmp != 0;
            case GREATER -> cmp > 0;
            case LESS -> cmp < 0;
            case UNRECOGNIZED -> throw StoreException.invalid("unknown compare result");
        };
    }

    Collection<KeyValue> all() {
        return kvs.values();
    }

    void reset(long revision, List<KeyValue> keys, long compactRevision, List<Event> retained) {
        kvs.clear();
        keysByLease.clear();
        liveBytes = 0;
        keys.forEach(this::write);
        this.revision = revision;
        history.reset(compactRevision, retained);
    }
}
