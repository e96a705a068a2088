package io.rota.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Rota: three kv-server processes started by scripts/cluster.sh (the shaded rota-server.jar via scripts/rota). */
class RotaSystem extends SystemUnderTest {

    private final Path root;
    private final Path dir;
    private final int basePort;
    private final Path driverJar;

    /**
     * @param root      the repository (scripts/, kv-server/target/)
     * @param dir       the members' data, logs and pid files
     * @param basePort  ROTA_BASE_PORT: clients on base+1..3, peers base+101.., HTTP base+201..
     * @param driverJar rota-bench.jar
     */
    RotaSystem(Path root, Path dir, int basePort, Path driverJar) {
        this.root = root;
        this.dir = dir;
        this.basePort = basePort;
        this.driverJar = driverJar;
    }

    @Override
    String displayName() {
        return "Rota";
    }

    @Override
    String driverName() {
        return "rota";
    }

    @Override
    Path driverJar() {
        return driverJar;
    }

    @Override
    List<Integer> ports() {
        List<Integer> ports = new ArrayList<>();
        for (int i = 1; i <= 3; i++) {
            ports.add(basePort + i);
            ports.add(basePort + 100 + i);
            ports.add(basePort + 200 + i);
        }
        return ports;
    }

    @Override
    String missing() {
        if (!Files.isRegularFile(root.resolve("kv-server/target/rota-server.jar"))) {
            return "kv-server/target/rota-server.jar is not built: run scripts/bench.sh compare (it builds it), or "
                    + "./mvnw -q -B -DskipTests package -pl kv-server/server -am";
        }
        if (!Files.isExecutable(script())) {
            return script() + " is missing: pass the repository with --root";
        }
        return null;
    }

    @Override
    String installNotice() {
        return null;
    }

    private Path script() {
        return root.resolve("scripts/cluster.sh");
    }

    private Map<String, String> env() {
        return Map.of("ROTA_BASE_PORT", Integer.toString(basePort), "ROTA_CLUSTER_DIR", dir.toString());
    }

    @Override
    String start(Shell shell) throws IOException {
        Shell.Result r = shell.run(Duration.ofSeconds(120), env(), script().toString(), "start");
        if (!r.ok()) {
            throw new IOException("scripts/cluster.sh start failed (exit " + r.exit() + "): " + r.output().strip());
        }
        return "127.0.0.1:" + (basePort + 1) + ",127.0.0.1:" + (basePort + 2) + ",127.0.0.1:" + (basePort + 3);
    }

    @Override
    List<Long> memberPids() {
        return pidsIn(dir);
    }

    @Override
    long leaderPid(Shell shell) throws IOException {
        Shell.Result r = shell.run(Duration.ofSeconds(30), env(), script().toString(), "status");
        for (String line : r.output().lines().toList()) {
            String[] f = line.trim().split(" +");
            if (f.length >= 4 && f[3].equals("LEADER") && f[1].matches("[0-9]+")) {
                return Long.parseLong(f[1]);
            }
        }
        throw new IOException("no Rota leader in scripts/cluster.sh status: " + r.output().strip());
    }

    @Override
    String serverVersion(Shell shell) {
        return "Rota " + commit(shell, root);
    }

    /** The repository's commit, with "-dirty" when the working tree has changes. */
    static String commit(Shell shell, Path root) {
        String head = shell.firstLine("unknown", "git", "-C", root.toString(), "rev-parse", "--short", "HEAD");
        Shell.Result status = shell.run(Duration.ofSeconds(20), Map.of(), "git", "-C", root.toString(), "status",
                "--porcelain", "--untracked-files=no");
        return head + (status.ok() && !status.output().isBlank() ? "-dirty" : "");
    }

    @Override
    void stop(Shell shell) {
        shell.run(Duration.ofSeconds(60), env(), script().toString(), "stop");
        Compare.deleteTree(dir);
    }
}
