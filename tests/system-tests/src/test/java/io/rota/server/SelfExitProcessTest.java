package io.rota.server;

import io.rota.testkit.ProcessCluster;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The test kit fails a process test whose member exited on its own ({@link ProcessCluster#close()}), and
 * counts neither a stop the test asked for (kill, SIGTERM, close) nor an exit it declared
 * ({@link ProcessCluster#expectExit}); and a member refusing a data dir of another cluster exits 3, the status
 * a supervisor must not restart. One-member clusters: the cheapest real processes.
 */
@Tag("process")
class SelfExitProcessTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    @TempDir
    Path dir;
    private ProcessCluster cluster;

    @AfterEach
    void stop() {
        if (cluster != null) {
            cluster.takeSelfExits();   // each test has judged them already
            cluster.close();
        }
    }

    @Test
    void aMemberThatRefusesItsDataDirExits3AndFailsTheClusterClose() {
        cluster = ProcessCluster.start(dir, 1);
        cluster.terminate(0, TIMEOUT);   // asked for: not counted
        long asked = cluster.pid(0);
        cluster.startMember(0, "n1=127.0.0.1:" + cluster.peerPort(0), "--cluster-id", "another");
        long refused = cluster.pid(0);
        assertEquals(3, cluster.awaitExit(0, TIMEOUT), "refused its data dir: " + cluster.logTail(0, 5));

        List<ProcessCluster.SelfExit> exits = cluster.selfExits();
        assertEquals(1, exits.size(), "the refusal, not the SIGTERM of pid " + asked + ": " + exits);
        assertEquals(new ProcessCluster.SelfExit("n1", refused, 3, exits.get(0).logTail()), exits.get(0));
        assertTrue(exits.get(0).logTail().contains("refused to run: data dir")
                && !exits.get(0).logTail().contains("(id 1) started"), "only the refused run's lines: " + exits.get(0));

        AssertionError failed = assertThrows(AssertionError.class, cluster::close);
        assertTrue(failed.getMessage().contains("member n1 (pid " + refused + ") exited on its own with status 3:")
                && failed.getMessage().contains("belongs to member 1 of cluster 'rota-"), failed.getMessage());
    }

    @Test
    void aKillBehindTheClustersBackCountsAndKillsThroughItOrDeclaredDoNot() {
        cluster = ProcessCluster.start(dir, 1);
        cluster.kill(0);   // kill -9 through the cluster: not counted
        cluster.startMember(0);
        cluster.awaitHealthy(0);
        long outside = cluster.pid(0);
        ProcessHandle.of(outside).orElseThrow().destroyForcibly();   // by pid, as a crash would: counted
        assertEquals(137, cluster.awaitExit(0, TIMEOUT), "128 + SIGKILL");

        cluster.startMember(0);
        cluster.awaitHealthy(0);
        cluster.expectExit(0);   // declared: not counted
        ProcessHandle.of(cluster.pid(0)).orElseThrow().destroyForcibly();
        cluster.awaitExit(0, TIMEOUT);

        List<ProcessCluster.SelfExit> exits = cluster.takeSelfExits();
        assertEquals(List.of("n1 " + outside + " 137"), exits.stream()
                .map(e -> e.name() + " " + e.pid() + " " + e.status()).toList(), exits.toString());
        assertTrue(!exits.get(0).logTail().isEmpty(), "the killed run's last lines: " + exits.get(0));
        assertEquals(List.of(), cluster.selfExits(), "taken: the caller reports them");
        cluster.close();   // taken ones no longer fail it
    }
}
