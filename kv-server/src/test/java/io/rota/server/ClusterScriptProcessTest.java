package io.rota.server;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * scripts/cluster.sh as a user runs it: start prints the endpoints once a leader exists, status shows one
 * line per member, a killed member shows DOWN, stop ends the rest. Runs after {@code package} (failsafe):
 * the script uses the packaged jar. Members left running by a failure are killed by their PID files.
 */
class ClusterScriptProcessTest {

    private static final long DEADLINE_S = 90;

    @TempDir
    Path dir;
    private final Path script = Path.of("..", "scripts", "cluster.sh").toAbsolutePath().normalize();
    private final int basePort = freeBase();

    @AfterEach
    void killWhatIsLeft() throws IOException {
        for (int i = 1; i <= 3; i++) {
            Path pidFile = dir.resolve("n" + i + ".pid");
            if (Files.exists(pidFile)) {
                ProcessHandle.of(Long.parseLong(Files.readString(pidFile).trim())).ifPresent(ProcessHandle::destroyForcibly);
            }
        }
    }

    @Test
    void startStatusKillStatusStop() throws Exception {
        assumeTrue(Files.isRegularFile(Path.of(System.getProperty("rota.jar", "target/rota-server.jar"))),
                "needs the packaged jar: run ./mvnw -B verify");
        String start = run("start");
        assertTrue(start.contains("ROTA_ENDPOINTS=127.0.0.1:" + (basePort + 1) + ",127.0.0.1:" + (basePort + 2)
                + ",127.0.0.1:" + (basePort + 3)), start);

        List<String> status = run("status").lines().toList();
        assertEquals("NAME  PID      CLIENT_ENDPOINT  ROLE       TERM  COMMIT_INDEX", status.get(0));
        assertEquals(4, status.size(), String.join("\n", status));
        assertTrue(status.stream().anyMatch(l -> l.contains(" LEADER ")), String.join("\n", status));

        run("kill", "n2");
        String n2 = run("status").lines().filter(l -> l.startsWith("n2 ")).findFirst().orElseThrow();
        assertTrue(n2.matches("n2 +- +127\\.0\\.0\\.1:" + (basePort + 2) + " +DOWN +- +-"), n2);

        assertTrue(run("stop").contains("n3 stopped"));
        assertTrue(run("status").lines().skip(1).allMatch(l -> l.contains(" DOWN ")));
    }

    /** Runs cluster.sh; fails on a non-zero exit or after the deadline. */
    private String run(String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("bash", script.toString()));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        pb.environment().put("ROTA_CLUSTER_DIR", dir.toString());
        pb.environment().put("ROTA_BASE_PORT", Integer.toString(basePort));
        pb.environment().put("ROTA_JAVA_OPTS", "-Xmx256m");
        Process p = pb.start();
        if (!p.waitFor(DEADLINE_S, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("cluster.sh " + String.join(" ", args) + " did not finish in " + DEADLINE_S + " s");
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), "cluster.sh " + String.join(" ", args) + ":\n" + out);
        return out;
    }

    /** A base port whose nine ports (client, peer, HTTP × 3) are free right now. */
    private static int freeBase() {
        for (int attempt = 0; attempt < 50; attempt++) {
            int base = ThreadLocalRandom.current().nextInt(10_000, 32_000 - 204); // below the ephemeral range (32768+)
            if (free(base + 1, base + 2, base + 3, base + 101, base + 102, base + 103, base + 201, base + 202, base + 203)) {
                return base;
            }
        }
        throw new IllegalStateException("no free block of ports found");
    }

    private static boolean free(int... ports) {
        for (int port : ports) {
            try (ServerSocket ignored = new ServerSocket(port)) {
                // bound and released: free
            } catch (IOException e) {
                return false;
            }
        }
        return true;
    }
}
