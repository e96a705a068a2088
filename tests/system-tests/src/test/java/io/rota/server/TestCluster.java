package io.rota.server;

import io.rota.client.Op;
import io.rota.client.RotaClient;
import io.rota.client.Txn;
import io.rota.client.TxnResult;
import io.rota.server.lab.LabMode;
import io.rota.testkit.Await;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static io.rota.testkit.Ports.freePort;

/**
 * Three real {@link RotaServer}s in one JVM on 127.0.0.1 (free ports picked right before starting), each
 * with its own data directory. Heartbeat 50 ms, election 500 ms: so leases are at least 1 s.
 */
final class TestCluster implements AutoCloseable {

    static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private final List<ServerConfig> configs = new ArrayList<>();
    private final RotaServer[] servers;
    /** Lab mode (null: off), only for its peer-traffic switch: no test here runs its script. */
    private final LabMode lab;

    TestCluster(Path root, int size, Duration watchProgressInterval) {
        this(root, size, watchProgressInterval, false);
    }

    /**
     * @param lab also give every member an etcd port and start it in lab mode, so a test can cut it off from
     *            its peers ({@link #partition}) and reach it by etcd's API ({@link #etcd})
     */
    TestCluster(Path root, int size, Duration watchProgressInterval, boolean lab) {
        this.lab = lab ? new LabMode(root.resolve("no-lab-script"), root) : null;
        Map<String, InetSocketAddress> cluster = new LinkedHashMap<>();
        for (int i = 1; i <= size; i++) {
            cluster.put("n" + i, new InetSocketAddress("127.0.0.1", freePort()));
        }
        for (int i = 1; i <= size; i++) {
            configs.add(ServerConfig.builder("n" + i).dataDir(root.resolve("n" + i))
                    .listenClient(new InetSocketAddress("127.0.0.1", freePort())).listenPeer(cluster.get("n" + i))
                    .initialCluster(cluster).clusterId("test-" + root.getFileName())
                    .heartbeatMs(50).electionMs(500).snapshotCount(10_000).maxRequestBytes(64 * 1024)
                    .http(new InetSocketAddress("127.0.0.1", freePort()))
                    .requestTimeout(Duration.ofSeconds(5)).watchProgressInterval(watchProgressInterval)
                    .listenEtcd(lab ? new InetSocketAddress("127.0.0.1", freePort()) : null).build());
        }
        servers = new RotaServer[size];
        for (int i = 0; i < size; i++) {
            start(i);
        }
    }

    void start(int index) {
        servers[index] = RotaServer.start(configs.get(index), lab);
    }

    /** HTTP Basic credentials of a root user, once auth is on: lab endpoints then answer root only (issue 33). */
    private volatile String httpAuthorization;

    /** Use {@code user}'s password on the lab endpoints (a cluster whose tests enabled auth). */
    TestCluster httpCredentials(String user, String password) {
        httpAuthorization = io.rota.testkit.ProcessCluster.basicAuthorization(user, password);
        return this;
    }

