package io.rota.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Rota through its etcd port: the same three members scripts/cluster.sh starts for {@link RotaSystem} (which
 * opens {@code --listen-etcd} at ROTA_BASE_PORT+301..303, the ROTA_ETCD_ENDPOINTS it prints), driven by etcd's
 * driver (jetcd, rota-bench-etcd.jar). Beside the "etcd" row it compares the servers with the client held
 * fixed; beside the "rota" row it shows what the etcd door costs against the native one (design.md Y23).
 */
final class RotaEtcdSystem extends RotaSystem {

    private final int basePort;

    /**
     * @param root      the repository (scripts/, kv-server/target/)
     * @param dir       the members' data, logs and pid files
     * @param basePort  ROTA_BASE_PORT: etcd ports base+301..303
     * @param driverJar rota-bench-etcd.jar (jetcd)
     */
    RotaEtcdSystem(Path root, Path dir, int basePort, Path driverJar) {
        super(root, dir, basePort, driverJar);
        this.basePort = basePort;
    }

    @Override
    String displayName() {
        return "Rota (etcd API)";
    }

    @Override
    String driverName() {
        return "rota-etcd";
    }

    @Override
    List<Integer> ports() {
        List<Integer> ports = new ArrayList<>(super.ports());
        for (int i = 1; i <= 3; i++) {
            ports.add(basePort + 300 + i);
        }
        return ports;
    }

    /** Starts the members as for the native row; the driver gets their etcd endpoints. */
    @Override
    String start(Shell shell) throws IOException {
        super.start(shell);
        return etcdEndpoints(basePort);
    }

    /** ROTA_ETCD_ENDPOINTS of a cluster.sh cluster at {@code basePort}. */
    static String etcdEndpoints(int basePort) {
        return "127.0.0.1:" + (basePort + 301) + ",127.0.0.1:" + (basePort + 302) + ",127.0.0.1:" + (basePort + 303);
    }
}
