package io.rota.server.etcd;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.netty.util.concurrent.EventExecutor;
import io.rota.etcd.api.CampaignRequest;
import io.rota.etcd.api.CampaignResponse;
import io.rota.etcd.api.ElectionGrpc;
import io.rota.etcd.api.LeaderKey;
import io.rota.etcd.api.LeaderRequest;
import io.rota.etcd.api.LeaderResponse;
import io.rota.etcd.api.ProclaimRequest;
import io.rota.etcd.api.ProclaimResponse;
import io.rota.etcd.api.ResignRequest;
import io.rota.etcd.api.ResignResponse;
import io.rota.proto.Compare;
import io.rota.proto.DeleteRangeRequest;
import io.rota.proto.Frame;
import io.rota.proto.KeyValue;
import io.rota.proto.PutRequest;
import io.rota.proto.RangeRequest;
import io.rota.proto.RangeResponse;
import io.rota.proto.RequestOp;
import io.rota.proto.TxnRequest;
import io.rota.proto.WatchCreateRequest;
import io.rota.proto.WatchRequest;
import io.rota.proto.WatchResponse;
import io.rota.server.watch.WatchHub;
import io.rota.server.watch.WatchSink;
import io.rota.server.watch.WatchStream;

/**
 * etcd's v3election service, the server side of etcd's election recipe, on Rota's KV, leases and watches
 * (as {@link LockService} is for the mutex):
 * <ul>
 *   <li>Campaign: the candidate's key {@code name/<lease in hex>}, owned by its lease and holding its proposal,
 *       takes a {@link Turn}; it leads when no key of the election has a lower create revision. The answer's
 *       {@link LeaderKey} (name, key, create revision, lease) is what Proclaim and Resign present.</li>
 *   <li>Proclaim: a new value, written only while the key still has that create revision (else etcd's
 *       {@code election: not leader}).</li>
 *   <li>Leader: the key of the election with the lowest create revision ({@code election: no leader} if none).</li>
 *   <li>Observe: the leader's key, then every value it proclaims and every later leader, as they happen.</li>
 *   <li>Resign: deletes the leader key if it is still that leadership; the next candidate's turn comes.</li>
 * </ul>
 * The election errors are etcd's: status UNKNOWN with the recipe's message, as etcd's server answers them.
 */
final class ElectionService extends ElectionGrpc.ElectionImplBase {

    static final String NOT_LEADER = "election: not leader";
    static final String NO_LEADER = "election: no leader";
    static final String MISSING_LEADER = "\"leader\" field must be provided";

    private final Calls calls;
    private final WatchHub hub;

    ElectionService(Calls calls, WatchHub hub) {
        this.calls = calls;
        this.hub = hub;
    }

    private static StatusRuntimeException electionError(String message) {
        return Status.UNKNOWN.withDescription(EtcdErrors.bounded(message)).asRuntimeException();
    }

    private static ByteString prefix(ByteString name) {
        return name.concat(ByteString.copyFromUtf8("/"));
    }

    @Override
    public void campaign(CampaignRequest request, StreamObserver<CampaignResponse> responses) {
        ServerCallStreamObserver<CampaignResponse> out = (ServerCallStreamObserver<CampaignResponse>) responses;
        ByteString prefix = prefix(request.getName());
        ByteString key = Turn.key(prefix, request.getLease());
        Turn turn = new Turn(calls, hub, prefix, key, (header, rev) -> {
            out.onNext(CampaignResponse.newBuilder().setHeader(EtcdCodec.header(header, calls.clusterId))
                    .setLeader(LeaderKey.newBuilder().setName(request.getName()).setKey(key)
                            .setRev(rev).setLease(request.getLease())).build());
            out.onCompleted();
        }, out::onError);
        out.setOnCancelHandler(() -> turn.loop.execute(turn::abandon));
        // A candidate campaigning again with the same lease keeps its place, with the new proposal (etcd's too).
        turn.enter(request.getValue(), request.getLease(), existing -> {
            if (!existing.getValue().equals(request.getValue())) {
                turn.call(proclaim(key, existing.getCreateRevision(), request.getLease(), request.getValue()));
            }
        });
    }

    /** Put {@code value} on the leader key only while it is still the same leadership (its create revision). */
    private static Frame proclaim(ByteString key, long rev, long lease, ByteString value) {
        return Frame.newBuilder().setTxnRequest(TxnRequest.newBuilder()
                .addCompare(Compare.newBuilder().setKey(key).setTarget(Compare.Target.CREATE)
                        .setResult(Compare.Result.EQUAL).setCreateRevision(rev))
                .addSuccess(RequestOp.newBuilder().setRequestPut(PutRequest.newBuilder().setKey(key).setValue(value)
                        .setLease(lease)))).build();
    }

    @Override
    public void proclaim(ProclaimRequest request, StreamObserver<ProclaimResponse> out) {
        if (!request.hasLeader()) {
            out.onError(electionError(MISSING_LEADER));
            return;
        }
        LeaderKey l = request.getLeader();
        calls.unary(() -> proclaim(l.getKey(), l.getRev(), l.getLease(), request.getValue()), f -> {
            if (!f.getTxnResponse().getSucceeded()) {
                throw electionError(NOT_LEADER);
            }
            return ProclaimResponse.newBuilder().setHeader(EtcdCodec.header(f.getTxnResponse().getHeader(),
                    calls.clusterId)).build();
        }, out);
    }

