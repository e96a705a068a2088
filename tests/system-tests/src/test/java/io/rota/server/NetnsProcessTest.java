package io.rota.server;

import io.rota.client.ClusterMember;
import io.rota.client.RotaClient;
import io.rota.testkit.Await;
import io.rota.testkit.RepositoryRoot;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The short form of the three-hosts topology (scripts/netns.sh): three members in three network namespaces,
 * each with its own IP on a bridge, peers dialling each other by name. A write commits across the namespaces,
 * the leader is killed with kill -9, and the next write commits under a new leader, with the first one still
 * there. Needs root and a kernel that allows network namespaces, veth pairs and bridges: where
 * {@code netns.sh check} says no, the test is skipped with its reason (never passed silently).
 */
@Tag("process")
class NetnsProcessTest {

    private static final Path SCRIPT = RepositoryRoot.resolve("scripts", "netns.sh");
    private static final long SCRIPT_DEADLINE_S = 90;

    @TempDir
    Path dir;
    private Map<String, String> env;

    @AfterEach
    void down() throws Exception {
        if (env != null) {
            run("down");   // stops the members by PID, removes the namespaces, the bridge and /etc/netns files
        }
    }

    @Test
    void aWriteCommitsAcrossNamespacesAndSurvivesTheLeadersKill() throws Exception {
        assumeTrue(Files.isRegularFile(Path.of(System.getProperty("rota.jar", "target/rota-server.jar"))),
                "needs the packaged jar: run ./mvnw -B verify");
        // A subnet and a name prefix of this run's own: another run (or a hand-made topology) cannot collide.
        int octet = ThreadLocalRandom.current().nextInt(100, 250);
        Map<String, String> candidate = Map.of("ROTA_NETNS_DIR", dir.toString(), "ROTA_NETNS_SUBNET", "10.77." + octet,
                "ROTA_NETNS_PREFIX", "rt" + octet + Long.toString(ProcessHandle.current().pid() % 10_000),
                "ROTA_JAVA_OPTS", "-Xmx256m");
        env = candidate;
        Result check = run("check");
        if (check.exitCode() == 3) {
            env = null;
            System.err.println("NetnsProcessTest SKIPPED: " + check.output().trim());
        }
        assumeTrue(check.exitCode() != 3, "the namespace topology cannot run here: " + check.output().trim());
        assertEquals(0, check.exitCode(), check.output());

        Result start = run("start");
        assertEquals(0, start.exitCode(), start.output());
        String endpoints = run("endpoints").output().trim();
        assertEquals("10.77." + octet + ".1:7001,10.77." + octet + ".2:7001,10.77." + octet + ".3:7001", endpoints);

        try (RotaClient rota = RotaClient.builder().endpoints(endpoints).callTimeout(Duration.ofSeconds(15)).build()) {
            rota.kv().put("before", "across three namespaces");
            // A member publishes its addresses through Raft after it starts (as etcd's publish): wait for all three.
            Await.until(Duration.ofSeconds(30), () -> rota.cluster().memberList().stream()
                    .allMatch(m -> !m.peerAddress().isEmpty() && !m.clientAddress().isEmpty()), "every member published");
            List<ClusterMember> members = rota.cluster().memberList();
            // Peers know each other by the names they advertise, clients by the members' own IPs.
            for (ClusterMember m : members) {
                assertEquals("n" + m.id() + ".rota.test:7101", m.peerAddress(), m.toString());
                assertEquals("10.77." + octet + "." + m.id() + ":7001", m.clientAddress(), m.toString());
            }
            long leader = members.stream().filter(ClusterMember::leader).mapToLong(ClusterMember::id).findFirst()
                    .orElseThrow(() -> new AssertionError("no leader in " + members));

            Result kill = run("kill", "n" + leader);
            assertEquals(0, kill.exitCode(), kill.output());
            rota.kv().put("after", "a new leader");   // the client retries until a new leader commits it

            List<ClusterMember> after = rota.cluster().memberList();
            long newLeader = after.stream().filter(ClusterMember::leader).mapToLong(ClusterMember::id).findFirst()
                    .orElseThrow(() -> new AssertionError("no leader after the kill: " + after));
            assertNotEquals(leader, newLeader);
            assertEquals("across three namespaces", rota.kv().get("before").first().orElseThrow().valueString());
            assertEquals("a new leader", rota.kv().get("after").first().orElseThrow().valueString());
        }
        Result status = run("status");
        assertTrue(status.output().lines().anyMatch(l -> l.startsWith("n") && l.contains(" DOWN ")), status.output());
    }

    private record Result(int exitCode, String output) {
    }

    private Result run(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("bash", SCRIPT.toString()));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        pb.environment().remove("ROTA_BASE_PORT");
        pb.environment().putAll(env);
        Process p = pb.start();
        if (!p.waitFor(SCRIPT_DEADLINE_S, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("netns.sh " + String.join(" ", args) + " did not finish in " + SCRIPT_DEADLINE_S + " s");
        }
        return new Result(p.exitValue(), new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
    }
}