    /** Cut member {@code index}'s Raft peer traffic (or restore it), by its lab endpoint. */
    void partition(int index, boolean on) {
        try {
            HttpRequest.Builder request = HttpRequest.newBuilder(httpUri(index, "/lab/partition?on=" + on))
                    .header("X-Rota-Lab", "test").POST(HttpRequest.BodyPublishers.noBody());
            if (httpAuthorization != null) {
                request.header("Authorization", httpAuthorization);
            }
            HttpResponse<String> r = HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                throw new AssertionError("lab partition on member " + index + ": " + r.statusCode() + " " + r.body());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** Member {@code index}'s etcd API address (a cluster built with lab on). */
    InetSocketAddress etcd(int index) {
        return servers[index].etcdAddress();
    }

    /** The configuration member {@code index} starts with. */
    ServerConfig config(int index) {
        return configs.get(index);
    }

    void stop(int index) {
        servers[index].close();
        servers[index] = null;
    }

    /** {@code path} on member {@code index}'s HTTP port. */
    URI httpUri(int index, String path) {
        return URI.create("http://127.0.0.1:" + http(index).getPort() + path);
    }

    /** Start every member a test stopped (tests sharing a cluster leave it whole). */
    void startStopped() {
        for (int i = 0; i < servers.length; i++) {
            if (servers[i] == null) {
                start(i);
            }
        }
    }

    RotaServer server(int index) {
        return servers[index];
    }

    InetSocketAddress http(int index) {
        return servers[index].httpAddress();
    }

    InetSocketAddress client(int index) {
        return servers[index].clientAddress();
    }

    /** Member {@code index}'s client address as {@code host:port}, the form the SDK takes. */
    String endpoint(int index) {
        InetSocketAddress a = client(index);
        return a.getHostString() + ":" + a.getPort();
    }

    /** Every member's client address, {@code host:port,host:port,...} in member order. */
    String endpoints() {
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < configs.size(); i++) {
            s.append(i == 0 ? "" : ",").append(endpoint(i));
        }
        return s.toString();
    }

    /** Wait until the live servers agree on a leader that every live member has published; its index. */
    int awaitLeader() {
        int[] leader = {-1};
        Await.until(TIMEOUT, () -> {
            long id = 0;
            for (RotaServer s : servers) {
                if (s != null && s.view().isLeader()) {
                    id = s.view().memberId();
                }
            }
            for (RotaServer s : servers) {
                if (s != null && (s.view().leaderId() != id || id == 0
                        || s.view().members().size() < live())) {
                    return false;
                }
            }
            leader[0] = (int) id - 1;
            return true;
        }, "a leader that every live member follows, with every member published");
        return leader[0];
    }

    /** Member {@code index}'s live watch count, from /metrics ({@code rota_watches}). */
    long liveWatches(int index) {
        try {
            String body = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + http(index).getPort()
                    + "/metrics")).build(), HttpResponse.BodyHandlers.ofString()).body();
            return body.lines().filter(l -> l.startsWith("rota_watches ")).mapToLong(l -> Long.parseLong(l.substring(13).strip()))
                    .findFirst().orElseThrow(() -> new AssertionError("no rota_watches in /metrics"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /**
     * Writes more events under {@code prefix} than the server's watch history keeps (Limits.maxHistoryEvents,
     * 10,000): 80 pipelined transactions of 128 puts. A watch that resumes from a revision before them is
     * COMPACTED.
     */
    static void outgrowTheHistory(RotaClient rota, String prefix)
            throws InterruptedException, ExecutionException, TimeoutException {
        // Two waves of 40 txns: more writes in flight than the session's remembered window (64) could see
        // a retried one refused as "outcome unknown".
        for (int wave = 0; wave < 2; wave++) {
            List<CompletableFuture<TxnResult>> txns = new ArrayList<>();
            for (int t = wave * 40; t < (wave + 1) * 40; t++) {
                Txn txn = rota.kv().txn();
                for (int k = 0; k < 128; k++) {
                    txn.then(Op.put(prefix + t + "/" + k, ""));
                }
                txns.add(txn.commitAsync());
            }
            for (CompletableFuture<TxnResult> f : txns) {
                f.get(30, TimeUnit.SECONDS);
            }
        }
    }

    /** Index of some live member that is not the leader. */
    int follower() {
        int leader = awaitLeader();
        for (int i = 0; i < servers.length; i++) {
            if (i != leader && servers[i] != null) {
                return i;
            }
        }
        throw new AssertionError("no live follower");
    }

    private int live() {
        int n = 0;
        for (RotaServer s : servers) {
            n += s == null ? 0 : 1;
        }
        return n;
    }

    @Override
    public void close() {
        for (int i = 0; i < servers.length; i++) {
            if (servers[i] != null) {
                stop(i);
            }
        }
    }
}