    /** The election's oldest key: its leader. */
    private static Frame leaderRead(ByteString name) {
        ByteString prefix = prefix(name);
        return Frame.newBuilder().setRangeRequest(RangeRequest.newBuilder().setKey(prefix)
                .setRangeEnd(Turn.prefixEnd(prefix)).setSortTarget(RangeRequest.SortTarget.CREATE)
                .setSortOrder(RangeRequest.SortOrder.ASCEND).setLimit(1)).build();
    }

    @Override
    public void leader(LeaderRequest request, StreamObserver<LeaderResponse> out) {
        calls.unary(() -> leaderRead(request.getName()), f -> {
            RangeResponse r = f.getRangeResponse();
            if (r.getKvsCount() == 0) {
                throw electionError(NO_LEADER);
            }
            return LeaderResponse.newBuilder().setHeader(EtcdCodec.header(r.getHeader(), calls.clusterId))
                    .setKv(EtcdCodec.kv(r.getKvs(0))).build();
        }, out);
    }

    @Override
    public void resign(ResignRequest request, StreamObserver<ResignResponse> out) {
        if (!request.hasLeader()) {
            out.onError(electionError(MISSING_LEADER));
            return;
        }
        LeaderKey l = request.getLeader();
        // Deleted only if still that leadership: a resign that arrives late never removes a newer key.
        calls.unary(() -> Frame.newBuilder().setTxnRequest(TxnRequest.newBuilder()
                        .addCompare(Compare.newBuilder().setKey(l.getKey()).setTarget(Compare.Target.CREATE)
                                .setResult(Compare.Result.EQUAL).setCreateRevision(l.getRev()))
                        .addSuccess(RequestOp.newBuilder().setRequestDeleteRange(DeleteRangeRequest.newBuilder()
                                .setKey(l.getKey())))).build(),
                f -> ResignResponse.newBuilder().setHeader(EtcdCodec.header(f.getTxnResponse().getHeader(),
                        calls.clusterId)).build(), out);
    }

    @Override
    public void observe(LeaderRequest request, StreamObserver<LeaderResponse> responses) {
        ServerCallStreamObserver<LeaderResponse> out = (ServerCallStreamObserver<LeaderResponse>) responses;
        Observer o = new Observer(request.getName(), out, calls.responders.next());
        out.setOnCancelHandler(() -> o.loop.execute(o::end));
        o.loop.execute(o::find);
    }

    /**
     * One Observe stream, on {@link #loop}: read the leader; with one, send it and watch its key (a put is a
     * proclamation, sent on; a delete means look again); without one, watch the election for the first put.
     */
    private final class Observer implements WatchSink {
        final ByteString name;
        final ServerCallStreamObserver<LeaderResponse> out;
        final EventExecutor loop;
        private boolean ended;
        private WatchStream watch;
        /** The leader key being followed, or null while there is none. */
        private ByteString following;

        /** Read on the call's thread: every read of the leader is checked as the caller's own. */
        private final EtcdCallers.Caller caller = EtcdCallers.Caller.current();

        Observer(ByteString name, ServerCallStreamObserver<LeaderResponse> out, EventExecutor loop) {
            this.name = name;
            this.out = out;
            this.loop = loop;
        }

        void find() {
            if (ended) {
                return;
            }
            calls.route(leaderRead(name), caller).whenCompleteAsync((f, e) -> {
                if (ended) {
                    return;
                }
                if (e != null || f.hasError()) {
                    end();
                    out.onError(e != null ? EtcdErrors.internal(e) : EtcdErrors.of(f.getError()));
                    return;
                }
                RangeResponse r = f.getRangeResponse();
                long from = r.getHeader().getRevision() + 1;
                if (r.getKvsCount() == 0) {
                    following = null;
                    ByteString prefix = prefix(name);
                    open(WatchCreateRequest.newBuilder().setKey(prefix).setRangeEnd(Turn.prefixEnd(prefix))
                            .setStartRevision(from).addFilters(WatchCreateRequest.FilterType.NODELETE));
                    return;
                }
                KeyValue leader = r.getKvs(0);
                following = leader.getKey();
                send(leader, r.getHeader());
                open(WatchCreateRequest.newBuilder().setKey(leader.getKey()).setStartRevision(from));
            }, loop);
        }

        private void send(KeyValue kv, io.rota.proto.ResponseHeader header) {
            out.onNext(LeaderResponse.newBuilder().setHeader(EtcdCodec.header(header, calls.clusterId))
                    .setKv(EtcdCodec.kv(kv)).build());
        }

        private void open(WatchCreateRequest.Builder create) {
            watch = hub.open(this);
            watch.handle(0, WatchRequest.newBuilder().setCreateRequest(create).build());
        }

        void end() {
            ended = true;
            if (watch != null) {
                watch.close();
                watch = null;
            }
        }

        @Override
        public boolean isWritable() {
            return true;
        }

        @Override
        public void write(Frame frame) {
            if (ended || watch == null) {
                return;
            }
            boolean lost = frame.hasError() || frame.hasWatchResponse() && frame.getWatchResponse().getCanceled();
            boolean again = lost;
            if (!lost && frame.hasWatchResponse()) {
                WatchResponse w = frame.getWatchResponse();
                for (io.rota.proto.Event ev : w.getEventsList()) {
                    if (following == null || ev.getType() == io.rota.proto.Event.EventType.DELETE) {
                        again = true;   // a first candidate, or the leader resigned or its lease ended
                        break;
                    }
                    send(ev.getKv(), w.getHeader());   // the leader proclaimed a new value
                }
            }
            if (again) {
                watch.close();
                watch = null;
                loop.execute(this::find);
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
}
