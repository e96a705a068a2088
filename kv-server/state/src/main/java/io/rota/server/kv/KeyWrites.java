package io.rota.server.kv;

import com.google.protobuf.ByteString;
import io.rota.proto.CompactionRequest;
import io.rota.proto.CompactionResponse;
import io.rota.proto.DeleteRangeRequest;
import io.rota.proto.DeleteRangeResponse;
import io.rota.proto.Error;
import io.rota.proto.Event;
import io.rota.proto.PutRequest;
import io.rota.proto.PutResponse;
import io.rota.proto.TxnRequest;
import io.rota.proto.TxnResponse;
import io.rota.server.lease.LeaseTable;

import java.util.List;

/**
 * The key space's writes at apply: Put, DeleteRange, Txn, the keys of an ended lease, and Compaction of the
 * history. Each write transaction that changes something is one revision, whose events leave apply as an
 * {@link Effects.Revision} (the watch hub's feed). Driver thread only.
 */
final class KeyWrites {

    private final Limits limits;
    private final KvStore store;
    private final LeaseTable leases;
    private final Effects effects;

    KeyWrites(Limits limits, KvStore store, LeaseTable leases, Effects effects) {
        this.limits = limits;
        this.store = store;
        this.leases = leases;
        this.effects = effects;
    }

    PutResponse put(PutRequest req) {
        WriteTxn txn = store.begin(leases::contains);
        PutResponse.Builder out = txn.put(req);
        commit(txn);
        return out.setHeader(store.header()).build();
    }

    DeleteRangeResponse delete(DeleteRangeRequest req) {
        WriteTxn txn = store.begin(leases::contains);
        DeleteRangeResponse.Builder out = txn.delete(req);
        commit(txn);
        return out.setHeader(store.header()).build();
    }

    /**
     * etcd's Txn, nested txns included (see {@link TxnTree}): every compare of the tree on the state before the
     * txn, then the chosen branches, atomically, at one revision.
     */
    TxnResponse txn(TxnRequest req) {
        TxnTree.check(req, limits);
        TxnTree.Path path = TxnTree.path(store, req);
        WriteTxn txn = store.begin(leases::contains);
        TxnResponse.Builder out;
        try {
            out = TxnTree.apply(txn, req, path);
        } catch (StoreException e) {
            txn.rollback();
            throw e;
        }
        commit(txn);
        // Like etcd, every response of the txn carries the header of the txn's final revision.
        TxnTree.stamp(out, store.header());
        return out.build();
    }

    /** The keys of a revoked or expired lease: deleted in one revision. */
    void deleteKeys(List<ByteString> keys) {
        WriteTxn txn = store.begin(leases::contains);
        for (ByteString key : keys) {
            txn.deleteKey(store.get(key));
        }
        commit(txn);
    }

    /**
     * etcd's Compact: the history at and below {@code revision} goes; a read or watch of an older revision
     * then fails COMPACTED. A future revision is INVALID_ARGUMENT; one at or below the compact revision is
     * COMPACTED (as etcd's ErrCompacted), so a repeated compaction tells the caller it was already done.
     */
    CompactionResponse compact(CompactionRequest req) {
        long rev = req.getRevision();
        if (rev > store.revision()) {
            throw StoreException.invalid(Error.Reason.FUTURE_REVISION, "cannot compact at revision " + rev
                    + ": the current revision is " + store.revision());
        }
        long compacted = store.history().compactRevision();
        if (rev <= compacted) {
            throw StoreException.compacted(rev, compacted);
        }
        store.history().compact(rev);
        return CompactionResponse.newBuilder().setHeader(store.header()).setCompactRevision(rev).build();
    }

    private void commit(WriteTxn txn) {
        List<Event> events = store.commit(txn);
        if (!events.isEmpty()) {
            effects.add(new Effects.Revision(store.revision(), events));
        }
    }
}
