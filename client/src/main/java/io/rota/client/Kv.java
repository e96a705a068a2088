package io.rota.client;

import com.google.protobuf.ByteString;
import io.rota.proto.DeleteRangeRequest;
import io.rota.proto.Frame;
import io.rota.proto.PutRequest;
import io.rota.proto.RangeRequest;

import java.util.Arrays;
import java.util.concurrent.CompletableFuture;

/**
 * The key-value API: linearizable reads, writes applied exactly once (retries included), transactions.
 * Every method has an async form returning a {@link CompletableFuture} (failing with a
 * {@link RotaException}) and a blocking form that throws the {@link RotaException}. String keys and values
 * are UTF-8. Obtain it from {@link RotaClient#kv()}.
 */
public final class Kv {

    private static final byte[] ALL = {0};

    private final Calls calls;

    Kv(Calls calls) {
        this.calls = calls;
    }

    // ----- get -----

    /**
     * Reads one key.
     *
     * @param key the key
     * @return the result (no kvs if the key does not exist)
     */
    public CompletableFuture<GetResult> getAsync(byte[] key) {
        return range(RangeRequest.newBuilder().setKey(ByteString.copyFrom(key)));
    }

    /**
     * Reads one key and waits.
     *
     * @param key the key
     * @return the result (no kvs if the key does not exist)
     * @throws RotaException on failure
     */
    public GetResult get(byte[] key) {
        return Errors.await(getAsync(key));
    }

    /**
     * Reads one key and waits.
     *
     * @param key the key (UTF-8)
     * @return the result (no kvs if the key does not exist)
     * @throws RotaException on failure
     */
    public GetResult get(String key) {
        return get(Op.utf8(key));
    }

    /**
     * Reads every key that starts with {@code prefix}, sorted by key (an empty prefix: all keys).
     *
     * @param prefix the prefix
     * @return the result
     */
    public CompletableFuture<GetResult> getPrefixAsync(byte[] prefix) {
        return range(RangeRequest.newBuilder().setKey(ByteString.copyFrom(prefix.length == 0 ? ALL : prefix))
                .setRangeEnd(ByteString.copyFrom(prefixEnd(prefix))));
    }

    /**
     * Reads every key that starts with {@code prefix} and waits.
     *
     * @param prefix the prefix
     * @return the result
     * @throws RotaException on failure
     */
    public GetResult getPrefix(byte[] prefix) {
        return Errors.await(getPrefixAsync(prefix));
    }

    /**
     * Reads every key that starts with {@code prefix} and waits.
     *
     * @param prefix the prefix (UTF-8)
     * @return the result
     * @throws RotaException on failure
     */
    public GetResult getPrefix(String prefix) {
        return getPrefix(Op.utf8(prefix));
    }

    // ----- put -----

    /**
     * Writes {@code key = value}, attached to {@code lease} (0: none).
     *
     * @param key   the key
     * @param value the value
     * @param lease a lease id, or 0
     * @return the result with the new revision and the previous key
     */
    public CompletableFuture<PutResult> putAsync(byte[] key, byte[] value, long lease) {
        return calls.execute(Frame.newBuilder().setPutRequest(putRequest(key, value, lease)), true)
                .thenApply(f -> PutResult.of(f.getPutResponse()));
    }

    /**
     * Writes {@code key = value} and waits.
     *
     * @param key   the key
     * @param value the value
     * @param lease a lease id, or 0
     * @return the result
     * @throws RotaException on failure
     */
    public PutResult put(byte[] key, byte[] value, long lease) {
        return Errors.await(putAsync(key, value, lease));
    }

    /**
     * Writes {@code key = value} (no lease) and waits.
     *
     * @param key   the key
     * @param value the value
     * @return the result
     * @throws RotaException on failure
     */
    public PutResult put(byte[] key, byte[] value) {
        return put(key, value, 0);
    }

    /**
     * Writes {@code key = value}, attached to {@code lease} (0: none), and waits.
     *
     * @param key   the key (UTF-8)
     * @param value the value (UTF-8)
     * @param lease a lease id, or 0
     * @return the result
     * @throws RotaException on failure
     */
    public PutResult put(String key, String value, long lease) {
        return put(Op.utf8(key), Op.utf8(value), lease);
    }

    /**
     * Writes {@code key = value} (no lease) and waits.
     *
     * @param key   the key (UTF-8)
     * @param value the value (UTF-8)
     * @return the result
     * @throws RotaException on failure
     */
    public PutResult put(String key, String value) {
        return put(key, value, 0);
    }

    // ----- delete -----

    /**
     * Deletes one key.
     *
     * @param key the key
     * @return the result (deleted 0 if the key did not exist)
     */
    public CompletableFuture<DeleteResult> deleteAsync(byte[] key) {
        return delete(DeleteRangeRequest.newBuilder().setKey(ByteString.copyFrom(key)));
    }

    /**
     * Deletes one key and waits.
     *
     * @param key the key
     * @return the result
     * @throws RotaException on failure
     */
    public DeleteResult delete(byte[] key) {
        return Errors.await(deleteAsync(key));
    }

