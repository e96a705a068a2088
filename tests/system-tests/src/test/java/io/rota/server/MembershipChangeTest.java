package io.rota.server;

import io.rota.client.AddedMember;
import io.rota.client.ClusterMember;
import io.rota.client.RotaClient;
import io.rota.client.RotaException;
import io.rota.testkit.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Membership changes end to end, in one JVM (issue 13): a member added as a learner joins with
 * --initial-cluster-state existing, catches up, is promoted and removed; a member restarted on an empty data
 * directory under its old id is refused with the way to replace it; the replacement (remove, add) works; a
 * member moved to a new peer address (update, restart there) rejoins.
 */
@Tag("cluster")
class MembershipChangeTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @TempDir
    Path root;
    private final List<RotaServer> running = new ArrayList<>();
    private final Map<String, InetSocketAddress> bootstrap = new LinkedHashMap<>();

    @AfterEach
    void stopAll() {
        for (RotaServer s : running) {
            s.close();
        }
    }

    private ServerConfig.Builder member(String name, InetSocketAddress peer, Map<String, InetSocketAddress> cluster) {
        return ServerConfig.builder(name).dataDir(root.resolve(name))
                .listenClient(new InetSocketAddress("127.0.0.1", freePort())).listenPeer(peer)
                .initialCluster(cluster).clusterId("membership").heartbeatMs(50).electionMs(500)
                .snapshotCount(200).maxRequestBytes(64 * 1024).requestTimeout(Duration.ofSeconds(5));
    }

    private RotaServer start(ServerConfig config) {
        RotaServer s = RotaServer.start(config);
        running.add(s);
        return s;
    }

    private void stop(RotaServer s) {
        s.close();
        running.remove(s);
    }

    private List<RotaServer> startThree() {
        for (int i = 1; i <= 3; i++) {
            bootstrap.put("n" + i, new InetSocketAddress("127.0.0.1", freePort()));
        }
        List<RotaServer> three = new ArrayList<>();
        for (String name : bootstrap.keySet()) {
            three.add(start(member(name, bootstrap.get(name), bootstrap).build()));
        }
        return three;
    }

    private String endpoints() {
        StringBuilder out = new StringBuilder();
        for (RotaServer s : running) {
            out.append(out.length() == 0 ? "" : ",").append("127.0.0.1:").append(s.clientAddress().getPort());
        }
        return out.toString();
    }

    /** Starts the member `member add` registered, with the cluster's members as it printed them. */
    private RotaServer join(AddedMember added, InetSocketAddress peer) {
        Map<String, InetSocketAddress> cluster = new LinkedHashMap<>();
        Map<String, Long> ids = new LinkedHashMap<>();
        for (ClusterMember m : added.members()) {
            String[] hp = m.peerAddress().split(":");
            cluster.put(m.name(), new InetSocketAddress(hp[0], Integer.parseInt(hp[1])));
            ids.put(m.name(), m.id());
        }
        return start(member(added.name(), peer, cluster).memberIds(ids)
                .initialClusterState(ServerConfig.ClusterState.EXISTING).build());
    }

    @Test
    void aLearnerJoinsCatchesUpIsPromotedAndRemoved() {
        startThree();
        try (RotaClient rota = RotaClient.builder().endpoints(endpoints()).callTimeout(Duration.ofSeconds(10)).build()) {
            for (int i = 0; i < 500; i++) {   // past two snapshots: the learner catches up by snapshot
                rota.kv().put("k" + i, "v" + i);
            }
            InetSocketAddress peer = new InetSocketAddress("127.0.0.1", freePort());
            AddedMember added = rota.cluster().addMember("n4", "127.0.0.1:" + peer.getPort(), "", true);
            assertEquals(4, added.id(), "one above every id in use");
            assertEquals(added, rota.cluster().addMember("n4", "127.0.0.1:" + peer.getPort(), "", true),
                    "a retried add answers the same member");
            assertTrue(added.members().stream().anyMatch(m -> m.id() == 4 && m.learner()));
            RotaServer n4 = join(added, peer);
            Await.until(TIMEOUT, () -> rota.cluster().memberList().stream()
                    .anyMatch(m -> m.id() == 4 && m.learner() && m.caughtUp()), "n4 caught up");
            rota.cluster().promoteMember(4);
            List<ClusterMember> members = rota.cluster().memberList();
            assertEquals(4, members.size());
            assertTrue(members.stream().noneMatch(ClusterMember::learner), members.toString());
            try (RotaClient viaN4 = RotaClient.connect("127.0.0.1:" + n4.clientAddress().getPort())) {
                viaN4.kv().put("through-n4", "yes");
                assertEquals("v499", viaN4.kv().get("k499").first().orElseThrow().valueString());
            }
            rota.cluster().moveLeader(4);
            Await.until(TIMEOUT, () -> n4.view().isLeader(), "n4 leads");
            rota.cluster().moveLeader(1);
            RotaException refused = assertThrows(RotaException.class, () -> rota.cluster().promoteMember(2));
            assertEquals("NOT_A_LEARNER", refused.membershipRefusal());
            rota.cluster().removeMember(4);
            assertEquals(List.of(1L, 2L, 3L), rota.cluster().memberList().stream().map(ClusterMember::id).toList());
            stop(n4);
            rota.kv().put("after-remove", "ok");
            RotaException taken = assertThrows(RotaException.class,
                    () -> rota.cluster().addMember("n1", "127.0.0.1:1", "", true));
            assertEquals("NAME_TAKEN", taken.membershipRefusal());
        }
    }

    @Test
    void anEmptyDataDirUnderAJoinedIdIsRefusedAndTheMemberIsReplaced() throws Exception {
        List<RotaServer> three = startThree();
        try (RotaClient rota = RotaClient.builder().endpoints(endpoints()).callTimeout(Duration.ofSeconds(10)).build()) {
            rota.kv().put("before", "1");
            Await.until(TIMEOUT, () -> three.get(0).view().members().size() == 3, "all three published");
            RotaServer n3 = three.get(2);
            ServerConfig n3Config = n3.config();
            stop(n3);
            deleteRecursively(n3Config.dataDir());

            RotaServer again = start(n3Config);
            String reason = again.refused().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            assertTrue(reason.contains("member 3 has already joined"), reason);
            assertTrue(reason.contains("rotactl member remove 3"), reason);
            stop(again);

            rota.cluster().removeMember(3);
            InetSocketAddress peer = new InetSocketAddress("127.0.0.1", freePort());
            AddedMember added = rota.cluster().addMember("n5", "127.0.0.1:" + peer.getPort(), "", true);
            assertEquals(4, added.id(), "id 3 is never reused");
            RotaServer n5 = join(added, peer);
            Await.until(TIMEOUT, () -> rota.cluster().memberList().stream()
                    .anyMatch(m -> m.id() == 4 && m.caughtUp()), "n5 caught up");
            rota.cluster().promoteMember(4);
            rota.kv().put("after", "2");
            assertEquals("1", rota.kv().get("before").first().orElseThrow().valueString());

            // The removed id comes back, knowing n5 (so it dials it, the lower id dials): refused, "removed".
            deleteRecursively(n3Config.dataDir());
            Map<String, InetSocketAddress> withN5 = new LinkedHashMap<>(bootstrap);
            withN5.put("n5", peer);
            RotaServer removed = start(n3Config.toBuilder().initialCluster(withN5)
                    .memberIds(Map.of("n1", 1L, "n2", 2L, "n3", 3L, "n5", 4L)).build());
            String why = removed.refused().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            assertTrue(why.contains("was removed"), why);
            stop(removed);
            assertFalse(rota.cluster().memberList().stream().anyMatch(m -> m.id() == 3));
            assertTrue(n5.view().members().containsKey(4L), "n5 published itself");
        }
    }

    /**
     * Strict reconfiguration (issue 32, design MF2): with one follower stopped, removing the other would leave
     * a configuration of the leader and the stopped member, which cannot commit the removal, nor anything
     * after it. Refused with the reason and who answers; forced, it goes in (and the cluster waits for the
     * stopped member, which comes back here).
     */
    @Test
    void aRemovalThatWouldLoseQuorumIsRefusedUnlessForced() {
        List<RotaServer> three = startThree();
        try (RotaClient rota = RotaClient.builder().endpoints(endpoints()).callTimeout(Duration.ofSeconds(10)).build()) {
            rota.kv().put("before", "1");
            Await.until(TIMEOUT, () -> three.stream().anyMatch(s -> s.view().isLeader()), "a leader");
            RotaServer leader = three.stream().filter(s -> s.view().isLeader()).findFirst().orElseThrow();
            List<RotaServer> followers = three.stream().filter(s -> s != leader).toList();
            RotaServer silent = followers.get(0);
            long silentId = silent.view().memberId();
            long otherId = followers.get(1).view().memberId();
            ServerConfig silentConfig = silent.config();
            stop(silent);
            Await.until(TIMEOUT, () -> leader.view().status() != null
                    && !leader.view().status().progress().get(silentId).responding(), "the leader misses it");

            RotaException refused = assertThrows(RotaException.class, () -> rota.cluster().removeMember(otherId));
            assertEquals("QUORUM_AT_RISK", refused.membershipRefusal());
            assertEquals(0, refused.retryAfterMs(), "waiting does not mend it");
            String message = refused.getMessage();
            assertTrue(message.contains("2 voters, of which 1 answers"), message);
            java.util.regex.Matcher answering = java.util.regex.Pattern
                    .compile("members answering within an election timeout: ([0-9, ]+)\\.").matcher(message);
            assertTrue(answering.find(), message);
            assertEquals(new java.util.TreeSet<>(List.of(leader.view().memberId(), otherId)),
                    new java.util.TreeSet<>(Stream.of(answering.group(1).split(", ")).map(Long::valueOf).toList()),
                    "the leader and the live follower answer, the stopped member does not: " + message);
            assertTrue(message.contains("--force"), message);
            rota.kv().put("still-writable", "yes");

            rota.cluster().removeMemberAsync(otherId, true); // commits once the stopped member is back
            start(silentConfig);
            Await.until(TIMEOUT, () -> rota.cluster().memberList().stream().noneMatch(m -> m.id() == otherId),
                    "the forced removal committed");
            rota.kv().put("after", "2");
        }
    }

    /**
     * `member update` (etcd's MemberUpdate), in etcd's order: n3 (the highest id, so the others dial it) is
     * updated while it runs, and must not publish its old address back once it has seen the update (design
     * Y31); then it is stopped and restarts at the new port on its old data dir. Only the new address is
     * listened on, so its catching up on what was written meanwhile, and a write through it, prove the others
     * dial there.
     */
    @Test
    void aMemberMovedToANewPeerAddressRejoinsThere() {
        List<RotaServer> three = startThree();
        try (RotaClient rota = RotaClient.builder().endpoints(endpoints()).callTimeout(Duration.ofSeconds(10)).build()) {
            rota.kv().put("before", "1");
            Await.until(TIMEOUT, () -> three.get(0).view().members().size() == 3, "all three published");
            RotaServer n3 = three.get(2);
            ServerConfig n3Config = n3.config();

            InetSocketAddress moved = new InetSocketAddress("127.0.0.1", freePort());
            String movedAddress = "127.0.0.1:" + moved.getPort();
            rota.cluster().updateMember(3, movedAddress);
            assertEquals(movedAddress, peerOf(rota, 3), "member list shows the update at once");
            Await.until(TIMEOUT, () -> n3.view().members().containsKey(3L)
                            && movedAddress.equals(n3.view().members().get(3L).getPeerAddress()),
                    "n3 has seen its own update (its publisher had its chance to put the old address back)");
            RotaException unknown = assertThrows(RotaException.class, () -> rota.cluster().updateMember(9, "127.0.0.1:1"));
            assertEquals("NOT_A_MEMBER", unknown.membershipRefusal());
            RotaException bad = assertThrows(RotaException.class, () -> rota.cluster().updateMember(3, "nowhere"));
            assertEquals(RotaException.Code.INVALID_ARGUMENT, bad.code());
            assertTrue(bad.getMessage().contains("'nowhere'"), bad.getMessage());
            RotaException taken = assertThrows(RotaException.class, () -> rota.cluster().updateMember(3,
                    "127.0.0.1:" + bootstrap.get("n1").getPort()));
            assertEquals("NAME_TAKEN", taken.membershipRefusal());

            stop(n3);
            for (int i = 0; i < 300; i++) {   // past a snapshot (snapshotCount 200) while n3 is away
                rota.kv().put("away" + i, "v" + i);
            }
            assertEquals(movedAddress, peerOf(rota, 3), "the running n3 did not publish its old address back");

            Map<String, InetSocketAddress> cluster = new LinkedHashMap<>(bootstrap);
            cluster.put("n3", moved);
            RotaServer again = start(n3Config.toBuilder().listenPeer(moved).initialCluster(cluster).build());
            Await.until(TIMEOUT, () -> rota.cluster().memberList().stream()
                    .anyMatch(m -> m.id() == 3 && m.caughtUp() && m.lag() == 0), "n3 caught up at its new address");
            try (RotaClient viaN3 = RotaClient.connect("127.0.0.1:" + again.clientAddress().getPort())) {
                viaN3.kv().put("through-n3", "yes");
                assertEquals("v299", viaN3.kv().get("away299").first().orElseThrow().valueString());
            }
            assertEquals("yes", rota.kv().get("through-n3").first().orElseThrow().valueString());
            assertEquals(movedAddress, again.view().members().get(3L).getPeerAddress(),
                    "its own publication agrees with the update");
        }
    }

    private static String peerOf(RotaClient rota, long id) {
        return rota.cluster().memberList().stream().filter(m -> m.id() == id).findFirst().orElseThrow().peerAddress();
    }

    static void deleteRecursively(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.delete(p);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        }
    }

    /**
     * testkit's: below the ephemeral range, because members restart on their old ports here, and a port from
     * that range, once freed, can become the source port of an outgoing connection (failed: "Address already
     * in use" on n3's restart).
     */
    private static int freePort() {
        return io.rota.testkit.Ports.freePort();
    }
}
