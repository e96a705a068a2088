package io.rota.server.etcd;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.rota.etcd.api.ClusterGrpc;
import io.rota.etcd.api.KVGrpc;
import io.rota.etcd.api.KeyValue;
import io.rota.etcd.api.Member;
import io.rota.etcd.api.MemberListRequest;
import io.rota.etcd.api.PutRequest;
import io.rota.etcd.api.PutResponse;
import io.rota.etcd.api.RangeRequest;
import io.rota.server.RotaServer;
import io.rota.server.ServerConfig;
import io.rota.testkit.Await;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static io.rota.testkit.Ports.freePort;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * etcd's API on a three-member Rota, in one JVM: a write sent to a follower's etcd port is forwarded to the
 * leader and applied once, and MemberList names every member's etcd URL, from whichever member answers.
 */
class EtcdClusterTest {

    @TempDir
    static Path dir;
    private static final List<RotaServer> servers = new ArrayList<>();
    private static final List<ManagedChannel> channels = new ArrayList<>();

    @BeforeAll
    static void start() {
        Map<String, InetSocketAddress> cluster = new LinkedHashMap<>();
        for (int i = 1; i <= 3; i++) {
            cluster.put("n" + i, new InetSocketAddress("127.0.0.1", freePort()));
        }
        for (int i = 1; i <= 3; i++) {
            RotaServer s = RotaServer.start(ServerConfig.builder("n" + i).dataDir(dir.resolve("n" + i))
                    .listenClient(new InetSocketAddress("127.0.0.1", 0)).listenPeer(cluster.get("n" + i))
                    .initialCluster(cluster).clusterId("etcd-cluster-test").heartbeatMs(50).electionMs(500)
                    .listenEtcd(new InetSocketAddress("127.0.0.1", 0)).build());
            servers.add(s);
            channels.add(NettyChannelBuilder.forAddress(s.etcdAddress()).usePlaintext().build());
        }
        Await.until(Duration.ofSeconds(30), () -> servers.stream().anyMatch(s -> s.view().isLeader()),
                "a leader among the three members");
    }

    @AfterAll
    static void stop() throws InterruptedException {
        for (ManagedChannel c : channels) {
            c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        servers.forEach(RotaServer::close);
    }

    private static KVGrpc.KVBlockingStub kv(int member) {
        return KVGrpc.newBlockingStub(channels.get(member)).withDeadlineAfter(20, TimeUnit.SECONDS);
    }

    private static int follower() {
        for (int i = 0; i < servers.size(); i++) {
            if (!servers.get(i).view().isLeader()) {
                return i;
            }
        }
        throw new AssertionError("no follower");
    }

    @Test
    @DisplayName("a Put on a follower's etcd port is forwarded to the leader and applied exactly once")
    void putOnAFollowerIsForwardedAndAppliedOnce() {
        int f = follower();
        ByteString key = ByteString.copyFromUtf8("fwd/k");
        PutResponse put = kv(f).put(PutRequest.newBuilder().setKey(key).setValue(ByteString.copyFromUtf8("v"))
                .setPrevKv(true).build());
        assertFalse(put.hasPrevKv(), "the key was new");
        long revision = put.getHeader().getRevision();
        for (int i = 0; i < servers.size(); i++) {
            int member = i;
            // A linearizable read on every member: one version, created by that put, and no later revision.
            Await.until(Duration.ofSeconds(10), () -> kv(member).range(RangeRequest.newBuilder().setKey(key).build())
                    .getKvsCount() == 1, "member " + (member + 1) + " to have applied the put");
            var r = kv(i).range(RangeRequest.newBuilder().setKey(key).build());
            KeyValue kv = r.getKvs(0);
            assertEquals(1, kv.getVersion(), "applied once, on member " + (i + 1));
            assertEquals(revision, kv.getCreateRevision());
            assertEquals(revision, kv.getModRevision());
            assertEquals(revision, r.getHeader().getRevision(), "nothing else was applied after the put");
        }
    }

    @Test
    @DisplayName("MemberList names every member with its peer URL and its etcd URL as client URL, from any member")
    void memberListNamesEveryMembersEtcdUrl() {
        Set<String> expected = servers.stream().map(s -> "http://127.0.0.1:" + s.etcdAddress().getPort())
                .collect(Collectors.toCollection(TreeSet::new));
        for (int i = 0; i < servers.size(); i++) {
            ClusterGrpc.ClusterBlockingStub cluster = ClusterGrpc.newBlockingStub(channels.get(i));
            Await.until(Duration.ofSeconds(20), () -> clientUrls(cluster.withDeadlineAfter(10, TimeUnit.SECONDS)
                    .memberList(MemberListRequest.getDefaultInstance()).getMembersList()).equals(expected),
                    "every member's etcd URL in member " + (i + 1) + "'s list");
            for (Member m : cluster.withDeadlineAfter(10, TimeUnit.SECONDS)
                    .memberList(MemberListRequest.getDefaultInstance()).getMembersList()) {
                RotaServer s = servers.get((int) m.getID() - 1);
                assertEquals(List.of("http://127.0.0.1:" + s.etcdAddress().getPort()), m.getClientURLsList());
                assertEquals(List.of("http://" + s.config().advertisedPeer().getHostString() + ":"
                        + s.config().advertisedPeer().getPort()), m.getPeerURLsList());
            }
        }
    }

    private static Set<String> clientUrls(List<Member> members) {
        return members.stream().flatMap(m -> m.getClientURLsList().stream())
                .collect(Collectors.toCollection(TreeSet::new));
    }
}
