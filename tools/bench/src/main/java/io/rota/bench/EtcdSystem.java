package io.rota.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/** etcd: three members started by the peer tools' etcd-cluster.sh (Debian's etcd-server package). */
final class EtcdSystem extends ScriptedPeer {

    static final String ENDPOINTS = "127.0.0.1:21379,127.0.0.1:22379,127.0.0.1:23379";

    /**
     * @param tools     the directory holding etcd-cluster.sh
     * @param dir       the members' data, logs and pid files
     * @param driverJar rota-bench-etcd.jar
     */
    EtcdSystem(Path tools, Path dir, Path driverJar) {
        super(tools.resolve("etcd-cluster.sh"), dir, driverJar, ENDPOINTS);
    }

    @Override
    String displayName() {
        return "etcd";
    }

    @Override
    String driverName() {
        return "etcd";
    }

    @Override
    List<Integer> ports() {
        return List.of(21379, 22379, 23379, 21380, 22380, 23380);
    }

    @Override
    String installNotice() {
        return Shell.onPath("etcd") ? null
                : "etcd is not installed: etcd-cluster.sh will now apt-get install Debian's etcd-server and etcd-client";
    }

    @Override
    long leaderPid(Shell shell) throws IOException {
        // "127.0.0.1:22379, 8e9e05c52164694d, 3.4.23, 20 kB, true, false, 2, 8, 8, " — field 5 is "is leader".
        Shell.Result r = shell.run(Duration.ofSeconds(30), Map.of("ETCDCTL_API", "3"), "etcdctl",
                "--endpoints=" + ENDPOINTS, "endpoint", "status");
        for (String line : r.output().lines().toList()) {
            String[] f = line.split(", *");
            if (f.length >= 5 && f[4].trim().equals("true") && f[0].matches("127\\.0\\.0\\.1:2[1-3]379")) {
                return pidOf(dir, f[0].charAt(11) - '0');   // 127.0.0.1:2N379: member N
            }
        }
        throw new IOException("no etcd leader in etcdctl endpoint status: " + r.output().strip());
    }

    @Override
    String serverVersion(Shell shell) {
        // "etcd Version: 3.4.23"
        return shell.firstLine("etcd (version unknown)", "etcd", "--version").replace(" Version:", "");
    }
}
