package io.rota.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/** ZooKeeper: a three-member ensemble started by the peer tools' zk-cluster.sh (Debian's zookeeper package). */
final class ZooKeeperSystem extends ScriptedPeer {

    static final String ENDPOINTS = "127.0.0.1:12181,127.0.0.1:12182,127.0.0.1:12183";

    /**
     * @param tools     the directory holding zk-cluster.sh
     * @param dir       the members' data, logs and pid files
     * @param driverJar rota-bench-zookeeper.jar
     */
    ZooKeeperSystem(Path tools, Path dir, Path driverJar) {
        super(tools.resolve("zk-cluster.sh"), dir, driverJar, ENDPOINTS);
    }

    @Override
    String displayName() {
        return "ZooKeeper";
    }

    @Override
    String driverName() {
        return "zookeeper";
    }

    @Override
    List<Integer> ports() {
        return List.of(12181, 12182, 12183, 12891, 12892, 12893, 13891, 13892, 13893);
    }

    @Override
    String installNotice() {
        return Files.isRegularFile(Path.of("/usr/share/java/zookeeper.jar")) ? null
                : "ZooKeeper is not installed: zk-cluster.sh will now apt-get install Debian's zookeeper package";
    }

    @Override
    long leaderPid(Shell shell) throws IOException {
        // "n2 12345"
        Shell.Result r = shell.run(Duration.ofSeconds(30), Map.of(), "bash", script.toString(), "leader", dir.toString());
        String[] f = r.output().strip().split(" +");
        if (r.ok() && f.length == 2 && f[1].matches("[0-9]+")) {
            return Long.parseLong(f[1]);
        }
        throw new IOException("no ZooKeeper leader from zk-cluster.sh leader: " + r.output().strip());
    }

    @Override
    String serverVersion(Shell shell) {
        // The running server says it: "Zookeeper version: 3.8.0-..., built on ...".
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", 12181), 2_000);
            s.setSoTimeout(2_000);
            OutputStream out = s.getOutputStream();
            out.write("srvr".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = s.getInputStream();
            String reply = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            for (String line : reply.lines().toList()) {
                if (line.startsWith("Zookeeper version: ")) {
                    // Debian's build leaves "-${mvngit.commit.id}" after the version number: drop it.
                    return "ZooKeeper " + line.substring("Zookeeper version: ".length()).split(",")[0]
                            .replaceAll("-\\$\\{[^}]*}", "");
                }
            }
        } catch (IOException e) {
            // Fall back to the package's version below.
        }
        return "ZooKeeper " + shell.firstLine("(version unknown)", "dpkg-query", "-W", "-f=${Version}", "zookeeper");
    }
}
