package io.rota.client;

import com.google.protobuf.ByteString;
import io.rota.proto.DeleteRangeRequest;
import io.rota.proto.RangeRequest;
import io.rota.proto.RequestOp;

import java.nio.charset.StandardCharsets;

/**
 * One operation of a transaction branch; create with the static factories, e.g.
 * {@code kv.txn().then(Op.put("k", "v")).orElse(Op.get("k"))}.
 */
public final class Op {

    private final RequestOp proto;

    private Op(RequestOp proto) {
        this.proto = proto;
    }

    RequestOp proto() {
        return proto;
    }

    /**
     * Puts {@code key = value}.
     *
     * @param key   the key (UTF-8)
     * @param value the value (UTF-8)
     * @return the operation
     */
    public static Op put(String key, String value) {
        return put(utf8(key), utf8(value));
    }

    /**
     * Puts {@code key = value}.
     *
     * @param key   the key
     * @param value the value
     * @return the operation
     */
    public static Op put(byte[] key, byte[] value) {
        return new Op(RequestOp.newBuilder().setRequestPut(Kv.putRequest(key, value, 0)).build());
    }

    /**
     * Reads one key.
     *
     * @param key the key (UTF-8)
     * @return the operation
     */
    public static Op get(String key) {
        return get(utf8(key));
    }

    /**
     * Reads one key.
     *
     * @param key the key
     * @return the operation
     */
    public static Op get(byte[] key) {
        return new Op(RequestOp.newBuilder().setRequestRange(
                RangeRequest.newBuilder().setKey(ByteString.copyFrom(key))).build());
    }

    /**
     * Reads every key under a prefix (after the branch's earlier ops: a queue read in the txn that joins it).
     *
     * @param prefix the prefix (UTF-8)
     * @return the operation
     */
    public static Op getPrefix(String prefix) {
        byte[] p = utf8(prefix);
        return new Op(RequestOp.newBuilder().setRequestRange(RangeRequest.newBuilder()
                .setKey(ByteString.copyFrom(p)).setRangeEnd(ByteString.copyFrom(Kv.prefixEnd(p)))).build());
    }

    /**
     * Deletes one key.
     *
     * @param key the key (UTF-8)
     * @return the operation
     */
    public static Op delete(String key) {
        return delete(utf8(key));
    }

    /**
     * Deletes one key.
     *
     * @param key the key
     * @return the operation
     */
    public static Op delete(byte[] key) {
        return new Op(RequestOp.newBuilder().setRequestDeleteRange(
                DeleteRangeRequest.newBuilder().setKey(ByteString.copyFrom(key)).setPrevKv(true)).build());
    }

    /**
     * Puts {@code key = value} attached to a lease (deleted with it).
     *
     * @param key   the key (UTF-8)
     * @param value the value (UTF-8)
     * @param lease a lease id, or 0 for none
     * @return the operation
     */
    public static Op put(String key, String value, long lease) {
        return new Op(RequestOp.newBuilder().setRequestPut(Kv.putRequest(utf8(key), utf8(value), lease)).build());
    }

    /**
     * A nested transaction (etcd 3.3's nested txn): its comparisons are evaluated with every other one of
     * the outer transaction, on the state before the outer transaction's first write, and its branch's
     * writes share the outer revision. Its result is a {@link TxnResult} among the outer results. At most 32
     * transactions deep; a key may not be put twice anywhere in the whole transaction (only the two branches
     * of one transaction may put the same key).
     *
     * <pre>{@code
     * kv.txn().then(Op.put("job/a", "1"),
     *         Op.txn(kv.txn().ifVersion("job/b", CompareOp.EQUAL, 0).then(Op.put("job/b", "1"))))
     *     .commit();
     * }</pre>
     *
     * @param nested a transaction built with {@code kv.txn()} and not committed itself
     * @return the operation
     */
    public static Op txn(Txn nested) {
        return new Op(RequestOp.newBuilder().setRequestTxn(nested.proto()).build());
    }

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** For humans: the operation as protobuf text. */
    @Override
    public String toString() {
        return "Op[" + proto.toString().trim().replace('\n', ' ') + "]";
    }
}
