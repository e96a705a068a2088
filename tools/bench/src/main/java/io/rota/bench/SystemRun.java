package io.rota.bench;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What one system's turn produced: its versions and measurements, or why it was skipped.
 *
 * @param system        display name (Rota, etcd, ZooKeeper)
 * @param skipped       null if it ran; otherwise the reason it did not (printed loudly, and "skipped" in the table)
 * @param serverVersion the server's version as its binary or the running server reports it
 * @param clientLibrary the client library and version the driver used
 * @param clientJdk     the driver JVM's Java version
 * @param results       measurements by workload name, in the order they ran
 */
record SystemRun(String system, String skipped, String serverVersion, String clientLibrary, String clientJdk,
                 Map<String, Measurement> results) {

    SystemRun {
        results = new LinkedHashMap<>(results);
    }

    /** A system that did not run. */
    static SystemRun skipped(String system, String reason) {
        return new SystemRun(system, reason, null, null, null, Map.of());
    }
}
