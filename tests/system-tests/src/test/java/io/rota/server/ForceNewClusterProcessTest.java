package io.rota.server;

import io.rota.client.AddedMember;
import io.rota.client.ClusterMember;
import io.rota.client.RotaClient;
import io.rota.testkit.Await;
import io.rota.testkit.ProcessCluster;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Disaster recovery with real processes (issue 32, docs/design.md MF10): two of three members are gone for
 * good, so no change can ever commit (§4.1: every configuration needs a majority of its voters); the third is
 * restarted with {@code --force-new-cluster}, becomes the sole voter of its own data, keeps every
 * acknowledged write, takes writes again, and grows by the usual learner-then-promote path. An old member
 * that comes back on its old data dir is refused by the new cluster (it was retired).
 */
@Tag("process")
class ForceNewClusterProcessTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final String[] FLAGS = {"--heartbeat-ms", "50", "--election-ms", "500"};

    @TempDir
    Path dir;
    private ProcessCluster cluster;

    @AfterEach
    void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void twoMembersGoneForGoodTheThirdIsForcedIntoANewClusterThatKeepsEveryWriteAndGrows() {
        assumeTrue(Files.isRegularFile(ProcessCluster.jar()), "needs the packaged jar: run ./mvnw -B verify");
        cluster = ProcessCluster.start(dir, 3, FLAGS);
        cluster.awaitLeader();
        List<String> acknowledged = new ArrayList<>();
        try (RotaClient rota = RotaClient.builder().endpoints(cluster.endpoints())
                .callTimeout(Duration.ofSeconds(15)).build()) {
            Await.until(TIMEOUT, () -> rota.cluster().members().size() == 3, "all three published");
            for (int i = 0; i < 100; i++) {
                rota.kv().put("k/" + i, "v" + i);
                acknowledged.add("k/" + i);
            }
        }
        // n1 and n2 are gone for good (kill -9, their hosts lost); n3 is stopped to be restarted with the flag.
        cluster.kill(0);
        cluster.kill(1);
        cluster.kill(2);
        String initialCluster = "n1=127.0.0.1:" + cluster.peerPort(0) + ",n2=127.0.0.1:" + cluster.peerPort(1)
                + ",n3=127.0.0.1:" + cluster.peerPort(2);
        cluster.startMember(2, initialCluster, "--force-new-cluster");
        cluster.awaitHealthy(2);

        try (RotaClient n3 = RotaClient.builder().endpoints(cluster.endpoint(2))
                .callTimeout(Duration.ofSeconds(15)).build()) {
            n3.kv().put("after-force", "1");
            for (String key : acknowledged) {
                assertTrue(n3.kv().get(key).first().isPresent(), "acknowledged " + key + " lost");
            }
            assertEquals(List.of(3L), n3.cluster().memberList().stream().map(ClusterMember::id).toList());
            Await.until(TIMEOUT, () -> log(2).contains("retired old member 1") && log(2).contains("retired old member 2"),
                    "n3 retired n1 and n2");
            assertTrue(log(2).contains("--force-new-cluster: n3 (id 3) is now the SOLE VOTER"), log(2));

            // Grow again the usual way: a learner on an empty data dir, caught up, promoted.
            int n4 = cluster.addMember();
            AddedMember added = n3.cluster().addMember(ProcessCluster.name(n4), "127.0.0.1:" + cluster.peerPort(n4),
                    "", true);
            cluster.startMember(n4, added.initialCluster(), "--initial-cluster-state", "existing",
                    "--cluster-id", added.clusterId());
            cluster.awaitHealthy(n4);
            Await.until(TIMEOUT, () -> n3.cluster().memberList().stream()
                    .anyMatch(m -> m.id() == added.id() && m.caughtUp()), "n4 caught up");
            n3.cluster().promoteMember(added.id());
            try (RotaClient viaN4 = RotaClient.connect(cluster.endpoint(n4))) {
                viaN4.kv().put("after-growth", "1");
                for (String key : acknowledged) {
                    assertTrue(viaN4.kv().get(key).first().isPresent(), "n4 lacks acknowledged " + key);
                }
                assertTrue(viaN4.kv().get("after-force").first().isPresent());
            }
            assertEquals(List.of(3L, added.id()), n3.cluster().memberList().stream().map(ClusterMember::id).toList());

            // An old member back on its old data dir dials n3 (lower ids dial higher) and is refused: exit 3.
            cluster.startMember(0);
            cluster.expectExit(0);
            assertEquals(3, cluster.awaitExit(0, TIMEOUT), "refused: a supervisor must not restart it");
            assertTrue(log(0).contains("member 1 was removed from cluster"), log(0));
            n3.kv().put("after-old-member", "1");
        }
    }

    private String log(int i) {
        try {
            return Files.readString(cluster.logFile(i));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
