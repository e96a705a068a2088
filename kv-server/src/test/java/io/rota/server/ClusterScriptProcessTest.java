package io.rota.server;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * scripts/cluster.sh as a user runs it: start prints the endpoints once a leader exists, status shows one
 * line per member, a killed member shows DOWN, stop ends the rest. Runs after {@code package} (failsafe):
 * the script uses the packaged jar. Members left running by a failure are killed by their PID files.
 */
class ClusterScriptProcessTest {

    @TempDir
    Path dir;
    private ClusterScript cluster;

    @AfterEach
    void killWhatIsLeft() throws IOException {
        if (cluster != null) {
            cluster.killLeftovers();
        }
    }

    @Test
    void startStatusKillStatusStop() throws Exception {
        assumeTrue(Files.isRegularFile(Path.of(System.getProperty("rota.jar", "target/rota-server.jar"))),
                "needs the packaged jar: run ./mvnw -B verify");
        cluster = new ClusterScript(dir, 3, Map.of());
        int basePort = cluster.basePort();
        String start = cluster.run("start");
        assertTrue(start.contains("ROTA_ENDPOINTS=127.0.0.1:" + (basePort + 1) + ",127.0.0.1:" + (basePort + 2)
                + ",127.0.0.1:" + (basePort + 3)), start);

        List<String> status = cluster.run("status").lines().toList();
        assertEquals("NAME  PID      CLIENT_ENDPOINT  ROLE       TERM  COMMIT_INDEX", status.get(0));
        assertEquals(4, status.size(), String.join("\n", status));
        assertTrue(status.stream().anyMatch(l -> l.contains(" LEADER ")), String.join("\n", status));

        cluster.run("kill", "n2");
        String n2 = cluster.run("status").lines().filter(l -> l.startsWith("n2 ")).findFirst().orElseThrow();
        assertTrue(n2.matches("n2 +- +127\\.0\\.0\\.1:" + (basePort + 2) + " +DOWN +- +-"), n2);

        assertTrue(cluster.run("stop").contains("n3 stopped"));
        assertTrue(cluster.run("status").lines().skip(1).allMatch(l -> l.contains(" DOWN ")));
    }
}
