package io.rota.server;

import io.rota.testkit.RepositoryRoot;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * scripts/cluster.sh as a user runs it, on a block of free ports and a directory of the test's own. Needs
 * the packaged jar (tests that use it run after {@code package}, under failsafe). {@link #killLeftovers}
 * kills, by their PID files, members a failed test left running.
 */
final class ClusterScript {

    private static final long DEADLINE_S = 90;

    private final Path script = RepositoryRoot.resolve("scripts", "cluster.sh");
    private final Path dir;
    private final int basePort;
    private final int members;
    private final Map<String, String> env = new HashMap<>();

    /** @param extraEnv more environment for every run (ROTA_LAB=1, say) */
    ClusterScript(Path dir, int members, Map<String, String> extraEnv) {
        this.dir = dir;
        this.members = members;
        this.basePort = freeBase(members + 2);   // room for scripts/cluster.sh add n4, n5
        env.put("ROTA_CLUSTER_DIR", dir.toString());
        env.put("ROTA_BASE_PORT", Integer.toString(basePort));
        env.put("ROTA_MEMBERS", Integer.toString(members));
        env.put("ROTA_JAVA_OPTS", "-Xmx256m");
        env.putAll(extraEnv);
    }

    int basePort() {
        return basePort;
    }

    int httpPort(int member) {
        return basePort + 200 + member;
    }

    String endpoints() {
        List<String> out = new ArrayList<>();
        for (int i = 1; i <= members; i++) {
            out.add("127.0.0.1:" + (basePort + i));
        }
        return String.join(",", out);
    }

    /** Runs cluster.sh; fails on a non-zero exit or after the deadline. */
    String run(String... args) throws IOException, InterruptedException {
        Result r = runIn(env, "cluster.sh", args);
        assertEquals(0, r.exitCode(), "cluster.sh " + String.join(" ", args) + ":\n" + r.output());
        return r.output();
    }

    /** What a script printed (stdout and stderr) and returned. */
    record Result(int exitCode, String output) {
    }

    /**
     * Runs {@code script} (cluster.sh or rotactl, in scripts/) as another shell would: with ROTA_CLUSTER_DIR but
     * without the ROTA_BASE_PORT and ROTA_MEMBERS the cluster was started with, plus {@code extraEnv}.
     */
    Result runElsewhere(Map<String, String> extraEnv, String script, String... args)
            throws IOException, InterruptedException {
        Map<String, String> other = new HashMap<>(env);
        other.remove("ROTA_BASE_PORT");
        other.remove("ROTA_MEMBERS");
        other.putAll(extraEnv);
        return runIn(other, script, args);
    }

    private Result runIn(Map<String, String> environment, String name, String... args)
            throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("bash", this.script.resolveSibling(name).toString()));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        pb.environment().remove("ROTA_BASE_PORT");
        pb.environment().remove("ROTA_ENDPOINTS");
        pb.environment().putAll(environment);
        Process p = pb.start();
        if (!p.waitFor(DEADLINE_S, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError(name + " " + String.join(" ", args) + " did not finish in " + DEADLINE_S + " s");
        }
        return new Result(p.exitValue(), new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
    }

    /** The member that {@code cluster.sh status} shows as LEADER, or null. */
    String leader() throws IOException, InterruptedException {
        return run("status").lines().filter(l -> l.matches("\\S+ +\\S+ +\\S+ +LEADER .*"))
                .map(l -> l.substring(0, l.indexOf(' '))).findFirst().orElse(null);
    }

    void killLeftovers() throws IOException {
        for (int i = 1; i <= 9; i++) {   // members added with cluster.sh add too
            Path pidFile = dir.resolve("n" + i + ".pid");
            if (Files.exists(pidFile)) {
                ProcessHandle.of(Long.parseLong(Files.readString(pidFile).trim())).ifPresent(ProcessHandle::destroyForcibly);
            }
        }
    }

    /** A base port whose client, peer, HTTP and etcd ports for {@code members} members are free right now. */
    private static int freeBase(int members) {
        for (int attempt = 0; attempt < 50; attempt++) {
            int base = ThreadLocalRandom.current().nextInt(10_000, 32_000 - 310); // below the ephemeral range (32768+)
            boolean free = true;
            for (int i = 1; i <= members && free; i++) {
                free = free(base + i) && free(base + 100 + i) && free(base + 200 + i) && free(base + 300 + i);
            }
            if (free) {
                return base;
            }
        }
        throw new IllegalStateException("no free block of ports found");
    }

    private static boolean free(int port) {
        try (ServerSocket ignored = new ServerSocket(port)) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
