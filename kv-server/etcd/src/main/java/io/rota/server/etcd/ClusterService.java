package io.rota.server.etcd;

import io.grpc.stub.StreamObserver;
import io.rota.etcd.api.ClusterGrpc;
import io.rota.etcd.api.Member;
import io.rota.etcd.api.MemberAddRequest;
import io.rota.etcd.api.MemberAddResponse;
import io.rota.etcd.api.MemberListRequest;
import io.rota.etcd.api.MemberListResponse;
import io.rota.etcd.api.MemberPromoteRequest;
import io.rota.etcd.api.MemberPromoteResponse;
import io.rota.etcd.api.MemberRemoveRequest;
import io.rota.etcd.api.MemberRemoveResponse;
import io.rota.etcd.api.MemberUpdateRequest;
import io.rota.etcd.api.MemberUpdateResponse;
import io.rota.proto.Frame;
import io.rota.proto.MemberInfo;
import io.rota.proto.RegisteredMember;
import io.rota.proto.facts.BadValueException;
import io.rota.proto.facts.HostPort;
import io.rota.proto.facts.MemberName;
import io.rota.server.cluster.ClusterView;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * etcd's Cluster service on Rota's membership changes (the same requests {@code rotactl member ...} sends,
 * carried out by the leader): MemberAdd registers the member and changes the configuration (a learner as a
 * Rota learner), MemberRemove and MemberPromote change it, MemberList lists the leader's configuration.
 * A member's clientURLs are its etcd URL, as it published it with its other addresses (a member without
 * {@code --listen-etcd}, or not started yet, has none). MemberUpdate changes the member's peer address, as
 * {@code rotactl member update} does.
 */
final class ClusterService extends ClusterGrpc.ClusterImplBase {

    private final Calls calls;
    private final ClusterView view;
    private final Supplier<String> selfUrl;

    /** @param selfUrl this member's etcd URL, for its own entry before its publication has applied */
    ClusterService(Calls calls, ClusterView view, Supplier<String> selfUrl) {
        this.calls = calls;
        this.view = view;
        this.selfUrl = selfUrl;
    }

    private static Frame listRequest() {
        return Frame.newBuilder().setMemberListRequest(io.rota.proto.MemberListRequest.getDefaultInstance()).build();
    }

    @Override
    public void memberList(MemberListRequest request, StreamObserver<MemberListResponse> out) {
        calls.unary(ClusterService::listRequest, f -> MemberListResponse.newBuilder()
                .setHeader(EtcdCodec.header(f.getMemberListResponse().getHeader(), calls.clusterId))
                .addAllMembers(members(f)).build(), out);
    }

    /**
     * etcd's MemberAdd has peer URLs and no name (an etcd member names itself when it starts). Rota's registry
     * needs a name, the one the new member must start with ({@code --name}): it is made from the peer URL's
     * host and port, and the answer's member carries it.
     */
    @Override
    public void memberAdd(MemberAddRequest request, StreamObserver<MemberAddResponse> out) {
        calls.unary(() -> {
            String peer = peerAddress(request.getPeerURLsList());
            String name = peer.replaceAll("[^A-Za-z0-9_.-]", "-");
            return Frame.newBuilder().setMemberAddRequest(io.rota.proto.MemberAddRequest.newBuilder()
                    .setName(name.substring(0, Math.min(name.length(), MemberName.MAX_LENGTH))).setPeerAddress(peer)
                    .setLearner(request.getIsLearner())).build();
        }, f -> {
            io.rota.proto.MemberAddResponse added = f.getMemberAddResponse();
            MemberAddResponse.Builder b = MemberAddResponse.newBuilder()
                    .setHeader(EtcdCodec.header(added.getHeader(), calls.clusterId))
                    .setMember(member(added.getMember()));
            added.getMembersList().forEach(m -> b.addMembers(member(m)));
            return b.build();
        }, out);
    }

    @Override
    public void memberRemove(MemberRemoveRequest request, StreamObserver<MemberRemoveResponse> out) {
        calls.unary(() -> Frame.newBuilder().setMemberRemoveRequest(io.rota.proto.MemberRemoveRequest.newBuilder()
                        .setId(request.getID())).build(), this::removeIfMember,
                f -> MemberRemoveResponse.newBuilder().setHeader(EtcdCodec.header(header(f), calls.clusterId))
                        .addAllMembers(members(f)).build(), out);
    }

    @Override
    public void memberPromote(MemberPromoteRequest request, StreamObserver<MemberPromoteResponse> out) {
        calls.unary(() -> Frame.newBuilder().setMemberPromoteRequest(io.rota.proto.MemberPromoteRequest.newBuilder()
                        .setId(request.getID())).build(), this::thenList,
                f -> MemberPromoteResponse.newBuilder().setHeader(EtcdCodec.header(header(f), calls.clusterId))
                        .addAllMembers(members(f)).build(), out);
    }

