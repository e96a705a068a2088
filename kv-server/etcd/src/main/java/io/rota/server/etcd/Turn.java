package io.rota.server.etcd;

import com.google.protobuf.ByteString;
import io.grpc.StatusRuntimeException;
import io.netty.util.concurrent.EventExecutor;
import io.rota.proto.Compare;
import io.rota.proto.DeleteRangeRequest;
import io.rota.proto.Frame;
import io.rota.proto.KeyValue;
import io.rota.proto.PutRequest;
import io.rota.proto.RangeRequest;
import io.rota.proto.RangeResponse;
import io.rota.proto.RequestOp;
import io.rota.proto.ResponseHeader;
import io.rota.proto.TxnRequest;
import io.rota.proto.TxnResponse;
import io.rota.proto.WatchCreateRequest;
import io.rota.proto.WatchRequest;
import io.rota.server.watch.WatchHub;
import io.rota.server.watch.WatchSink;
import io.rota.server.watch.WatchStream;

import java.util.concurrent.CompletableFuture;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * One caller's place in a queue of keys under a prefix — etcd's mutex and election recipes, served by v3lock's
 * Lock and v3election's Campaign: the key {@code prefix<lease in hex>} is created, owned by the lease (or found,
 * if this lease already queues), and its turn comes when no key of the prefix has a lower create revision.
 * While it waits it watches only the key just ahead of it for its delete, so a release wakes one waiter, not
 * the whole herd. A caller that gives up while waiting has its key deleted ({@link #abandon}), as etcd's
 * recipes do. Every method runs on {@link #loop}.
 */
final class Turn implements WatchSink {

    private final Calls calls;
    private final WatchHub hub;
    final EventExecutor loop;
    private final ByteString prefix;
    final ByteString key;
    /** Every request of this turn (create, look, give up) is checked as the caller, as a client's own would be. */
    private final EtcdCallers.Caller caller;
    private final BiConsumer<ResponseHeader, Long> onTurn;
    private final Consumer<StatusRuntimeException> onFail;
    /** The create revision of {@link #key}: its place in the queue. */
    private long myRevision;
    private boolean done;
    private WatchStream watch;

    /** The queue key of {@code lease} under {@code prefix}: {@code prefix<lease in hex>}, as etcd's recipes name it. */
    static ByteString key(ByteString prefix, long lease) {
        return prefix.concat(ByteString.copyFromUtf8(Long.toHexString(lease)));
    }

    /**
     * @param key    {@link #key}{@code (prefix, lease)}
     * @param onTurn called once, when the key's turn has come, with the header of the read that saw it and the
     *               key's create revision
     * @param onFail called once instead, with etcd's status for what went wrong
     * Constructed on the gRPC call's thread: the caller is read from the call's context here.
     */
    Turn(Calls calls, WatchHub hub, ByteString prefix, ByteString key, BiConsumer<ResponseHeader, Long> onTurn,
         Consumer<StatusRuntimeException> onFail) {
        this.calls = calls;
        this.hub = hub;
        this.loop = calls.responders.next();
        this.prefix = prefix;
        this.key = key;
        this.caller = EtcdCallers.Caller.current();
        this.onTurn = onTurn;
        this.onFail = onFail;
    }

    /**
     * Take a place in the queue: create the key with {@code value} and {@code lease} if this lease holds none
     * yet (a retry after a lost answer finds its own), then wait for the turn. {@code existing} is called with
     * the key when it was already there (the election then proclaims the new value), before the wait.
     */
    void enter(ByteString value, long lease, Consumer<KeyValue> existing) {
        TxnRequest create = TxnRequest.newBuilder()
                .addCompare(Compare.newBuilder().setKey(key).setTarget(Compare.Target.CREATE)
                        .setResult(Compare.Result.EQUAL).setCreateRevision(0))
                .addSuccess(RequestOp.newBuilder().setRequestPut(PutRequest.newBuilder().setKey(key).setValue(value)
                        .setLease(lease)))
                .addSuccess(RequestOp.newBuilder().setRequestRange(RangeRequest.newBuilder().setKey(key)))
                .addFailure(RequestOp.newBuilder().setRequestRange(RangeRequest.newBuilder().setKey(key))).build();
        call(Frame.newBuilder().setTxnRequest(create).build()).thenAccept(f -> {
            TxnResponse t = f.getTxnResponse();
            RangeResponse mine = t.getResponses(t.getSucceeded() ? 1 : 0).getResponseRange();
            if (mine.getKvsCount() == 0) {
                fail(EtcdErrors.invalid("etcdserver: the lease ended before its key was created; grant a new lease"));
                return;
            }
            myRevision = mine.getKvs(0).getCreateRevision();
            if (!t.getSucceeded()) {
                existing.accept(mine.getKvs(0));
            }
            check();
        });
    }

    /** The router's answer on {@link #loop}; an error ends the wait (the future then never completes). */
    CompletableFuture<Frame> call(Frame request) {
        CompletableFuture<Frame> ok = new CompletableFuture<>();
        calls.route(request, caller).whenCompleteAsync((f, e) -> {
            if (done) {
                return;
            }
            if (e != null) {
                fail(EtcdErrors.internal(e));
            } else if (f.hasError()) {
                fail(EtcdErrors.of(f.getError()));
            } else {
                ok.complete(f);
            }
        }, loop);
        return ok;
    }

    /** The newest key of the prefix created before ours: none, and the turn is ours. */
    void check() {
        RangeRequest older = RangeRequest.newBuilder().setKey(prefix).setRangeEnd(prefixEnd(prefix))
                .setSortTarget(RangeRequest.SortTarget.CREATE).setSortOrder(RangeRequest.SortOrder.DESCEND)
                .setKeysOnly(true).build();
        call(Frame.newBuilder().setRangeRequest(older).build()).thenAccept(f -> {
            RangeResponse r = f.getRangeResponse();
            KeyValue ahead = null;
            boolean mineExists = false;
            for (KeyValue kv : r.getKvsList()) {
                mineExists |= kv.getKey().equals(key);
                if (ahead == null && kv.getCreateRevision() < myRevision) {
                    ahead = kv;
                }
            }
            if (!mineExists) {
                fail(EtcdErrors.invalid("etcdserver: the lease ended while its key waited; grant a new lease"));
            } else if (ahead == null) {
                done = true;
                onTurn.accept(r.getHeader(), myRevision);
            } else {
                awaitDelete(ahead.getKey(), r.getHeader().getRevision() + 1);
            }
        });
    }

    private void awaitDelete(ByteString waitFor, long fromRevision) {
        watch = hub.open(this);
        watch.handle(0, WatchRequest.newBuilder().setCreateRequest(WatchCreateRequest.newBuilder()
                .setKey(waitFor).setStartRevision(fromRevision)
                .addFilters(WatchCreateRequest.FilterType.NOPUT)).build());
    }

    void fail(StatusRuntimeException e) {
        if (!done) {
            done = true;
            closeWatch();
            onFail.accept(e);
        }
    }

    /** The caller went away while waiting: give up the place in the queue, as etcd's recipes do. */
    void abandon() {
        if (!done) {
            done = true;
            closeWatch();
            calls.route(Frame.newBuilder().setDeleteRangeRequest(DeleteRangeRequest.newBuilder()
                    .setKey(key)).build(), caller);
        }
    }

    private void closeWatch() {
        if (watch != null) {
            watch.close();
            watch = null;
        }
    }

    // WatchSink: the watch on the key ahead. Its delete (or a compaction, or an error) means: look again.
    @Override
    public boolean isWritable() {
        return true;
    }

    @Override
    public void write(Frame frame) {
        boolean deleted = frame.hasWatchResponse() && frame.getWatchResponse().getEventsCount() > 0;
        boolean ended = frame.hasError() || frame.hasWatchResponse() && frame.getWatchResponse().getCanceled();
        if (!done && watch != null && (deleted || ended)) {
            closeWatch();
            loop.execute(this::check);
        }
    }

    @Override
    public void flush() {
    }

    @Override
    public void execute(Runnable task) {
        loop.execute(task);
    }

    /** etcd's prefix range end: the prefix with its last byte plus one (the prefix ends in '/', never 0xff). */
    static ByteString prefixEnd(ByteString prefix) {
        byte[] end = prefix.toByteArray();
        end[end.length - 1]++;
        return ByteString.copyFrom(end);
    }
}
