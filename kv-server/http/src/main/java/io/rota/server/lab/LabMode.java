package io.rota.server.lab;

import java.nio.file.Path;

/**
 * LAB MODE, for a local cluster started by {@code ROTA_LAB=1 scripts/cluster.sh start} only: where its
 * script and cluster directory are. Off (null) unless {@code rota server --lab-script} is given.
 *
 * @param script     the cluster's scripts/cluster.sh, which the dashboard's buttons run
 * @param clusterDir the cluster's ROTA_CLUSTER_DIR (PID files and logs)
 */
public record LabMode(Path script, Path clusterDir) {
}
