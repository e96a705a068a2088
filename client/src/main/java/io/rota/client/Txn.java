package io.rota.client;

import com.google.protobuf.ByteString;
import io.rota.proto.Compare;
import io.rota.proto.Frame;
import io.rota.proto.ResponseOp;
import io.rota.proto.TxnRequest;
import io.rota.proto.TxnResponse;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A transaction under construction: if every comparison holds, the {@code then} operations apply,
 * else the {@code orElse} ones, atomically and at one revision. Not thread-safe; use it once.
 *
 * <pre>{@code
 * TxnResult r = kv.txn().ifVersion("job/owner", CompareOp.EQUAL, 0)
 *         .then(Op.put("job/owner", "app-1"))
 *         .orElse(Op.get("job/owner"))
 *         .commit();
 * }</pre>
 */
public final class Txn {

    private final Calls calls;
    private final TxnRequest.Builder request = TxnRequest.newBuilder();

    Txn(Calls calls) {
        this.calls = calls;
    }

    /**
     * Requires the key's version (0: missing) to compare as given.
     *
     * @param key     the key (UTF-8)
     * @param op      the comparison
     * @param version the version to compare with
     * @return this transaction
     */
    public Txn ifVersion(String key, CompareOp op, long version) {
        return add(compare(key, op, Compare.Target.VERSION).setVersion(version));
    }

    /**
     * Requires the key's value to compare as given (a missing key never matches).
     *
     * @param key   the key (UTF-8)
     * @param op    the comparison
     * @param value the value (UTF-8)
     * @return this transaction
     */
    public Txn ifValue(String key, CompareOp op, String value) {
        return ifValue(Op.utf8(key), op, Op.utf8(value));
    }

    /**
     * Requires the key's value to compare as given (a missing key never matches).
     *
     * @param key   the key
     * @param op    the comparison
     * @param value the value
     * @return this transaction
     */
    public Txn ifValue(byte[] key, CompareOp op, byte[] value) {
        return add(compare(key, op, Compare.Target.VALUE).setValue(ByteString.copyFrom(value)));
    }

    /**
     * Requires the key's create revision (0: missing) to compare as given.
     *
     * @param key      the key (UTF-8)
     * @param op       the comparison
     * @param revision the revision to compare with
     * @return this transaction
     */
    public Txn ifCreateRevision(String key, CompareOp op, long revision) {
        return add(compare(key, op, Compare.Target.CREATE).setCreateRevision(revision));
    }

    /**
     * Requires the key's mod revision (0: missing) to compare as given.
     *
     * @param key      the key (UTF-8)
     * @param op       the comparison
     * @param revision the revision to compare with
     * @return this transaction
     */
    public Txn ifModRevision(String key, CompareOp op, long revision) {
        return add(compare(key, op, Compare.Target.MOD).setModRevision(revision));
    }

    /**
     * Requires the lease of EVERY key under {@code prefix} to compare as given; holds when no key is there
     * (a compare over a range, as etcd's). {@code ifPrefixLease(p, EQUAL, 0)} is "no key under p is tied to a
     * lease": how a lock's enqueue txn knows it is first without reading the queue first.
     *
     * @param prefix the key prefix (UTF-8)
     * @param op     the comparison
     * @param lease  the lease id to compare with (0: none)
     * @return this transaction
     */
    public Txn ifPrefixLease(String prefix, CompareOp op, long lease) {
        byte[] p = Op.utf8(prefix);
        return add(compare(p, op, Compare.Target.LEASE).setLease(lease)
                .setRangeEnd(ByteString.copyFrom(Kv.prefixEnd(p))));
    }

    /**
     * Operations applied when every comparison holds.
     *
     * @param ops the operations, in order
     * @return this transaction
     */
    public Txn then(Op... ops) {
        for (Op op : ops) {
            request.addSuccess(op.proto());
        }
        return this;
    }

    /**
     * Operations applied when some comparison fails.
     *
     * @param ops the operations, in order
     * @return this transaction
     */
    public Txn orElse(Op... ops) {
        for (Op op : ops) {
            request.addFailure(op.proto());
        }
        return this;
    }

    /**
     * Sends the transaction (under the client's session: a retry applies it once).
     *
     * @return the result, or a failure with a {@link RotaException}
     */
    public CompletableFuture<TxnResult> commitAsync() {
        return calls.execute(Frame.newBuilder().setTxnRequest(request.build()), true)
                .thenApply(f -> result(f.getTxnResponse()));
    }

    /**
     * Sends the transaction and waits for its result.
     *
     * @return the result
     * @throws RotaException on failure
     */
    public TxnResult commit() {
        return Errors.await(commitAsync());
    }

    /** The request as built so far (for {@link Op#txn}, which nests it). */
    TxnRequest proto() {
        return request.build();
    }

    private static TxnResult result(TxnResponse r) {
        List<OpResult> results = new ArrayList<>();
        for (ResponseOp op : r.getResponsesList()) {
            switch (op.getResponseCase()) {
                case RESPONSE_RANGE -> results.add(GetResult.of(op.getResponseRange()));
                case RESPONSE_PUT -> results.add(PutResult.of(op.getResponsePut()));
                case RESPONSE_DELETE_RANGE -> results.add(DeleteResult.of(op.getResponseDeleteRange()));
                case RESPONSE_TXN -> results.add(result(op.getResponseTxn()));
                default -> throw new RotaException(RotaException.Code.INVALID_ARGUMENT,
                        "unexpected transaction response " + op.getResponseCase());
            }
        }
        return new TxnResult(r.getSucceeded(), results, r.getHeader().getRevision());
    }

    private Txn add(Compare.Builder compare) {
        request.addCompare(compare);
        return this;
    }

    private static Compare.Builder compare(String key, CompareOp op, Compare.Target target) {
        return compare(Op.utf8(key), op, target);
    }

    private static Compare.Builder compare(byte[] key, CompareOp op, Compare.Target target) {
        return Compare.newBuilder().setKey(ByteString.copyFrom(key)).setResult(op.proto).setTarget(target);
    }
}
