package io.rota.bench.driver;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The driver process: connects one system's client library to its cluster and runs the workloads in order,
 * printing {@link Markers} lines. Started by {@code rota-bench compare} in a fresh JVM per system, with that
 * system's jar as its class path, so each client library brings its own Netty (design.md B1).
 *
 * <pre>
 * java -cp rota-bench-etcd.jar io.rota.bench.driver.DriverMain etcd 127.0.0.1:21379,... 3000 5000 \
 *     write-1,write-64,write-256,read-lin-64,read-ser-64,lock-1x1,lock-8x1,lock-64x64,failover
 * </pre>
 *
 * <p>Options before the arguments, Rota only: {@code --cacert FILE [--cert FILE --key FILE]} speak TLS to a
 * cluster started with {@code scripts/cluster.sh start --tls} (what scripts/bench.sh tls does).
 */
public final class DriverMain {

    /** The systems' drivers, by the name the orchestrator uses. Loaded by name: each jar holds only its own. */
    static final Map<String, String> TARGETS = Map.of(
            "rota", "io.rota.bench.rota.RotaTarget",
            "etcd", "io.rota.bench.etcd.EtcdTarget",
            // Rota's etcd port through the same jetcd driver (rota-bench-etcd.jar): one client, two servers.
            "rota-etcd", "io.rota.bench.etcd.EtcdTarget",
            "zookeeper", "io.rota.bench.zookeeper.ZooKeeperTarget");

    /** Every workload, in the order a full pass runs them; failover last, as it leaves a member dead. */
    public static final List<String> WORKLOADS = List.of("write-1", "write-64", "write-256", "read-lin-64",
            "read-ser-64", "lock-1x1", "lock-8x1", "lock-64x64", "failover");

    private DriverMain() {
    }

    /**
     * Runs the driver.
     *
     * @param args system, endpoints, warm-up ms, measure ms, comma-separated workloads, and optionally the
     *             failover's steady-writing time before and after the kill in ms
     * @throws Exception on any failure (the orchestrator reports the exit status and the log)
     */
    public static void main(String[] args) throws Exception {
        Map<String, Path> tls = new LinkedHashMap<>();
        while (args.length >= 2 && List.of("--cacert", "--cert", "--key").contains(args[0])) {
            tls.put(args[0], Path.of(args[1]));
            args = Arrays.copyOfRange(args, 2, args.length);
        }
        if (args.length != 5 && args.length != 7) {
            System.err.println("usage: DriverMain [--cacert FILE [--cert FILE --key FILE]] SYSTEM ENDPOINTS WARMUP_MS"
                    + " MEASURE_MS WORKLOADS [FAILOVER_BEFORE_MS FAILOVER_AFTER_MS]  (SYSTEM: " + TARGETS.keySet() + ")");
            System.exit(2);
        }
        if (!tls.isEmpty() && (!tls.containsKey("--cacert") || tls.containsKey("--cert") != tls.containsKey("--key"))) {
            System.err.println("--cacert is needed for TLS, and --cert and --key go together");
            System.exit(2);
        }
        String className = TARGETS.get(args[0]);
        if (className == null) {
            System.err.println("unknown system '" + args[0] + "': one of " + TARGETS.keySet());
            System.exit(2);
        }
        long warmupMs = Long.parseLong(args[2]);
        long measureMs = Long.parseLong(args[3]);
        long beforeMs = args.length == 7 ? Long.parseLong(args[5]) : 2_000;
        long afterMs = args.length == 7 ? Long.parseLong(args[6]) : 5_000;
        PrintStream out = System.out;
        try (Target target = (Target) Class.forName(className).getDeclaredConstructor().newInstance()) {
            if (!tls.isEmpty()) {
                target.tls(tls.get("--cacert"), tls.get("--cert"), tls.get("--key"));
            }
            target.open(args[1]);
            Map<String, Object> client = new LinkedHashMap<>();
            client.put("library", target.clientLibrary());
            client.put("jdk", System.getProperty("java.version"));
            out.println(Markers.format(Markers.CLIENT, client));
            out.flush();
            Workloads w = new Workloads(target, out, warmupMs, measureMs);
            w.prepare();
            for (String workload : args[4].split(",")) {
                run(w, workload, beforeMs, afterMs);
            }
        }
        // Client libraries leave non-daemon threads behind (gRPC, ZooKeeper's event thread): end here.
        System.exit(0);
    }

    private static void run(Workloads w, String workload, long beforeMs, long afterMs) throws Exception {
        switch (workload) {
            case "write-1" -> w.writes(1);
            case "write-64" -> w.writes(64);
            case "write-256" -> w.writes(256);
            case "read-lin-64" -> w.reads(64, true);
            case "read-ser-64" -> w.reads(64, false);
            case "lock-1x1" -> w.locks(1, 1);
            case "lock-8x1" -> w.locks(8, 1);
            case "lock-64x64" -> w.locks(64, 64);
            case "failover" -> w.failover(beforeMs, afterMs);
            case "write-1-watched" -> w.watchedWrites(1);
            case "write-64-watched" -> w.watchedWrites(64);
            default -> throw new IllegalArgumentException("unknown workload '" + workload + "': one of " + WORKLOADS
                    + ", or (Rota only) write-1-watched, write-64-watched");
        }
    }
}
