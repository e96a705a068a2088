package io.rota.server.kv;

import com.google.protobuf.ByteString;
import io.rota.proto.Error;
import io.rota.proto.RequestOp;
import io.rota.proto.ResponseHeader;
import io.rota.proto.ResponseOp;
import io.rota.proto.TxnRequest;
import io.rota.proto.TxnResponse;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;

/**
 * etcd's Txn, nested (a {@code RequestOp.request_txn}, etcd 3.3+), applied as one command at one revision.
 * Three steps, as etcd's applier takes them (design Y40-Y42):
 * <ol>
 *   <li>{@link #check}: the tree's depth, size and duplicate puts, before anything is read;</li>
 *   <li>{@link #path}: every compare of the tree evaluated on the state before the first write, choosing one
 *       branch per txn reached (etcd's {@code compareToPath} works on one read view the same way);</li>
 *   <li>{@link #apply}: the chosen ops, in order, into one {@link WriteTxn}; later ops see earlier ones.</li>
 * </ol>
 * Every recursion here is at most {@link Limits#MAX_TXN_DEPTH} deep: {@link #check} refuses a deeper tree
 * before the others walk it.
 */
final class TxnTree {

    /** The branch each txn reached takes: its own, then its nested txns' in the order their ops come. */
    record Path(boolean succeeded, List<Path> nested) {
    }

    private TxnTree() {
    }

    /**
     * Refuses a tree deeper than {@link Limits#MAX_TXN_DEPTH}, with more compares + ops (every level, both
     * branches) than {@code maxTxnOps}, or putting one key twice. Pure: the same on every replica.
     */
    static void check(TxnRequest t, Limits limits) {
        if (size(t, 1) > limits.maxTxnOps()) {
            throw StoreException.tooLarge(Error.Reason.TXN_TOO_MANY_OPS, "more than " + limits.maxTxnOps()
                    + " compares and ops in a txn (nested txns included)");
        }
        puts(t.getSuccessList());
        puts(t.getFailureList());
    }

    private static int size(TxnRequest t, int depth) {
        if (depth > Limits.MAX_TXN_DEPTH) {
            throw StoreException.invalid("txn nested deeper than " + Limits.MAX_TXN_DEPTH
                    + " levels (the limit of nested txns)");
        }
        int n = t.getCompareCount() + t.getSuccessCount() + t.getFailureCount();
        for (RequestOp op : t.getSuccessList()) {
            n += op.hasRequestTxn() ? size(op.getRequestTxn(), depth + 1) : 0;
        }
        for (RequestOp op : t.getFailureList()) {
            n += op.hasRequestTxn() ? size(op.getRequestTxn(), depth + 1) : 0;
        }
        return n;
    }

    /**
     * The keys one branch may put, refusing a key put twice: two puts of one key at one revision would give
     * watchers two events for the same (key, revision). As etcd's {@code checkIntervals}, it looks at every
     * branch of every nested txn, whichever will run, except that a nested txn's success and failure may put
     * the same key (only one of them runs).
     */
    private static Set<ByteString> puts(List<RequestOp> ops) {
        Set<ByteString> puts = new HashSet<>();
        for (RequestOp op : ops) {
            if (op.hasRequestTxn()) {
                Set<ByteString> then = puts(op.getRequestTxn().getSuccessList());
                Set<ByteString> orElse = puts(op.getRequestTxn().getFailureList());
                for (ByteString k : then) {
                    requireNew(puts.add(k));
                }
                for (ByteString k : orElse) {
                    requireNew(puts.add(k) || then.contains(k));
                }
            }
        }
        for (RequestOp op : ops) {
            if (op.hasRequestPut()) {
                requireNew(puts.add(op.getRequestPut().getKey()));
            }
        }
        return puts;
    }

    private static void requireNew(boolean isNew) {
        if (!isNew) {
            throw StoreException.invalid(Error.Reason.DUPLICATE_KEY, "duplicate key given in txn request");
        }
    }

    /** The branches the tree takes, every compare evaluated on the store as it is now (before any write). */
    static Path path(KvStore store, TxnRequest t) {
        boolean succeeded = t.getCompareList().stream().allMatch(store::holds);
        List<Path> nested = new ArrayList<>();
        for (RequestOp op : succeeded ? t.getSuccessList() : t.getFailureList()) {
            if (op.hasRequestTxn()) {
                nested.add(path(store, op.getRequestTxn()));
            }
        }
        return new Path(succeeded, nested);
    }

    /** The ops of the branches {@code path} chose, applied in order; headers are set by {@link #stamp}. */
    static TxnResponse.Builder apply(WriteTxn txn, TxnRequest t, Path path) {
        Iterator<Path> nested = path.nested().iterator();
        TxnResponse.Builder out = TxnResponse.newBuilder().setSucceeded(path.succeeded());
        for (RequestOp op : path.succeeded() ? t.getSuccessList() : t.getFailureList()) {
            out.addResponses(switch (op.getRequestCase()) {
                case REQUEST_RANGE -> ResponseOp.newBuilder().setResponseRange(txn.range(op.getRequestRange()));
                case REQUEST_PUT -> ResponseOp.newBuilder().setResponsePut(txn.put(op.getRequestPut()));
                case REQUEST_DELETE_RANGE ->
                        ResponseOp.newBuilder().setResponseDeleteRange(txn.delete(op.getRequestDeleteRange()));
                case REQUEST_TXN -> ResponseOp.newBuilder().setResponseTxn(apply(txn, op.getRequestTxn(), nested.next()));
                case REQUEST_NOT_SET -> throw StoreException.invalid("txn op without a request");
            });
        }
        return out;
    }

    /** Every response of the tree, nested txns' included, carries the header of the txn's final revision. */
    static void stamp(TxnResponse.Builder out, ResponseHeader header) {
        out.setHeader(header);
        for (ResponseOp.Builder r : out.getResponsesBuilderList()) {
            switch (r.getResponseCase()) {
                case RESPONSE_RANGE -> r.getResponseRangeBuilder().setHeader(header);
                case RESPONSE_PUT -> r.getResponsePutBuilder().setHeader(header);
                case RESPONSE_DELETE_RANGE -> r.getResponseDeleteRangeBuilder().setHeader(header);
                case RESPONSE_TXN -> stamp(r.getResponseTxnBuilder(), header);
                case RESPONSE_NOT_SET -> throw new IllegalStateException("unreachable: every op has a response");
            }
        }
    }

    /**
     * Whether a branch of the tree, at any depth, puts a key (NOSPACE refuses such a txn). Runs before
     * {@link #check}, so it stops looking below the depth limit: such a tree is refused anyway.
     */
    static boolean hasPut(TxnRequest t) {
        return hasPut(t, 1);
    }

    private static boolean hasPut(TxnRequest t, int depth) {
        if (depth > Limits.MAX_TXN_DEPTH) {
            return false;
        }
        for (List<RequestOp> ops : List.of(t.getSuccessList(), t.getFailureList())) {
            for (RequestOp op : ops) {
                if (op.hasRequestPut() || op.hasRequestTxn() && hasPut(op.getRequestTxn(), depth + 1)) {
                    return true;
                }
            }
        }
        return false;
    }
}
