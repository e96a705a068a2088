package io.rota.server.etcd;

import io.grpc.stub.StreamObserver;
import io.rota.etcd.api.ClusterGrpc;
import io.rota.etcd.api.Member;
import io.rota.etcd.api.MemberListRequest;
import io.rota.etcd.api.MemberListResponse;
import io.rota.proto.Frame;
import io.rota.proto.MemberInfo;

import java.util.function.Supplier;

/**
 * etcd's Cluster service: MemberList from Rota's member registry. A member's clientURLs can name only this
 * member's own etcd endpoint: the others' are not in the replicated member table (docs/etcd-compat.md).
 * MemberAdd/Remove/Update/Promote are not served here yet (rotactl member ... does them).
 */
final class ClusterService extends ClusterGrpc.ClusterImplBase {

    private final Calls calls;
    private final long selfId;
    private final Supplier<String> selfUrl;

    ClusterService(Calls calls, long selfId, Supplier<String> selfUrl) {
        this.calls = calls;
        this.selfId = selfId;
        this.selfUrl = selfUrl;
    }

    @Override
    public void memberList(MemberListRequest request, StreamObserver<MemberListResponse> out) {
        calls.unary(() -> Frame.newBuilder().setMemberListRequest(io.rota.proto.MemberListRequest.getDefaultInstance())
                .build(), f -> {
            io.rota.proto.MemberListResponse list = f.getMemberListResponse();
            MemberListResponse.Builder b = MemberListResponse.newBuilder()
                    .setHeader(EtcdCodec.header(list.getHeader(), calls.clusterId));
            for (MemberInfo m : list.getMembersList()) {
                Member.Builder member = Member.newBuilder().setID(m.getId()).setName(m.getName())
                        .addPeerURLs("http://" + m.getPeerAddress()).setIsLearner(m.getLearner());
                if (m.getId() == selfId) {
                    member.addClientURLs(selfUrl.get());
                }
                b.addMembers(member);
            }
            return b.build();
        }, out);
    }
}
