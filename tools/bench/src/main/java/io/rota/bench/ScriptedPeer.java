package io.rota.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * A peer started by one of the peer tools' scripts ({@code etcd-cluster.sh}, {@code zk-cluster.sh}), which
 * share one interface: {@code start DIR} (installing the Debian package if missing, printing the endpoints),
 * {@code stop DIR}, and the members' pids in {@code DIR/n1.pid .. n3.pid}.
 */
abstract class ScriptedPeer extends SystemUnderTest {

    /** The script, e.g. tools/etcd-cluster.sh. */
    final Path script;
    /** The members' data, logs and pid files. */
    final Path dir;
    private final Path driverJar;
    private final String endpoints;

    /**
     * @param script    the peer tool's script
     * @param dir       the members' directory
     * @param driverJar the peer's driver jar
     * @param endpoints the client endpoints the script's members listen on
     */
    ScriptedPeer(Path script, Path dir, Path driverJar, String endpoints) {
        this.script = script;
        this.dir = dir;
        this.driverJar = driverJar;
        this.endpoints = endpoints;
    }

    @Override
    final Path driverJar() {
        return driverJar;
    }

    @Override
    final String missing() {
        if (!Files.isRegularFile(script)) {
            return script + " not found: pass the directory of " + script.getFileName() + " with --peer-tools";
        }
        if (!Files.isRegularFile(driverJar)) {
            return driverJar + " is not built: run scripts/bench.sh compare (it builds it)";
        }
        return null;
    }

    @Override
    final String start(Shell shell) throws IOException {
        // Up to 5 minutes: the first start may apt-get install the package.
        Shell.Result r = shell.run(Duration.ofSeconds(300), Map.of(), "bash", script.toString(), "start",
                dir.toString());
        if (!r.ok()) {
            throw new IOException(script.getFileName() + " start failed (exit " + r.exit() + "): "
                    + r.output().strip());
        }
        return endpoints;
    }

    @Override
    final List<Long> memberPids() {
        return pidsIn(dir);
    }

    @Override
    final void stop(Shell shell) {
        shell.run(Duration.ofSeconds(60), Map.of(), "bash", script.toString(), "stop", dir.toString());
        Compare.deleteTree(dir);
    }
}