    /**
     * Deletes one key and waits.
     *
     * @param key the key (UTF-8)
     * @return the result
     * @throws RotaException on failure
     */
    public DeleteResult delete(String key) {
        return delete(Op.utf8(key));
    }

    /**
     * Deletes every key that starts with {@code prefix} (an empty prefix: all keys), in one revision.
     *
     * @param prefix the prefix
     * @return the result with the deleted keys
     */
    public CompletableFuture<DeleteResult> deletePrefixAsync(byte[] prefix) {
        return delete(DeleteRangeRequest.newBuilder().setKey(ByteString.copyFrom(prefix.length == 0 ? ALL : prefix))
                .setRangeEnd(ByteString.copyFrom(prefixEnd(prefix))));
    }

    /**
     * Deletes every key that starts with {@code prefix} and waits.
     *
     * @param prefix the prefix
     * @return the result
     * @throws RotaException on failure
     */
    public DeleteResult deletePrefix(byte[] prefix) {
        return Errors.await(deletePrefixAsync(prefix));
    }

    /**
     * Deletes every key that starts with {@code prefix} and waits.
     *
     * @param prefix the prefix (UTF-8)
     * @return the result
     * @throws RotaException on failure
     */
    public DeleteResult deletePrefix(String prefix) {
        return deletePrefix(Op.utf8(prefix));
    }

    // ----- txn -----

    /**
     * Starts a transaction.
     *
     * @return a new transaction builder; send it with {@link Txn#commit()}
     */
    public Txn txn() {
        return new Txn(calls);
    }

    // ----- internals -----

    static PutRequest putRequest(byte[] key, byte[] value, long lease) {
        return PutRequest.newBuilder().setKey(ByteString.copyFrom(key)).setValue(ByteString.copyFrom(value))
                .setLease(lease).setPrevKv(true).build();
    }

    /** etcd's prefix end: the prefix with its last byte below 0xff incremented; "\0" (no end) if none. */
    static byte[] prefixEnd(byte[] prefix) {
        for (int i = prefix.length - 1; i >= 0; i--) {
            if ((prefix[i] & 0xff) != 0xff) {
                byte[] end = Arrays.copyOf(prefix, i + 1);
                end[i]++;
                return end;
            }
        }
        return ALL.clone();
    }

    private CompletableFuture<GetResult> range(RangeRequest.Builder request) {
        return calls.execute(Frame.newBuilder().setRangeRequest(request), false)
                .thenApply(f -> GetResult.of(f.getRangeResponse()));
    }

    private CompletableFuture<DeleteResult> delete(DeleteRangeRequest.Builder request) {
        return calls.execute(Frame.newBuilder().setDeleteRangeRequest(request.setPrevKv(true)), true)
                .thenApply(f -> DeleteResult.of(f.getDeleteRangeResponse()));
    }

    // ----- get with options -----

    /**
     * Reads one key, a prefix or a range as {@code options} say (revision, limit, sort, keys only,
     * serializable).
     *
     * @param key     the key, or the prefix with {@link GetOptions#prefix()}
     * @param options how to read
     * @return the result
     */
    public CompletableFuture<GetResult> getAsync(byte[] key, GetOptions options) {
        RangeRequest.Builder request = RangeRequest.newBuilder();
        if (options.prefix()) {
            request.setKey(ByteString.copyFrom(key.length == 0 ? ALL : key))
                    .setRangeEnd(ByteString.copyFrom(prefixEnd(key)));
        } else if (options.fromKey()) {
            request.setKey(ByteString.copyFrom(key.length == 0 ? ALL : key)).setRangeEnd(ByteString.copyFrom(ALL));
        } else if (options.rangeEnd() != null) {
            request.setKey(ByteString.copyFrom(key)).setRangeEnd(ByteString.copyFrom(options.rangeEnd()));
        } else {
            request.setKey(ByteString.copyFrom(key));
        }
        if (options.sortTarget() != GetOptions.SortTarget.KEY || options.sortOrder() != GetOptions.SortOrder.ASCEND) {
            request.setSortTarget(RangeRequest.SortTarget.valueOf(options.sortTarget().name()))
                    .setSortOrder(RangeRequest.SortOrder.valueOf(options.sortOrder().name()));
        }
        return range(request.setLimit(options.limit()).setRevision(options.revision())
                .setSerializable(options.serializable()).setKeysOnly(options.keysOnly())
                .setCountOnly(options.countOnly()));
    }

    /**
     * Reads one key or a prefix as {@code options} say, and waits.
     *
     * @param key     the key, or the prefix with {@link GetOptions#prefix()} (UTF-8)
     * @param options how to read
     * @return the result
     * @throws RotaException on failure (COMPACTED for a revision older than the history)
     */
    public GetResult get(String key, GetOptions options) {
        return get(Op.utf8(key), options);
    }

    /**
     * Reads one key or a range as {@code options} say, and waits.
     *
     * @param key     the key (any bytes), or the prefix, or the range's start
     * @param options how to read
     * @return the result
     * @throws RotaException on failure (COMPACTED for a revision older than the history)
     */
    public GetResult get(byte[] key, GetOptions options) {
        return Errors.await(getAsync(key, options));
    }
}
