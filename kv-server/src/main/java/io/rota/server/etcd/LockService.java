package io.rota.server.etcd;

import com.google.protobuf.ByteString;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.netty.util.concurrent.EventExecutor;
import io.rota.etcd.api.LockGrpc;
import io.rota.etcd.api.LockRequest;
import io.rota.etcd.api.LockResponse;
import io.rota.etcd.api.UnlockRequest;
import io.rota.etcd.api.UnlockResponse;
import io.rota.proto.Compare;
import io.rota.proto.DeleteRangeRequest;
import io.rota.proto.Frame;
import io.rota.proto.KeyValue;
import io.rota.proto.PutRequest;
import io.rota.proto.RangeRequest;
import io.rota.proto.RangeResponse;
import io.rota.proto.RequestOp;
import io.rota.proto.TxnRequest;
import io.rota.proto.TxnResponse;
import io.rota.proto.WatchCreateRequest;
import io.rota.proto.WatchRequest;
import io.rota.server.watch.WatchHub;
import io.rota.server.watch.WatchSink;
import io.rota.server.watch.WatchStream;

import java.util.concurrent.CompletableFuture;

/**
 * etcd's v3lock service, the server side of etcd's mutex recipe, on Rota's KV and watches: Lock creates the
 * key {@code name/<lease in hex>} owned by the lease (or finds it, if this lease already waits), then waits
 * until no key of the lock has a lower create revision — watching only the next-lower key for its delete,
 * so a release wakes one waiter, not all. Unlock deletes the key. A caller that gives up while waiting has
 * its key deleted, as etcd's mutex does.
 */
final class LockService extends LockGrpc.LockImplBase {

    private final Calls calls;
    private final WatchHub hub;

    LockService(Calls calls, WatchHub hub) {
        this.calls = calls;
        this.hub = hub;
    }

    @Override
    public void lock(LockRequest request, StreamObserver<LockResponse> responses) {
        ServerCallStreamObserver<LockResponse> out = (ServerCallStreamObserver<LockResponse>) responses;
        ByteString prefix = request.getName().concat(ByteString.copyFromUtf8("/"));
        ByteString key = prefix.concat(ByteString.copyFromUtf8(Long.toHexString(request.getLease())));
        Waiter waiter = new Waiter(out, calls.responders.next(), prefix, key, EtcdCallers.Caller.current());
        out.setOnCancelHandler(() -> waiter.loop.execute(waiter::abandon));
        // Create the key if this lease holds none yet (a retry after a lost answer finds its own).
        TxnRequest create = TxnRequest.newBuilder()
                .addCompare(Compare.newBuilder().setKey(key).setTarget(Compare.Target.CREATE)
                        .setResult(Compare.Result.EQUAL).setCreateRevision(0))
                .addSuccess(RequestOp.newBuilder().setRequestPut(PutRequest.newBuilder().setKey(key)
                        .setLease(request.getLease())))
                .addSuccess(RequestOp.newBuilder().setRequestRange(RangeRequest.newBuilder().setKey(key)))
                .addFailure(RequestOp.newBuilder().setRequestRange(RangeRequest.newBuilder().setKey(key))).build();
        call(Frame.newBuilder().setTxnRequest(create).build(), waiter).thenAccept(f -> {
            TxnResponse t = f.getTxnResponse();
            RangeResponse mine = t.getResponses(t.getSucceeded() ? 1 : 0).getResponseRange();
            if (mine.getKvsCount() == 0) {
                waiter.fail(EtcdErrors.invalid("etcdserver: the lock's lease ended before the lock was created"));
                return;
            }
            waiter.myRevision = mine.getKvs(0).getCreateRevision();
            waiter.check();
        });
    }

    @Override
    public void unlock(UnlockRequest request, StreamObserver<UnlockResponse> out) {
        calls.unary(() -> Frame.newBuilder().setDeleteRangeRequest(DeleteRangeRequest.newBuilder()
                        .setKey(request.getKey())).build(),
                f -> UnlockResponse.newBuilder().setHeader(EtcdCodec.header(f.getDeleteRangeResponse().getHeader(),
                        calls.clusterId)).build(), out);
    }

    /** The router's answer on the waiter's thread; an error ends the call (the future then never completes). */
    private CompletableFuture<Frame> call(Frame request, Waiter w) {
        CompletableFuture<Frame> ok = new CompletableFuture<>();
        calls.route(request, w.caller).whenCompleteAsync((f, e) -> {
            if (w.done) {
                return;
            }
            if (e != null) {
                w.fail(EtcdErrors.internal(e));
            } else if (f.hasError()) {
                w.fail(EtcdErrors.of(f.getError()));
            } else {
                ok.complete(f);
            }
        }, w.loop);
        return ok;
    }

    /** One Lock call while it waits; every method runs on {@link #loop}. */
    private final class Waiter implements WatchSink {
        final ServerCallStreamObserver<LockResponse> out;
        final EventExecutor loop;
        final ByteString prefix;
        final ByteString key;
        /** Every request of this call (create, look, give up) is checked as the caller, as a client's own would be. */
        final EtcdCallers.Caller caller;
        long myRevision;
        boolean done;
        private WatchStream watch;

        Waiter(ServerCallStreamObserver<LockResponse> out, EventExecutor loop, ByteString prefix, ByteString key,
               EtcdCallers.Caller caller) {
            this.out = out;
            this.caller = caller;
            this.loop = loop;
            this.prefix = prefix;
            this.key = key;
        }

        /** The newest key of the lock created before ours: none, and the lock is ours. */
        void check() {
            RangeRequest older = RangeRequest.newBuilder().setKey(prefix).setRangeEnd(prefixEnd(prefix))
                    .setSortTarget(RangeRequest.SortTarget.CREATE).setSortOrder(RangeRequest.SortOrder.DESCEND)
                    .build();
            call(Frame.newBuilder().setRangeRequest(older).build(), this).thenAccept(f -> {
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
                    fail(EtcdErrors.invalid("etcdserver: the lock's lease ended while it waited; grant a new lease"));
                } else if (ahead == null) {
                    done = true;
                    out.onNext(LockResponse.newBuilder().setHeader(EtcdCodec.header(r.getHeader(), calls.clusterId))
                            .setKey(key).build());
                    out.onCompleted();
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

        void fail(RuntimeException e) {
            if (!done) {
                done = true;
                closeWatch();
                out.onError(e);
            }
        }

        /** The caller went away while waiting: release the place in line, as etcd's mutex does. */
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
    }

    private static ByteString prefixEnd(ByteString prefix) {
        byte[] end = prefix.toByteArray();
        end[end.length - 1]++;   // the prefix ends in '/', never 0xff
        return ByteString.copyFrom(end);
    }
}
