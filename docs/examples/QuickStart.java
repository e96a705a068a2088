import io.rota.client.CompareOp;
import io.rota.client.GetResult;
import io.rota.client.KeepAlive;
import io.rota.client.KeyValue;
import io.rota.client.Lease;
import io.rota.client.Op;
import io.rota.client.PutResult;
import io.rota.client.RotaClient;
import io.rota.client.RotaException;
import io.rota.client.TxnResult;
import io.rota.client.Watch;
import io.rota.client.WatchEvent;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The tour of docs/java.md as one program. Run it against a running cluster (scripts/cluster.sh start):
 *
 *   java -cp tools/rotactl/target/rotactl.jar docs/examples/QuickStart.java
 *
 * It uses ROTA_ENDPOINTS when set, else the ports scripts/cluster.sh recorded in data/cluster.env (a cluster
 * moved with ROTA_BASE_PORT), else 127.0.0.1:7001,7002,7003. If no member answers it says so in one line.
 */
public class QuickStart {

    public static void main(String[] args) throws Exception {
        String[] endpoints = endpoints();
        try {
            tour(endpoints[0]);
        } catch (RotaException e) {
            System.err.println("QuickStart: " + e.getMessage() + " [endpoints " + endpoints[0] + " from " + endpoints[1]
                    + "; start the cluster with scripts/cluster.sh start, or set ROTA_ENDPOINTS]");
            System.exit(1);
        }
    }

    /** The endpoints and where they came from: ROTA_ENDPOINTS, scripts/cluster.sh's state file, or the default. */
    static String[] endpoints() throws IOException {
        String fromEnv = System.getenv("ROTA_ENDPOINTS");
        if (fromEnv != null && !fromEnv.isBlank()) {
            return new String[] {fromEnv, "ROTA_ENDPOINTS"};
        }
        Path state = Path.of(System.getenv().getOrDefault("ROTA_CLUSTER_DIR", "data"), "cluster.env");
        if (Files.isRegularFile(state)) {
            for (String line : Files.readAllLines(state)) {
                if (line.startsWith("ROTA_ENDPOINTS=")) {
                    return new String[] {line.substring("ROTA_ENDPOINTS=".length()), state.toString()};
                }
            }
        }
        return new String[] {"127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003", "the default"};
    }

    static void tour(String endpoints) throws InterruptedException {
        try (RotaClient rota = RotaClient.builder()
                .endpoints(endpoints)
                .callTimeout(Duration.ofSeconds(10))   // a call's whole budget, retries included
                .attemptTimeout(Duration.ofSeconds(3)) // one try on one member
                .build()) {

            // 1. Keys and revisions.
            PutResult put = rota.kv().put("quickstart/config/mode", "fast");
            GetResult got = rota.kv().get("quickstart/config/mode");
            KeyValue kv = got.first().orElseThrow();
            System.out.println("1. put at revision " + put.revision() + "; read " + kv.valueString()
                    + " (version " + kv.version() + ", created at " + kv.createRevision() + ")");

            // 2. A watch from the next revision: every change under the prefix, in order, once.
            BlockingQueue<WatchEvent> events = new ArrayBlockingQueue<>(100);
            try (Watch watch = rota.watches().watchPrefix("quickstart/", put.revision() + 1, events::add)) {

                // 3. A transaction: create "job/owner" only if nobody has (version 0 = absent).
                TxnResult claim = rota.kv().txn()
                        .ifVersion("quickstart/job/owner", CompareOp.EQUAL, 0)
                        .then(Op.put("quickstart/job/owner", "app-1"))
                        .orElse(Op.get("quickstart/job/owner"))
                        .commit();
                System.out.println("3. claimed job/owner: " + claim.succeeded());

                // 4. A key that lives only while this process keeps its lease alive.
                Lease lease = rota.leases().grant(Duration.ofSeconds(5));
                try (KeepAlive keepAlive = rota.leases().keepAlive(lease.id(),
                        (id, why) -> System.err.println("lease " + Long.toHexString(id) + " lost: " + why.getMessage()))) {
                    rota.kv().put("quickstart/workers/app-1", "alive", lease.id());
                    System.out.println("4. lease " + Long.toHexString(lease.id()) + " granted; keys under it: "
                            + rota.leases().timeToLive(lease.id(), true).keys().size());
                }
                rota.leases().revoke(lease.id());   // deletes its keys in one revision

                // 2 (continued): the watch saw the txn's put, the lease key's put and its delete.
                for (int i = 0; i < 3; i++) {
                    WatchEvent e = events.poll(10, TimeUnit.SECONDS);
                    if (e == null) {
                        throw new IllegalStateException("expected 3 watch events, got " + i);
                    }
                    System.out.println("2. watch: " + e.type() + " " + e.kv().keyString() + " at revision " + e.revision());
                }
            }

            // 5. Typed errors: an unknown lease.
            try {
                rota.leases().revoke(0x1234L);
            } catch (RotaException e) {
                System.out.println("5. " + e.getMessage());   // "LEASE_NOT_FOUND: ..."; e.code() for code
            }

            rota.kv().deletePrefix("quickstart/");
            System.out.println("done");
        }
    }
}
