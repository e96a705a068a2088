package io.rota.server;

import io.rota.client.AddedMember;
import io.rota.client.ClusterMember;
import io.rota.client.RotaClient;
import io.rota.client.RotaException;
import io.rota.testkit.Await;
import io.rota.testkit.ProcessCluster;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Membership changes with real processes (issue 13, failsafe): replacing a member whose disk died, under a
 * write load; a learner that never counts toward commitment; growing 3 → 5 and shrinking back to 3 under a
 * write load. Every acknowledged write must be present at the end, and a linearizable read after each
 * acknowledged write must see it ("throughout").
 */
@Tag("process")
class MembershipProcessTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final String[] FLAGS = {"--heartbeat-ms", "50", "--election-ms", "500", "--snapshot-count", "300"};

    @TempDir
    Path dir;
    private ProcessCluster cluster;
    private Load load;

    @AfterEach
    void stop() throws Exception {
        if (load != null) {
            load.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    /** Writes sequential keys, each followed by a linearizable read of it; records what was acknowledged. */
    static final class Load implements AutoCloseable {
        final Set<String> acknowledged = ConcurrentHashMap.newKeySet();
        final AtomicReference<String> violation = new AtomicReference<>();
        private final AtomicBoolean running = new AtomicBoolean(true);
        private final Thread thread;
        private final RotaClient client;

        Load(String endpoints) {
            client = RotaClient.builder().endpoints(endpoints).callTimeout(Duration.ofSeconds(10)).build();
            thread = new Thread(() -> {
                for (int i = 0; running.get(); i++) {
                    String key = "load/" + i;
                    try {
                        client.kv().put(key, Integer.toString(i));
                        acknowledged.add(key);
                        if (client.kv().get(key).first().isEmpty()) {
                            violation.compareAndSet(null, "a linearizable read missed acknowledged " + key);
                        }
                    } catch (RotaException e) {
                        // not acknowledged (or the read failed): nothing to check for this key
                    }
                }
            }, "membership-load");
            thread.start();
        }

        void awaitProgress(int more) {
            int target = acknowledged.size() + more;
            Await.until(TIMEOUT, () -> acknowledged.size() >= target, more + " more acknowledged writes");
        }

        @Override
        public void close() throws InterruptedException {
            running.set(false);
            thread.join(30_000);
            client.close();
        }
    }

    private static String peer(ProcessCluster c, int i) {
        return "127.0.0.1:" + c.peerPort(i);
    }

    /** `member add` for index {@code i} (a learner), then start it as printed, with existing state. */
    private AddedMember addAndStart(RotaClient rota, int i) {
        AddedMember added = rota.cluster().addMember(ProcessCluster.name(i), peer(cluster, i), "", true);
        cluster.startMember(i, added.initialCluster(), "--initial-cluster-state", "existing",
                "--cluster-id", added.clusterId());
        cluster.awaitHealthy(i);
        Await.until(TIMEOUT, () -> rota.cluster().memberList().stream()
                .anyMatch(m -> m.id() == added.id() && m.caughtUp()), ProcessCluster.name(i) + " caught up");
        return added;
    }

    /** Three member processes, a leader, all three published; a client of them. */
    private RotaClient startThree() {
        assumeTrue(Files.isRegularFile(ProcessCluster.jar()), "needs the packaged jar: run ./mvnw -B verify");
        cluster = ProcessCluster.start(dir, 3, FLAGS);
        cluster.awaitLeader();
        RotaClient rota = RotaClient.builder().endpoints(cluster.endpoints()).callTimeout(Duration.ofSeconds(15)).build();
        try {
            Await.until(TIMEOUT, () -> rota.cluster().members().size() == 3, "all three published");
        } catch (RuntimeException | AssertionError e) {
            rota.close();
            throw e;
        }
        return rota;
    }

    private void assertEveryAcknowledgedWritePresent(RotaClient rota) {
        assertNull(load.violation.get());
        for (String key : load.acknowledged) {
            assertTrue(rota.kv().get(key).first().isPresent(), "acknowledged " + key + " lost");
        }
    }

    @Test
    @DisplayName("§4.2.2 (issue 32, item 6): the removed member with the highest id, which no peer dials, learns its removal and exits 3 saying so")
    void aRemovedMemberThatNoPeerDialsStillExits() throws Exception {
        try (RotaClient rota = startThree()) {
            rota.kv().put("before", "1");
            cluster.expectExit(2);
            rota.cluster().removeMember(3);
            // Only lower ids dial, so n3 is refused by no one: it lingered, up and idle, before.
            assertEquals(3, cluster.awaitExit(2, TIMEOUT), "exit status 3: a supervisor must not restart it");
            String log = Files.readString(cluster.logFile(2));
            assertTrue(log.contains("was removed from the cluster"), log);
            rota.kv().put("after", "1");
            assertEquals(List.of(1L, 2L), rota.cluster().memberList().stream().map(ClusterMember::id).toList());
        }
    }

    @Test
    void aDeadMemberIsReplacedUnderLoadAndItsOldIdIsRefusedOnAnEmptyDataDir() throws Exception {
        try (RotaClient rota = startThree()) {
            load = new Load(cluster.endpoints());
            load.awaitProgress(200);

            cluster.kill(2);               // kill -9 n3, and its disk dies
            cluster.deleteDataDir(2);
            load.awaitProgress(100);

            cluster.startMember(2);        // the operator's mistake: the old id on an empty disk
            cluster.expectExit(2);
            assertEquals(3, cluster.awaitExit(2, TIMEOUT), "refused, exit status 3: a supervisor must not restart it");
            String log = Files.readString(cluster.logFile(2));
            assertTrue(log.contains("member 3 has already joined cluster"), log);
            assertTrue(log.contains("rotactl member remove 3"), log);

            rota.cluster().removeMember(3);
            int replacement = cluster.addMember();
            AddedMember added = addAndStart(rota, replacement);
            assertEquals(4, added.id(), "ids are never reused");
            rota.cluster().promoteMember(4);
            load.awaitProgress(100);
            load.close();
            try (RotaClient viaNew = RotaClient.connect(cluster.endpoint(replacement))) {
                assertEveryAcknowledgedWritePresent(viaNew);
            }
            assertEquals(List.of(1L, 2L, 4L), rota.cluster().memberList().stream().map(ClusterMember::id).toList());
        }
    }

    @Test
    void aLearnerNeverCountsTowardCommitAndTheClusterGrowsToFiveAndShrinksToThreeUnderLoad() throws Exception {
        assumeTrue(Files.isRegularFile(ProcessCluster.jar()), "needs the packaged jar: run ./mvnw -B verify");
        cluster = ProcessCluster.start(dir, 3, FLAGS);
        cluster.awaitLeader();
        try (RotaClient rota = RotaClient.builder().endpoints(cluster.endpoints())
                .callTimeout(Duration.ofSeconds(15)).build()) {
            int n4 = cluster.addMember();
            addAndStart(rota, n4);

            // 3 voters + 1 learner; stop two voters: the learner is no third of a majority, writes stop.
            int leader = cluster.awaitLeader();
            int[] stopped = {(leader + 1) % 3, (leader + 2) % 3};
            for (int i : stopped) {
                cluster.kill(i);
            }
            try (RotaClient quick = RotaClient.builder().endpoints(cluster.endpoint(leader) + "," + cluster.endpoint(n4))
                    .callTimeout(Duration.ofSeconds(3)).build()) {
                assertThrows(RotaException.class, () -> quick.kv().put("no-majority", "x"),
                        "one voter and a learner must not commit");
            }
            for (int i : stopped) {
                cluster.startMember(i);
            }
            for (int i : stopped) {
                cluster.awaitHealthy(i);
            }
            rota.kv().put("majority-again", "x");

            // Grow to five under load: promote n4, add and promote n5; then remove two of the first three.
            load = new Load(cluster.endpoints() + "," + cluster.endpoint(n4));
            load.awaitProgress(100);
            rota.cluster().promoteMember(4);
            int n5 = cluster.addMember();
            addAndStart(rota, n5);
            rota.cluster().promoteMember(5);
            assertEquals(5, rota.cluster().memberList().stream().filter(m -> !m.learner()).count());
            load.awaitProgress(100);
            // A removed member that redials a peer is refused and stops itself, as it should.
            cluster.expectExit(0);
            cluster.expectExit(1);
            rota.cluster().removeMember(1);
            rota.cluster().removeMember(2);
            load.awaitProgress(100);
            load.close();
            try (RotaClient remaining = RotaClient.connect(cluster.endpoint(2) + "," + cluster.endpoint(n4) + ","
                    + cluster.endpoint(n5))) {
                assertEquals(List.of(3L, 4L, 5L),
                        remaining.cluster().memberList().stream().map(ClusterMember::id).toList());
                assertEveryAcknowledgedWritePresent(remaining);
            }
        }
    }

    /**
     * Strict reconfiguration (issue 32, item 2; design MF2), as an operator meets it: one follower is killed
     * (kill -9), and `rotactl member remove` of the other follower — which would leave the leader and the
     * dead member, a configuration that can commit nothing — exits 1 with one line saying why, who answers,
     * and what to do. The cluster still takes writes.
     */
    @Test
    void removingTheLastLiveFollowerIsRefusedAndTheClusterKeepsWriting() {
        assumeTrue(Files.isRegularFile(ProcessCluster.jar()), "needs the packaged jar: run ./mvnw -B verify");
        cluster = ProcessCluster.start(dir, 3, FLAGS);
        int leader = cluster.awaitLeader();
        int dead = (leader + 1) % 3;
        int other = (leader + 2) % 3;
        cluster.kill(dead);
        Pattern silent = Pattern.compile("\\{\"id\":" + (dead + 1) + ",[^}]*\"responding\":false");
        Await.until(TIMEOUT, () -> silent.matcher(cluster.httpGet(leader, "/dashboard/state").body()).find(),
                "the leader has not heard from n" + (dead + 1) + " within an election timeout");

        RotactlRunner.Run refused = RotactlRunner.run(cluster.endpoints(), "", "member", "remove",
                Long.toString(other + 1));
        assertEquals(1, refused.exitCode(), refused.toString());
        assertEquals("", refused.out(), refused.toString());
        assertEquals(1, refused.err().lines().count(), "one line: " + refused.err());
        assertTrue(refused.err().startsWith("Error: membership change refused (QUORUM_AT_RISK): MEMBERSHIP_REFUSED: remove " + (other + 1)
                + " refused: the new configuration would have 2 voters, of which 1 answers (" + (leader + 1) + ")"),
                refused.err());
        assertTrue(refused.err().contains("members answering within an election timeout: "), refused.err());
        assertTrue(refused.err().contains("--force"), refused.err());

        try (RotaClient rota = RotaClient.connect(cluster.endpoints())) {
            rota.kv().put("after-refusal", "ok");
            assertEquals(3, rota.cluster().memberList().size(), "nothing was removed");
        }
    }
}
