package io.rota.server;

import io.rota.proto.facts.BadValueException;
import io.rota.proto.facts.MemberName;
import io.rota.raft.core.Configuration;
import io.rota.raft.core.RaftOptions;
import io.rota.raft.node.NodeConfig;
import io.rota.raft.storage.StorageConfig;
import io.rota.raft.transport.TransportConfig;
import io.rota.server.api.ClientServer;
import io.rota.server.http.HttpPolicy;
import io.rota.server.kv.UserQuotas;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Everything one {@code rota server} process needs, validated in the operator's terms: every field is a
 * flag of {@link ServerCommand}, and a refusal is a {@link FlagException} naming it. Build one with
 * {@link #builder}, which starts from the {@code DEFAULT_} constants (the flags' defaults), or derive one with
 * {@link #toBuilder}. The configurations of the layers below (node, transport, client port) are derived from
 * it here, in one place, after the flags were checked.
 *
 * <p>Member ids come from the position in {@code --initial-cluster}: the first member is 1, the second 2,
 * and so on — so every member must be given the same list in the same order (as etcd requires the same
 * {@code --initial-cluster}).
 *
 * @param name                  this member's name; must appear in {@code initialCluster}
 * @param dataDir               RocksDB log, hard state and snapshots
 * @param listenClient          client protocol address (port 0: any free port)
 * @param listenPeer            where the Raft peer port binds; must equal this member's entry in
 *                              {@code initialCluster} unless {@code advertisePeer} is given
 * @param initialCluster        member name → peer address, in id order
 * @param clusterId             peers of another cluster are refused at the handshake; {@code null}: not given,
 *                              so the data dir's recorded id, or one derived from {@code --initial-cluster}
 *                              and {@code initialClusterToken} ({@link #withEffectiveClusterId})
 * @param heartbeatMs           leader heartbeat interval; also the length of one Raft tick
 * @param electionMs            base election timeout (randomised to 1–2×); a multiple of the heartbeat
 * @param snapshotCount         applied entries between snapshots (§7)
 * @param maxRequestBytes       largest client request; a larger frame gets REQUEST_TOO_LARGE
 * @param http                  /health, /status, /metrics address, or {@code null} for none
 * @param requestTimeout        how long a write or linearizable read may wait for Raft
 * @param watchProgressInterval how often watchers that asked for progress notifications get one
 * @param faultInjection        UNSAFE, for chaos tests only: lets /fault/clock skew this member's clocks
 * @param memberIds             explicit member ids by name ({@code --initial-cluster NAME=ID@HOST:PORT}), or
 *                              empty: ids are positions. Every member added at runtime has a cluster-assigned
 *                              id (`rotactl member add` prints it), so a joining member names them all.
 * @param initialClusterState   {@code NEW}: the members of {@code --initial-cluster} are the first voters;
 *                              {@code EXISTING}: this member joins a running cluster (it was added with
 *                              `rotactl member add`) and bootstraps no configuration of its own
 * @param advertisePeer         the peer address the other members dial ({@code --advertise-peer}), when it
 *                              is not the bind address: a member in a pod or behind NAT binds {@code 0.0.0.0}
 *                              and advertises a name; {@code null}: {@code listenPeer}
 * @param advertiseClient       the client address this member publishes for clients and leader hints
 *                              ({@code --advertise-client}); {@code null}: {@code listenClient}'s host and
 *                              bound port
 * @param maintenance           space quota and auto-compaction (issue 18); {@code null} means the defaults
 * @param tls                   TLS on the client and peer ports ({@link ServerTls#NONE}: plaintext, the default)

 * @param listenEtcd            etcd v3 gRPC API address ({@code --listen-etcd}), or {@code null} for none
 * @param forceNewCluster       disaster recovery ({@code --force-new-cluster}, docs/design.md MF10): this
 *                              member's data becomes a cluster of one, itself the sole voter
 * @param initialClusterToken   mixed into the derived cluster id ({@code --initial-cluster-token}, etcd's
 *                              flag): two clusters bootstrapped with the same {@code --initial-cluster} get
 *                              different ids if their tokens differ
 * @param authTokenTtl          how long an auth token is valid ({@code --auth-token-ttl}, issue 33)
 * @param bcryptCost            bcrypt's cost for new password hashes ({@code --bcrypt-cost})
 * @param limits                what one client or stranger may cost the client, etcd and peer ports (issue 33:
 *                              connection caps, idle timeout, back-pressure, streams, keep-alives);
 *                              {@code null} means the defaults
 * @param httpPolicy            the HTTP port's Host allowlist, CORS origins and connection cap (issue 33)
 * @param userQuotas            per-user bounds on leases and sessions ({@code --max-leases-per-user},
 *                              {@code --max-sessions-per-user}, issue 33); {@code null} means the defaults
 * @param threads               where the driver's turns and the client port run ({@link Threads#DRIVER_LOOP}, the
 *                              default; design HS81); {@code null} means the default
 */
public record ServerConfig(String name, Path dataDir, InetSocketAddress listenClient, InetSocketAddress listenPeer,
                           Map<String, InetSocketAddress> initialCluster, String clusterId, int heartbeatMs,
                           int electionMs, long snapshotCount, int maxRequestBytes, InetSocketAddress http,
                           Duration requestTimeout, Duration watchProgressInterval, boolean faultInjection,
                           Map<String, Long> memberIds, ClusterState initialClusterState,
                           InetSocketAddress advertisePeer, InetSocketAddress advertiseClient,
                           MaintenanceConfig maintenance, ServerTls tls, InetSocketAddress listenEtcd,
                           boolean forceNewCluster, String initialClusterToken, Duration authTokenTtl,
                           int bcryptCost, io.rota.server.api.ConnectionLimits limits, HttpPolicy httpPolicy,
                           UserQuotas userQuotas, Threads threads) {

    /**
     * Where a member's Raft driver and client connections run (design HS81). Chosen by the configuration, not
     * read from system properties by the member: {@code rota server} maps {@code -Drota.driver} and {@code
     * -Drota.clientLoop} to it ({@link #fromSystemProperties()}), as it maps flags.
     */
    public enum Threads {
        /** The driver's turns and the client connections on the peer transport's one event loop (P11, P15). */
        DRIVER_LOOP,
        /** The driver on the peer transport's loop; the client port on event loops of its own. */
        DRIVER_LOOP_OWN_CLIENT_LOOP,
        /** The driver on a thread of its own beside a separate peer event loop; the client port on its own. */
        DRIVER_THREAD;

        /**
         * The mode the JVM options ask for: {@code -Drota.driver=thread} gives {@link #DRIVER_THREAD}, else
         * {@code -Drota.clientLoop=own} gives {@link #DRIVER_LOOP_OWN_CLIENT_LOOP}, else {@link #DRIVER_LOOP}.
         */
        public static Threads fromSystemProperties() {
            if ("thread".equals(System.getProperty("rota.driver", "loop"))) {
                return DRIVER_THREAD;
            }
            return "own".equals(System.getProperty("rota.clientLoop", "driver")) ? DRIVER_LOOP_OWN_CLIENT_LOOP
                    : DRIVER_LOOP;
        }

        /** Whether the driver's turns run on the peer transport's event loop. */
        public boolean driverOnLoop() {
            return this != DRIVER_THREAD;
        }

        /** Whether client connections are served on the driver's loop. */
        public boolean clientsOnDriverLoop() {
            return this == DRIVER_LOOP;
        }
    }

    /** {@code --initial-cluster-state}, etcd's spelling: start a new cluster, or join an existing one. */
    public enum ClusterState {
        /** The members of --initial-cluster form a new cluster: they are its first voters. */
        NEW,
        /** This member was added to a running cluster and catches up from its leader (by snapshot if needed). */
        EXISTING
    }

    /**
     * etcd's default token is "etcd-cluster": with it, the derived id depends on --initial-cluster alone, so
     * scripts that may start two clusters on the same addresses give a random token (scripts/cluster.sh does).
     */
    public static final String DEFAULT_INITIAL_CLUSTER_TOKEN = "rota-cluster";
    /** 100 ms, one heartbeat per Raft tick ({@link NodeConfig#DEFAULT_TICK}); etcd's default too. */
    public static final int DEFAULT_HEARTBEAT_MS = 100;
    /** 1 s: the core's default of ten ticks ({@link RaftOptions#DEFAULT_ELECTION_TICKS}) of one heartbeat. */
    public static final int DEFAULT_ELECTION_MS = DEFAULT_HEARTBEAT_MS * RaftOptions.DEFAULT_ELECTION_TICKS;
    /** The node runtime's default (§7). */
    public static final long DEFAULT_SNAPSHOT_COUNT = NodeConfig.DEFAULT_SNAPSHOT_COUNT;
    /** 1.5 MiB, etcd's --max-request-bytes default: a 1 MiB value, its key and the txn around it. */
    public static final int DEFAULT_MAX_REQUEST_BYTES = 1_572_864;
    /** 5 s for a write or linearizable read: a leader failover (a 1–2 s election) fits inside it. */
    public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(5);
    /** 10 s between progress notifications to the watchers that asked: a quiet watch learns it is current. */
    public static final Duration DEFAULT_WATCH_PROGRESS_INTERVAL = Duration.ofSeconds(10);

    /** Below 10 ms a heartbeat is lost in scheduling noise and fsync latency. */
    static final int MIN_HEARTBEAT_MS = 10;
    /** etcd's rule: an election timeout of at least 5 heartbeats, so a follower misses several first. */
    static final int MIN_ELECTION_HEARTBEATS = 5;
    /** A request must have room for a small key, value and envelope. */
    static final int MIN_REQUEST_BYTES = 1024;
    /** 64 MiB: far beyond coordination data, and every request is one Raft entry held in memory. */
    static final int MAX_REQUEST_BYTES = 64 << 20;
    /** A client frame may be this much larger than the request it carries (envelope, call id, session). */
    public static final int FRAME_ENVELOPE_BYTES = 4096;

    /**
     * Checks every flag alone and against the others, in flag terms: a refusal is a {@link FlagException}
     * whose one-line message names the flag(s) as typed. The core configurations this one derives
     * ({@link #nodeConfig}, {@link #transportConfig}, {@link #clientSettings}) are valid whenever this
     * constructor returns, so an operator never sees a core field name.
     */
    public ServerConfig {
        Objects.requireNonNull(requestTimeout, "requestTimeout");
        memberIds = memberIds == null ? Map.of() : Map.copyOf(memberIds);
        initialClusterState = initialClusterState == null ? ClusterState.NEW : initialClusterState;
        maintenance = maintenance == null ? MaintenanceConfig.defaults() : maintenance;

        tls = tls == null ? ServerTls.NONE : tls;
        limits = limits == null ? io.rota.server.api.ConnectionLimits.DEFAULTS : limits;
        httpPolicy = httpPolicy == null ? HttpPolicy.DEFAULT : httpPolicy;
        Objects.requireNonNull(watchProgressInterval, "watchProgressInterval");
        try {
            MemberName.check("--name", name);   // the cluster's own check (issue 30): it publishes this name
        } catch (BadValueException e) {
            throw new FlagException("--name", e.getMessage());
        }
        require(dataDir != null, "--data-dir", "--data-dir is required");
        require(listenClient != null, "--listen-client", "--listen-client is required");
        require(listenPeer != null, "--listen-peer", "--listen-peer is required");
        require(initialCluster != null && !initialCluster.isEmpty(), "--initial-cluster",
                "--initial-cluster is empty: give every member as name=host:port, e.g. n1=127.0.0.1:7101,...");
        initialCluster = Collections.unmodifiableMap(new LinkedHashMap<>(initialCluster));
        require(initialCluster.containsKey(name), "--name", "--name " + name + " is not in --initial-cluster "
                + initialCluster.keySet() + ": add " + name + "=<peer address> or fix the name");
        if (advertisePeer == null) {
            require(sameAddress(initialCluster.get(name), listenPeer), "--listen-peer", "--listen-peer "
                    + format(listenPeer) + " differs from " + name + "'s entry " + format(initialCluster.get(name))
                    + " in --initial-cluster: the other members dial that address (to bind one address and"
                    + " advertise another, give --advertise-peer " + format(initialCluster.get(name)) + ")");
        } else {
            require(sameAddress(initialCluster.get(name), advertisePeer), "--advertise-peer", "--advertise-peer "
                    + format(advertisePeer) + " differs from " + name + "'s entry "
                    + format(initialCluster.get(name)) + " in --initial-cluster: the other members dial that address");
        }
        // A wildcard is where to bind, never where to dial: advertising one would send peers to themselves.
        for (Map.Entry<String, InetSocketAddress> member : initialCluster.entrySet()) {
            require(!isWildcard(member.getValue()), "--initial-cluster", "--initial-cluster " + member.getKey()
                    + " is " + format(member.getValue()) + ", a bind-anywhere address other members cannot dial:"
                    + " give its name or IP (and bind with --listen-peer " + format(member.getValue())
                    + " --advertise-peer NAME:PORT)");
        }
        require(advertiseClient == null || !isWildcard(advertiseClient), "--advertise-client",
                "--advertise-client must be an address clients can dial, got " + format(advertiseClient == null
                        ? listenClient : advertiseClient));
        require(advertiseClient != null || !isWildcard(listenClient), "--advertise-client", "--listen-client "
                + format(listenClient) + " binds every interface: give --advertise-client HOST:PORT, the address"
                + " clients and leader hints should use");
        require(listenClient.getPort() == 0 || !sameAddress(listenClient, listenPeer), "--listen-client",
                "--listen-client and --listen-peer must differ, both are " + format(listenPeer));
        if (http != null && http.getPort() != 0) {
            require(!sameAddress(http, listenPeer) && !sameAddress(http, listenClient), "--http",
                    "--http must differ from --listen-client and --listen-peer, got " + format(http));
        }
        if (listenEtcd != null && listenEtcd.getPort() != 0) {
            require(!sameAddress(listenEtcd, listenPeer) && !sameAddress(listenEtcd, listenClient)
                    && (http == null || !sameAddress(listenEtcd, http)), "--listen-etcd",
                    "--listen-etcd must differ from --listen-client, --listen-peer and --http, got " + format(listenEtcd));
        }
        if (!memberIds.isEmpty()) {
            require(memberIds.keySet().equals(initialCluster.keySet()), "--initial-cluster",
                    "--initial-cluster must give an id to every member or to none (NAME=ID@HOST:PORT), got ids for "
                            + memberIds.keySet() + " of " + initialCluster.keySet());
            require(memberIds.values().stream().allMatch(id -> id > 0), "--initial-cluster",
                    "--initial-cluster member ids must be positive, got " + memberIds);
            require(new java.util.HashSet<>(memberIds.values()).size() == memberIds.size(), "--initial-cluster",
                    "--initial-cluster gives two members the same id: " + memberIds);
        }
        require(initialClusterState == ClusterState.NEW || initialCluster.size() > 1, "--initial-cluster-state",
                "--initial-cluster-state existing joins a running cluster: list its members in --initial-cluster"
                        + " too (rotactl member add prints the line)");
        require(clusterId == null || !clusterId.isBlank(), "--cluster-id", "--cluster-id must not be blank");
        initialClusterToken = initialClusterToken == null ? DEFAULT_INITIAL_CLUSTER_TOKEN : initialClusterToken;
        authTokenTtl = authTokenTtl == null ? io.rota.server.auth.TokenPolicy.DEFAULT_TTL : authTokenTtl;
        require(authTokenTtl.toSeconds() >= 1, "--auth-token-ttl", "--auth-token-ttl must be at least 1 second, got "
                + authTokenTtl.toSeconds());
        // A bound, so expiry arithmetic in Unix ms cannot overflow and no token outlives a year of revocations.
        require(authTokenTtl.compareTo(io.rota.server.auth.TokenPolicy.MAX_TTL) <= 0, "--auth-token-ttl",
                "--auth-token-ttl must be at most " + io.rota.server.auth.TokenPolicy.MAX_TTL.toSeconds()
                        + " seconds (a year), got " + authTokenTtl.toSeconds());
        require(bcryptCost >= io.rota.server.authgate.Passwords.MIN_COST && bcryptCost <= io.rota.server.authgate.Passwords.MAX_COST,
                "--bcrypt-cost", "--bcrypt-cost must be between " + io.rota.server.authgate.Passwords.MIN_COST + " and "
                        + io.rota.server.authgate.Passwords.MAX_COST + ", got " + bcryptCost);
        userQuotas = userQuotas == null ? UserQuotas.defaults() : userQuotas;
        threads = threads == null ? Threads.DRIVER_LOOP : threads;
        require(heartbeatMs >= MIN_HEARTBEAT_MS, "--heartbeat-ms", "--heartbeat-ms must be at least "
                + MIN_HEARTBEAT_MS + ", got " + heartbeatMs);
        // The core counts time in ticks of one heartbeat: the election timeout must be a whole number of them.
        require(electionMs % heartbeatMs == 0, "--election-ms", "--election-ms must be a multiple of --heartbeat-ms"
                + " (one heartbeat is one Raft tick), got --election-ms " + electionMs + " and --heartbeat-ms "
                + heartbeatMs);
        require(electionMs >= (long) MIN_ELECTION_HEARTBEATS * heartbeatMs, "--election-ms",
                "--election-ms must be at least " + MIN_ELECTION_HEARTBEATS + " times --heartbeat-ms (as etcd"
                        + " requires), got --election-ms " + electionMs + " and --heartbeat-ms " + heartbeatMs);
        require(snapshotCount >= 1, "--snapshot-count", "--snapshot-count must be at least 1, got " + snapshotCount);
        require(maxRequestBytes >= MIN_REQUEST_BYTES && maxRequestBytes <= MAX_REQUEST_BYTES, "--max-request-bytes",
                "--max-request-bytes must be between " + MIN_REQUEST_BYTES + " and " + MAX_REQUEST_BYTES + ", got "
                        + maxRequestBytes);
        // Not flags (tests and embedders set them), so their refusals name the field.
        if (requestTimeout.isNegative() || requestTimeout.isZero()) {
            throw new IllegalArgumentException("requestTimeout must be positive, got " + requestTimeout);
        }
        if (watchProgressInterval.isNegative() || watchProgressInterval.isZero()) {
            throw new IllegalArgumentException("watchProgressInterval must be positive, got " + watchProgressInterval);
        }
    }

    /**
     * A builder for member {@code name}; {@code --data-dir}, {@code --listen-client}, {@code --listen-peer}
     * and {@code --initial-cluster} have no default and must be set, every other field starts at its default.
     */
    public static Builder builder(String name) {
        return new Builder(name);
    }

    /** A builder holding this configuration, to change some of it. */
    public Builder toBuilder() {
        return new Builder(name).dataDir(dataDir).listenClient(listenClient).listenPeer(listenPeer)
                .initialCluster(initialCluster).clusterId(clusterId).heartbeatMs(heartbeatMs).electionMs(electionMs)
                .snapshotCount(snapshotCount).maxRequestBytes(maxRequestBytes).http(http)
                .requestTimeout(requestTimeout).watchProgressInterval(watchProgressInterval)
                .faultInjection(faultInjection).memberIds(memberIds).initialClusterState(initialClusterState)
                .advertisePeer(advertisePeer).advertiseClient(advertiseClient).maintenance(maintenance).tls(tls)
                .listenEtcd(listenEtcd).forceNewCluster(forceNewCluster).initialClusterToken(initialClusterToken)
                .authTokenTtl(authTokenTtl).bcryptCost(bcryptCost).limits(limits).httpPolicy(httpPolicy)
                .userQuotas(userQuotas).threads(threads);
    }

    /** The peer address the other members dial: {@code --advertise-peer}, or {@code --listen-peer}. */
    public InetSocketAddress advertisedPeer() {
        return advertisePeer != null ? advertisePeer : listenPeer;
    }

    /**
     * The client address this member publishes: {@code --advertise-client}, or {@code --listen-client}'s
     * host with the port the client server bound ({@code boundPort}: port 0 binds any free one).
     */
    public String advertisedClient(int boundPort) {
        return advertiseClient != null ? format(advertiseClient) : listenClient.getHostString() + ":" + boundPort;
    }

    /**
     * The HTTP address this member publishes (the dashboard links members by it): {@code --http}'s host with the
     * bound port, or, when {@code --http} binds every interface, {@link #advertisedClient}'s host.
     */
    public String advertisedHttp(int boundClientPort, int boundHttpPort) {
        if (!isWildcard(http)) {
            return http.getHostString() + ":" + boundHttpPort;
        }
        String client = advertisedClient(boundClientPort);
        return client.substring(0, client.lastIndexOf(':')) + ":" + boundHttpPort;
    }

    /**
     * The etcd API address this member publishes (etcd's MemberList names it as the member's client URL):
     * {@code --listen-etcd}'s host with the bound port, or, when it binds every interface,
     * {@link #advertisedClient}'s host; empty without {@code --listen-etcd}.
     */
    public String advertisedEtcd(int boundClientPort, int boundEtcdPort) {
        if (listenEtcd == null) {
            return "";
        }
        if (!isWildcard(listenEtcd)) {
            return listenEtcd.getHostString() + ":" + boundEtcdPort;
        }
        String client = advertisedClient(boundClientPort);
        return client.substring(0, client.lastIndexOf(':')) + ":" + boundEtcdPort;
    }

    /** This member's id: its explicit id, or its 1-based position in {@code initialCluster}. */
    public long memberId() {
        return idOf(name);
    }

    /** The id of member {@code memberName}: its explicit id, or its 1-based position in {@code initialCluster}. */
    public long idOf(String memberName) {
        Long explicit = memberIds.get(memberName);
        if (explicit != null) {
            return explicit;
        }
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

    /**
     * {@code --initial-cluster} as a member that bootstraps a new cluster records it in its data dir
     * ({@code NAME=ID@HOST:PORT,...}, in id order), or null when this member joins a running cluster and
     * bootstraps nothing (docs/design.md MF4).
     */
    public String bootstrapCluster() {
        return initialClusterState == ClusterState.EXISTING ? null : canonicalCluster();
    }

    /** {@code --initial-cluster} as {@code NAME=ID@HOST:PORT,...} in id order. */
    private String canonicalCluster() {
        java.util.TreeMap<Long, String> byId = new java.util.TreeMap<>();
        initialCluster.forEach((n, address) -> byId.put(idOf(n), n + "=" + idOf(n) + "@" + format(address)));
        return String.join(",", byId.values());
    }

    /**
     * This configuration with the cluster id this start runs under (docs/design.md MF9): {@code --cluster-id}
     * if given (a data dir recorded under another is then refused, as before); else the id {@code recorded} in
     * the data dir (so data dirs from before issue 32, recorded as "rota", keep theirs); else, bootstrapping a
     * new cluster, {@link #derivedClusterId()}.
     *
     * @throws FlagException if this member joins a running cluster, has no recorded id and was given none
     */
    public ServerConfig withEffectiveClusterId(java.util.Optional<String> recorded) {
        if (clusterId != null) {
            return this;
        }
        if (recorded.isPresent()) {
            return toBuilder().clusterId(recorded.get()).build();
        }
        require(initialClusterState == ClusterState.NEW, "--cluster-id", "--initial-cluster-state existing joins a"
                + " running cluster: give its --cluster-id too, as `rotactl member add` printed it");
        return toBuilder().clusterId(derivedClusterId()).build();
    }

    /**
     * The default id of a new cluster, as etcd derives its cluster ID from the initial members and
     * --initial-cluster-token: {@code rota-} and 16 hex digits of SHA-256 over the token and
     * {@code --initial-cluster} (names, ids, peer addresses, in id order) — the same on every bootstrap member given the
     * same flags, different for another member list or token.
     */
    public String derivedClusterId() {
        try {
            byte[] digest = java.security.MessageDigest.getInstance("SHA-256").digest(
                    (initialClusterToken + "\n" + canonicalCluster()).getBytes(java.nio.charset.StandardCharsets.UTF_8));
            return "rota-" + java.util.HexFormat.of().formatHex(digest, 0, 8);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
    }

    public Duration electionTimeout() {
        return Duration.ofMillis(electionMs);
    }

    /** etcd clamps short TTLs up to 1.5 × election timeout: a lease must outlive one leader change. */
    public long minLeaseTtlMs() {
        return electionMs * 3L / 2;
    }

    /** The largest client frame: the largest request and its envelope. */
    public int maxFrameBytes() {
        return maxRequestBytes + FRAME_ENVELOPE_BYTES;
    }

    /** One Raft tick: the heartbeat interval. */
    public Duration tick() {
        return Duration.ofMillis(heartbeatMs);
    }

    /**
     * The node runtime's configuration: a tick per heartbeat, the election timeout in ticks, the core's
     * defaults otherwise. Valid by construction (electionMs is a multiple of heartbeatMs and at least 5×).
     */
    public NodeConfig nodeConfig() {
        Map<Long, String> addresses = new HashMap<>();
        peersById().forEach((id, address) -> addresses.put(id, format(address)));
        // A joining member bootstraps the cluster's members without itself (docs/design.md M9, M11): it is
        // no voter, ignores its election timer, and learns the real configuration from the leader's log.
        java.util.Set<Long> voters = new java.util.HashSet<>(peersById().keySet());
        if (initialClusterState == ClusterState.EXISTING) {
            voters.remove(memberId());
        }
        RaftOptions raft = RaftOptions.builder(memberId(), new Configuration(voters))
                .electionTicks(electionMs / heartbeatMs).heartbeatTicks(1).build();
        return NodeConfig.builder(raft).tick(tick()).snapshotCount(snapshotCount).memberAddresses(addresses).build();
    }

    /**
     * The peer transport's configuration. A peer frame carries an AppendEntries with the largest client
     * request as one entry, so it is twice the client frame (and never below the transport's default).
     * Received snapshots stream into the data directory's snapshot directory, where the store adopts them.
     */
    public TransportConfig transportConfig() {
        Map<Long, InetSocketAddress> peers = new HashMap<>(peersById());
        peers.remove(memberId());
        // RotaServer resolves the id first (withEffectiveClusterId); an unresolved configuration has the default.
        return TransportConfig.builder(clusterId != null ? clusterId : derivedClusterId(), memberId(), listenPeer)
                .peers(peers)
                .maxFrameBytes(Math.max(TransportConfig.DEFAULT_MAX_FRAME_BYTES, 2 * maxFrameBytes()))
                .snapshotDirectory(StorageConfig.defaults(dataDir()).snapshotDir())
                .maxPendingHandshakes(limits.maxPeerPendingHandshakes()).build();
    }

    /**
     * The client port's settings: retries while no leader is known come every tick, a ReadIndex attempt may
     * take two election timeouts (time for a new leader), and lease TTLs are raised to {@link #minLeaseTtlMs}
     * rounded up to whole seconds.
     */
    public ClientServer.Settings clientSettings(String version) {
        return ClientServer.Settings.builder(listenClient).maxFrameBytes(maxFrameBytes()).requestTimeout(requestTimeout)
                .retryInterval(tick()).readAttemptTimeout(electionTimeout().multipliedBy(2))
                .minLeaseTtlSeconds((minLeaseTtlMs() + 999) / 1000).version(version).userQuotas(userQuotas).build();
    }

    /** {@code host:port} of an address as given (not resolved). */
    public static String format(InetSocketAddress address) {
        return address.getHostString() + ":" + address.getPort();
    }

    /** {@code 0.0.0.0} or {@code ::}: bind every interface. An unresolved name is never one. */
    static boolean isWildcard(InetSocketAddress address) {
        if (address.getAddress() != null) {
            return address.getAddress().isAnyLocalAddress();
        }
        String host = address.getHostString();
        return host.equals("0.0.0.0") || host.equals("::") || host.equals("[::]") || host.equals("0:0:0:0:0:0:0:0");
    }

    private static boolean sameAddress(InetSocketAddress a, InetSocketAddress b) {
        return a.getPort() == b.getPort() && a.getHostString().equals(b.getHostString());
    }

    private static void require(boolean condition, String flag, String message) {
        if (!condition) {
            throw new FlagException(flag, message);
        }
    }

    /** Builds a {@link ServerConfig}; starts from the defaults. Setters are named like the fields. */
    public static final class Builder {
        private final String name;
        private Path dataDir;
        private InetSocketAddress listenClient;
        private InetSocketAddress listenPeer;
        private Map<String, InetSocketAddress> initialCluster;
        private String clusterId;
        private String initialClusterToken = DEFAULT_INITIAL_CLUSTER_TOKEN;
        private int heartbeatMs = DEFAULT_HEARTBEAT_MS;
        private int electionMs = DEFAULT_ELECTION_MS;
        private long snapshotCount = DEFAULT_SNAPSHOT_COUNT;
        private int maxRequestBytes = DEFAULT_MAX_REQUEST_BYTES;
        private InetSocketAddress http;
        private HttpPolicy httpPolicy = HttpPolicy.DEFAULT;
        private Duration requestTimeout = DEFAULT_REQUEST_TIMEOUT;
        private Duration watchProgressInterval = DEFAULT_WATCH_PROGRESS_INTERVAL;
        private boolean faultInjection;
        private Map<String, Long> memberIds = Map.of();
        private ClusterState initialClusterState = ClusterState.NEW;
        private InetSocketAddress advertisePeer;
        private InetSocketAddress advertiseClient;

        private MaintenanceConfig maintenance = MaintenanceConfig.defaults();

        private ServerTls tls = ServerTls.NONE;
        private InetSocketAddress listenEtcd;
        private boolean forceNewCluster;
        private Duration authTokenTtl = io.rota.server.auth.TokenPolicy.DEFAULT_TTL;
        private int bcryptCost = io.rota.server.authgate.Passwords.DEFAULT_COST;
        private io.rota.server.api.ConnectionLimits limits = io.rota.server.api.ConnectionLimits.DEFAULTS;
        private UserQuotas userQuotas = UserQuotas.defaults();
        private Threads threads = Threads.DRIVER_LOOP;

        private Builder(String name) {
            this.name = name;
        }

        public Builder dataDir(Path dataDir) {
            this.dataDir = dataDir;
            return this;
        }

        public Builder listenClient(InetSocketAddress listenClient) {
            this.listenClient = listenClient;
            return this;
        }

        public Builder listenPeer(InetSocketAddress listenPeer) {
            this.listenPeer = listenPeer;
            return this;
        }

        public Builder initialCluster(Map<String, InetSocketAddress> initialCluster) {
            this.initialCluster = initialCluster;
            return this;
        }

        public Builder clusterId(String clusterId) {
            this.clusterId = clusterId;
            return this;
        }

        public Builder heartbeatMs(int heartbeatMs) {
            this.heartbeatMs = heartbeatMs;
            return this;
        }

        public Builder electionMs(int electionMs) {
            this.electionMs = electionMs;
            return this;
        }

        public Builder snapshotCount(long snapshotCount) {
            this.snapshotCount = snapshotCount;
            return this;
        }

        public Builder maxRequestBytes(int maxRequestBytes) {
            this.maxRequestBytes = maxRequestBytes;
            return this;
        }

        /** Where /health, /status and /metrics listen; {@code null} (the default) for nowhere. */
        public Builder http(InetSocketAddress http) {
            this.http = http;
            return this;
        }

        public Builder requestTimeout(Duration requestTimeout) {
            this.requestTimeout = requestTimeout;
            return this;
        }

        public Builder watchProgressInterval(Duration watchProgressInterval) {
            this.watchProgressInterval = watchProgressInterval;
            return this;
        }

        public Builder faultInjection(boolean faultInjection) {
            this.faultInjection = faultInjection;
            return this;
        }

        /** Explicit member ids by name (all of --initial-cluster's, or none: positions). */
        public Builder memberIds(Map<String, Long> memberIds) {
            this.memberIds = memberIds;
            return this;
        }

        public Builder initialClusterState(ClusterState initialClusterState) {
            this.initialClusterState = initialClusterState;
            return this;
        }

        /** The peer address other members dial, when it is not {@code --listen-peer}; {@code null}: that one. */
        public Builder advertisePeer(InetSocketAddress advertisePeer) {
            this.advertisePeer = advertisePeer;
            return this;
        }

        /** The client address to publish, when it is not {@code --listen-client}'s; {@code null}: that one. */
        public Builder advertiseClient(InetSocketAddress advertiseClient) {
            this.advertiseClient = advertiseClient;
            return this;
        }

        /** Space quota and auto-compaction (issue 18). */
        public Builder maintenance(MaintenanceConfig maintenance) {
            this.maintenance = maintenance;
            return this;
        }

        /** TLS on the client and peer ports (default {@link ServerTls#NONE}: plaintext). */
        public Builder tls(ServerTls tls) {
            this.tls = tls;
            return this;
        }

        /** Where etcd's v3 gRPC API listens; {@code null} (the default) for nowhere. */
        public Builder listenEtcd(InetSocketAddress listenEtcd) {
            this.listenEtcd = listenEtcd;
            return this;
        }

        /** Mixed into the derived cluster id (etcd's --initial-cluster-token). */
        public Builder initialClusterToken(String initialClusterToken) {
            this.initialClusterToken = initialClusterToken;
            return this;
        }

        /** How long an auth token is valid (--auth-token-ttl). */
        public Builder authTokenTtl(Duration authTokenTtl) {
            this.authTokenTtl = authTokenTtl;
            return this;
        }

        /** bcrypt's cost for new password hashes (--bcrypt-cost). */
        public Builder bcryptCost(int bcryptCost) {
            this.bcryptCost = bcryptCost;
            return this;
        }

        /** The HTTP port's Host allowlist, CORS origins and connection cap (docs/security.md, "The HTTP port"). */
        public Builder httpPolicy(HttpPolicy httpPolicy) {
            this.httpPolicy = httpPolicy;
            return this;
        }

        /** Disaster recovery: make this member's data a cluster of one (docs/design.md MF10). */
        public Builder forceNewCluster(boolean forceNewCluster) {
            this.forceNewCluster = forceNewCluster;
            return this;
        }

        /** Connection caps, idle timeout, back-pressure, streams and keep-alives (issue 33). */
        public Builder limits(io.rota.server.api.ConnectionLimits limits) {
            this.limits = limits;
            return this;
        }

        /** Per-user bounds on leases and sessions (issue 33). */
        public Builder userQuotas(UserQuotas userQuotas) {
            this.userQuotas = userQuotas;
            return this;
        }

        /** Where the driver and the client port run (design HS81); {@link Threads#DRIVER_LOOP} by default. */
        public Builder threads(Threads threads) {
            this.threads = threads == null ? Threads.DRIVER_LOOP : threads;
            return this;
        }

        /** The configuration; throws {@link FlagException} naming the flag when it is invalid. */
        public ServerConfig build() {
            return new ServerConfig(name, dataDir, listenClient, listenPeer, initialCluster, clusterId, heartbeatMs,
                    electionMs, snapshotCount, maxRequestBytes, http, requestTimeout, watchProgressInterval,
                    faultInjection, memberIds, initialClusterState, advertisePeer, advertiseClient, maintenance, tls,
                    listenEtcd, forceNewCluster, initialClusterToken, authTokenTtl, bcryptCost, limits, httpPolicy,
                    userQuotas, threads);
        }
    }
}
