package io.rota.server;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Everything one {@code rota server} process needs, validated. Member ids come from the position in
 * {@code --initial-cluster}: the first member is 1, the second 2, and so on — so every member must be
 * given the same list in the same order (as etcd requires the same {@code --initial-cluster}).
 *
 * @param name                  this member's name; must appear in {@code initialCluster}
 * @param dataDir               RocksDB log, hard state and snapshots
 * @param listenClient          client protocol address (port 0: any free port)
 * @param listenPeer            Raft peer address; must equal this member's entry in {@code initialCluster}
 * @param initialCluster        member name → peer address, in id order
 * @param clusterId             peers of another cluster are refused at the handshake
 * @param heartbeatMs           leader heartbeat interval; also the length of one Raft tick
 * @param electionMs            base election timeout (randomised to 1–2×); a multiple of the heartbeat
 * @param snapshotCount         applied entries between snapshots (§7)
 * @param maxRequestBytes       largest client request; a larger frame gets REQUEST_TOO_LARGE
 * @param http                  /health, /status, /metrics address, or {@code null} for none
 * @param requestTimeout        how long a write or linearizable read may wait for Raft
 * @param watchProgressInterval how often watchers that asked for progress notifications get one
 * @param faultInjection        UNSAFE, for chaos tests only: lets /fault/clock skew this member's clocks
 */
public record ServerConfig(String name, Path dataDir, InetSocketAddress listenClient, InetSocketAddress listenPeer,
                           Map<String, InetSocketAddress> initialCluster, String clusterId, int heartbeatMs,
                           int electionMs, long snapshotCount, int maxRequestBytes, InetSocketAddress http,
                           Duration requestTimeout, Duration watchProgressInterval, boolean faultInjection) {

    public static final int DEFAULT_HEARTBEAT_MS = 100;
    public static final int DEFAULT_ELECTION_MS = 1000;
    public static final long DEFAULT_SNAPSHOT_COUNT = 10_000;
    public static final int DEFAULT_MAX_REQUEST_BYTES = 1_572_864;
    public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(5);
    public static final Duration DEFAULT_WATCH_PROGRESS_INTERVAL = Duration.ofSeconds(10);

    public ServerConfig {
        Objects.requireNonNull(dataDir, "dataDir");
        Objects.requireNonNull(listenClient, "listenClient");
        Objects.requireNonNull(listenPeer, "listenPeer");
        Objects.requireNonNull(requestTimeout, "requestTimeout");
        Objects.requireNonNull(watchProgressInterval, "watchProgressInterval");
        require(name != null && name.matches("[A-Za-z0-9_.-]+"),
                "--name must be letters, digits, '_', '.' or '-', got '" + name + "'");
        require(initialCluster != null && !initialCluster.isEmpty(),
                "--initial-cluster is empty: give every member as name=host:port, e.g. n1=127.0.0.1:7101,...");
        initialCluster = Collections.unmodifiableMap(new LinkedHashMap<>(initialCluster));
        require(initialCluster.containsKey(name), "--name " + name + " is not in --initial-cluster "
                + initialCluster.keySet() + ": add " + name + "=<peer address> or fix the name");
        require(sameAddress(initialCluster.get(name), listenPeer), "--listen-peer " + format(listenPeer)
                + " differs from " + name + "'s entry " + format(initialCluster.get(name))
                + " in --initial-cluster: the other members dial that address");
        require(listenClient.getPort() == 0 || !sameAddress(listenClient, listenPeer),
                "--listen-client and --listen-peer must differ, both are " + format(listenPeer));
        if (http != null && http.getPort() != 0) {
            require(!sameAddress(http, listenPeer) && !sameAddress(http, listenClient),
                    "--http must differ from --listen-client and --listen-peer, got " + format(http));
        }
        require(clusterId != null && !clusterId.isBlank(), "--cluster-id must not be blank");
        require(heartbeatMs >= 10, "--heartbeat-ms must be at least 10, got " + heartbeatMs);
        require(electionMs >= 5 * heartbeatMs && electionMs % heartbeatMs == 0, "--election-ms must be a multiple of"
                + " --heartbeat-ms and at least 5 times it (as etcd requires), got election " + electionMs
                + " and heartbeat " + heartbeatMs);
        require(snapshotCount >= 1, "--snapshot-count must be at least 1, got " + snapshotCount);
        require(maxRequestBytes >= 1024 && maxRequestBytes <= 64 << 20,
                "--max-request-bytes must be between 1024 and 67108864, got " + maxRequestBytes);
        require(!requestTimeout.isNegative() && !requestTimeout.isZero(), "request timeout must be positive");
        require(!watchProgressInterval.isNegative() && !watchProgressInterval.isZero(),
                "watch progress interval must be positive");
    }

    /** This member's id: its 1-based position in {@code initialCluster}. */
    public long memberId() {
        return idOf(name);
    }

    /** The id of member {@code memberName}: its 1-based position in {@code initialCluster}. */
    public long idOf(String memberName) {
        long id = 1;
        for (String n : initialCluster.keySet()) {
            if (n.equals(memberName)) {
                return id;
            }
            id++;
        }
        throw new IllegalArgumentException("no member " + memberName);
    }

    /** Peer address by member id, every member included. */
    public Map<Long, InetSocketAddress> peersById() {
        Map<Long, InetSocketAddress> out = new LinkedHashMap<>();
        initialCluster.forEach((n, address) -> out.put(idOf(n), address));
        return out;
    }

    public Duration electionTimeout() {
        return Duration.ofMillis(electionMs);
    }

    /** etcd clamps short TTLs up to 1.5 × election timeout: a lease must outlive one leader change. */
    public long minLeaseTtlMs() {
        return electionMs * 3L / 2;
    }

    /** A frame may be this much larger than the request it carries (envelope, call id, session). */
    public int maxFrameBytes() {
        return maxRequestBytes + 4096;
    }

    /** {@code host:port} of an address as given (not resolved). */
    public static String format(InetSocketAddress address) {
        return address.getHostString() + ":" + address.getPort();
    }

    private static boolean sameAddress(InetSocketAddress a, InetSocketAddress b) {
        return a.getPort() == b.getPort() && a.getHostString().equals(b.getHostString());
    }

    private static void require(boolean condition, String message) {
        if (!condition) {
            throw new IllegalArgumentException(message);
        }
    }
}