    /**
     * etcd's MemberUpdate: the member's one peer URL (Rota keeps one peer address: more than one URL is
     * INVALID_ARGUMENT) as host:port, carried out as {@code rotactl member update}; the answer lists the
     * members after it, as etcd's does. Unknown or removed ids: etcd's "member not found".
     */
    @Override
    public void memberUpdate(MemberUpdateRequest request, StreamObserver<MemberUpdateResponse> out) {
        calls.unary(() -> Frame.newBuilder().setMemberUpdateRequest(io.rota.proto.MemberUpdateRequest.newBuilder()
                        .setId(request.getID()).setPeerAddress(peerAddress(request.getPeerURLsList()))).build(),
                this::thenList,
                f -> MemberUpdateResponse.newBuilder().setHeader(EtcdCodec.header(header(f), calls.clusterId))
                        .addAllMembers(members(f)).build(), out);
    }

    /**
     * The change, then the members after it (etcd's answer lists them). The change is done once it is
     * answered: if the list then fails, the answer says so by listing none, never by an error that would
     * make the client repeat the change.
     */
    private CompletableFuture<Frame> thenList(Frame change) {
        return thenList(change, EtcdCallers.Caller.current());
    }

    /** {@link #thenList(Frame)} as {@code caller}: both requests are checked as the caller's own (root only). */
    private CompletableFuture<Frame> thenList(Frame change, EtcdCallers.Caller caller) {
        return calls.route(change, caller).thenCompose(a -> a.hasError() ? CompletableFuture.completedFuture(a)
                : calls.route(listRequest(), caller).handle((l, e) -> e == null && !l.hasError() ? l : a));
    }

    /**
     * Rota's remove answers "done" for a member that is not there (so a retried remove succeeds); etcd answers
     * "member not found", and its clients rely on that, so the configuration is looked at first.
     */
    private CompletableFuture<Frame> removeIfMember(Frame remove) {
        long id = remove.getMemberRemoveRequest().getId();
        EtcdCallers.Caller caller = EtcdCallers.Caller.current();
        return calls.route(listRequest(), caller).thenCompose(l -> {
            if (l.hasError()) {
                return CompletableFuture.completedFuture(l);
            }
            if (l.getMemberListResponse().getMembersList().stream().noneMatch(m -> m.getId() == id)) {
                return CompletableFuture.completedFuture(Frame.newBuilder().setError(io.rota.proto.Error.newBuilder()
                        .setCode(io.rota.proto.Error.Code.MEMBERSHIP_REFUSED).setMembershipRefusal("NOT_A_MEMBER")
                        .setMessage("member " + id + " is not a member of the cluster")).build());
            }
            return thenList(remove, caller);
        });
    }

    private static io.rota.proto.ResponseHeader header(Frame f) {
        if (f.hasMemberListResponse()) {
            return f.getMemberListResponse().getHeader();
        }
        if (f.hasMemberUpdateResponse()) {
            return f.getMemberUpdateResponse().getHeader();
        }
        return f.hasMemberRemoveResponse() ? f.getMemberRemoveResponse().getHeader()
                : f.getMemberPromoteResponse().getHeader();
    }

    private List<Member> members(Frame f) {
        List<Member> out = new ArrayList<>();
        if (f.hasMemberListResponse()) {
            for (MemberInfo m : f.getMemberListResponse().getMembersList()) {
                out.add(member(m.getId(), m.getName(), m.getPeerAddress(), m.getLearner()));
            }
        }
        return out;
    }

    private Member member(RegisteredMember m) {
        return member(m.getId(), m.getName(), m.getPeerAddress(), m.getLearner());
    }

    /** etcd's member: its URLs with etcd's scheme; the client URL is the etcd URL it published. */
    private Member member(long id, String name, String peerAddress, boolean learner) {
        Member.Builder b = Member.newBuilder().setID(id).setName(name).setIsLearner(learner);
        if (!peerAddress.isEmpty()) {
            b.addPeerURLs("http://" + peerAddress);
        }
        io.rota.proto.Member published = view.members().get(id);
        if (published != null && !published.getEtcdAddress().isEmpty()) {
            // A member's etcd port has TLS exactly when its client port has, and members share that setting.
            String scheme = selfUrl.get().startsWith("https://") ? "https://" : "http://";
            b.addClientURLs(scheme + published.getEtcdAddress());
        } else if (id == view.memberId()) {
            b.addClientURLs(selfUrl.get());
        }
        return b.build();
    }

    /** The one peer URL as Rota's host:port; a Rota member has exactly one peer address. */
    static String peerAddress(List<String> urls) {
        if (urls.size() != 1) {
            throw EtcdErrors.invalid(EtcdErrors.BAD_MEMBER_URLS + " (Rota needs exactly one peer URL, got "
                    + urls.size() + ")");
        }
        try {
            return HostPort.parse("peer URL", urls.get(0)).toString();
        } catch (BadValueException e) {
            throw EtcdErrors.invalid(EtcdErrors.BAD_MEMBER_URLS + " (" + e.getMessage() + ")");
        }
    }
}
