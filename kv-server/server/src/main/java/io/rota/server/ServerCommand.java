package io.rota.server;

import io.rota.proto.facts.BadValueException;
import io.rota.proto.facts.HostPort;
import io.rota.proto.facts.MemberName;
import io.rota.server.api.ConnectionLimits;
import io.rota.server.cluster.MemberRefusedException;
import io.rota.server.http.HttpPolicy;
import io.rota.server.kv.UserQuotas;
import io.rota.server.lab.LabMode;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@code rota server ...}: parse and validate the flags, start a member, stop it on SIGTERM/SIGINT. Its exit
 * status tells a supervisor what to do ({@link RotaServer#run}): 1, restart it (its Raft node fail-stopped, or
 * it could not start); 2, a bad command line; 3, do not restart it (refused by its peers or refusing its data
 * dir: the same start would be refused again); 143, stopped by SIGTERM.
 */
@Command(name = "server", mixinStandardHelpOptions = true,
        description = "Run one member of a Rota cluster. Member ids follow the order of --initial-cluster"
                + " (first = 1); give every member the same list.",
        exitCodeListHeading = "%nExit status:%n",
        exitCodeList = {
            "1:failed; restart it: its Raft node stopped itself (storage error, out of memory), or it could not"
                    + " start (a port in use, a disk error)",
            "2:a bad command line",
            "3:refused; do not restart it: its peers refused it (its id was removed, or an empty data dir"
                    + " under an id that has joined) or its data dir is another member's or cluster's; the"
                    + " message says what to do",
            "143:stopped by SIGTERM (130: Ctrl-C), as any JVM: 128 + the signal"})
final class ServerCommand implements Callable<Integer> {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--name", required = true, description = "This member's name, as in --initial-cluster.")
    String name;

    @Option(names = "--data-dir", required = true, description = "Log, hard state and snapshots.")
    Path dataDir;

    @Option(names = "--listen-client", required = true, description = "host:port of the client protocol.")
    String listenClient;

    @Option(names = "--listen-peer", required = true, description = "host:port for Raft peers.")
    String listenPeer;

    @Option(names = "--advertise-peer", description = "host:port the other members dial, when it is not --listen-peer"
            + " (a member in a pod or behind NAT binds 0.0.0.0:PORT and advertises its name); must be this member's"
            + " --initial-cluster entry (default: --listen-peer).")
    String advertisePeer;

    @Option(names = "--advertise-client", description = "host:port this member publishes to clients (member list,"
            + " leader hints), when it is not --listen-client; required when --listen-client binds 0.0.0.0"
            + " (default: --listen-client).")
    String advertiseClient;

    @Option(names = "--initial-cluster", required = true, description = "n1=host:port,n2=host:port,... (peer addresses;"
            + " ids by position), or n1=1@host:port,n4=4@host:port,... (explicit ids, as 'rotactl member add' prints).")
    String initialCluster;

    @Option(names = {"--initial-cluster-state", "--join"}, defaultValue = "new", arity = "0..1", fallbackValue = "existing",
            description = "new: --initial-cluster is a new cluster's first voters (default). existing (or --join):"
                    + " this member was added with 'rotactl member add' and joins the running cluster.")
    String initialClusterState;

    @Option(names = "--force-new-cluster", description = "Disaster recovery, when a majority of the members is"
            + " gone for good: this member keeps its data and becomes the sole voter of a new cluster; the other"
            + " members are retired. Entries the old cluster never committed may be committed. Remove the flag"
            + " from the next start (a second start with it changes nothing). See docs/operations.md.")
    boolean forceNewCluster;

    @Option(names = "--cluster-id", description = "Peers of another cluster are refused (default: the id recorded in"
            + " the data dir; for a new cluster, derived from --initial-cluster and --initial-cluster-token, as etcd's;"
            + " a joining member takes the one 'rotactl member add' prints).")
    String clusterId;

    @Option(names = "--initial-cluster-token", defaultValue = ServerConfig.DEFAULT_INITIAL_CLUSTER_TOKEN,
            description = "Mixed into a new cluster's derived id, so two clusters on the same addresses differ"
                    + " (default: ${DEFAULT-VALUE}; scripts/cluster.sh gives a random one per cluster).")
    String initialClusterToken;

    @Option(names = "--heartbeat-ms", defaultValue = "" + ServerConfig.DEFAULT_HEARTBEAT_MS,
            description = "Heartbeat interval = one tick (default: ${DEFAULT-VALUE}).")
    int heartbeatMs;

    @Option(names = "--election-ms", defaultValue = "" + ServerConfig.DEFAULT_ELECTION_MS,
            description = "Election timeout, randomised 1-2x (default: ${DEFAULT-VALUE}).")
    int electionMs;

    @Option(names = "--snapshot-count", defaultValue = "" + ServerConfig.DEFAULT_SNAPSHOT_COUNT,
            description = "Entries between snapshots (default: ${DEFAULT-VALUE}).")
    long snapshotCount;

    @Option(names = "--max-request-bytes", defaultValue = "" + ServerConfig.DEFAULT_MAX_REQUEST_BYTES,
            description = "Largest client request (default: ${DEFAULT-VALUE}).")
    int maxRequestBytes;

    @Option(names = "--unsafe-fault-injection", description = "FOR CHAOS TESTS ONLY: serve POST /fault/clock on --http, "
            + "which skews this member's wall clock and monotonic clock rate. Never in production.")
    boolean unsafeFaultInjection;

    @Option(names = "--lab-script", description = "LAB MODE, for a local cluster from scripts/cluster.sh only (it passes"
            + " this when started with ROTA_LAB=1): the dashboard gets kill/pause/resume/restart buttons that run this"
            + " script, and partition and transfer buttons. Never in production.")
    Path labScript;

    @Option(names = "--lab-cluster-dir", description = "LAB MODE: the cluster's directory (PID files), with --lab-script.")
    Path labClusterDir;

    @Option(names = "--http", description = "host:port for /health, /status, /metrics and the dashboard (default:"
            + " none). HTTPS with the client port's certificate when it has one; with auth enabled, all but /health"
            + " and /metrics answer root only.")
    String http;

    // ---- the HTTP port's access rules (issue 33, docs/security.md "The HTTP port") --------------------

    @Option(names = "--http-host-allowlist", split = ",", description = "Host names the HTTP port answers to (a"
            + " DNS rebinding defence, etcd's --host-whitelist); /health and /metrics answer any. Default: localhost,"
            + " 127.0.0.1, ::1 and the hosts of this member's --http, client, peer and etcd addresses. '*' = any.")
    List<String> httpHostAllowlist = List.of();

    @Option(names = "--http-cors-origin", split = ",", description = "Browser origins, besides this cluster's"
            + " members' HTTP addresses, that may read the dashboard's data (Access-Control-Allow-Origin)."
            + " Default: none.")
    List<String> httpCorsOrigins = List.of();

    @Option(names = "--http-max-connections", defaultValue = "" + HttpPolicy.DEFAULT_MAX_CONNECTIONS,
            description = "Open HTTP connections at most; more are closed on accept. Idle ones close after 60 s"
                    + " (default: ${DEFAULT-VALUE}).")
    int httpMaxConnections;
    // ---- per-user quotas (issue 33) --------------------------------------------------------------------

    @Option(names = "--max-leases-per-user", defaultValue = "" + UserQuotas.DEFAULT_MAX_LEASES_PER_USER,
            description = "While auth is enabled: live leases one user (not root) may hold; past it a grant is"
                    + " refused. The leader's value is stamped into each command (default: ${DEFAULT-VALUE}).")
    int maxLeasesPerUser;

    @Option(names = "--max-sessions-per-user", defaultValue = "" + UserQuotas.DEFAULT_MAX_SESSIONS_PER_USER,
            description = "While auth is enabled: live client sessions one user (not root) may hold; past it its"
                    + " own least recently active one is evicted, never another user's (default: ${DEFAULT-VALUE}).")
    int maxSessionsPerUser;

    // ---- space quota and compaction (issue 18), etcd's flags ------------------------------------------

    @Option(names = "--quota-backend-bytes", defaultValue = "0", description = "Space quota: past this many accounted"
            + " bytes (keys, values and retained history) the NOSPACE alarm refuses writes that add data."
            + " 0 = the default, 2 GiB.")
    long quotaBackendBytes;

    @Option(names = "--auto-compaction-mode", defaultValue = "", description = "periodic or revision: compact the"
            + " revision history automatically (default: off; 'rotactl compaction REV' compacts by hand).")
    String autoCompactionMode;

    @Option(names = "--auto-compaction-retention", defaultValue = "", description = "periodic: history to keep, e.g."
            + " 30m, 1h (a bare number is hours; default 1h); revision: revisions to keep (default 1000).")
    String autoCompactionRetention;

    @Option(names = "--cert-file", paramLabel = "PEM", description = "TLS on the client port: this member's certificate"
            + " chain (PEM). With --key-file. Reloaded when the file changes.")
    Path certFile;

    @Option(names = "--key-file", paramLabel = "PEM", description = "The client port certificate's private key (PEM,"
            + " unencrypted PKCS#8: BEGIN PRIVATE KEY).")
    Path keyFile;

    @Option(names = "--trusted-ca-file", paramLabel = "PEM", description = "CA certificates (PEM) that client"
            + " certificates must chain to (with --client-cert-auth).")
    Path trustedCaFile;

    @Option(names = "--client-cert-auth", description = "Refuse clients without a certificate of --trusted-ca-file;"
            + " the certificate's CN names the client.")
    boolean clientCertAuth;

    @Option(names = "--peer-cert-file", paramLabel = "PEM", description = "Mutual TLS on the peer port: this member's"
            + " certificate (PEM); its CN or a DNS SAN must be this member's --name. With --peer-key-file and"
            + " --peer-trusted-ca-file.")
    Path peerCertFile;

    @Option(names = "--peer-key-file", paramLabel = "PEM", description = "The peer certificate's private key (PEM,"
            + " unencrypted PKCS#8).")
    Path peerKeyFile;

    @Option(names = "--peer-trusted-ca-file", paramLabel = "PEM", description = "The cluster's peer CA (PEM): every"
            + " member's peer certificate must chain to it.")
    Path peerTrustedCaFile;

    @Option(names = "--tls-provider", paramLabel = "jdk|openssl", description = "TLS implementation of both ports"
            + " (default: jdk). openssl uses the bundled BoringSSL; where it cannot load, jdk is used and logged.")
    String tlsProvider;

    // --- etcd's TLS knobs (issue 33, item 8). docs/security.md, "The flags".

    @Option(names = "--cipher-suites", paramLabel = "SUITE,...", split = ",", description = "TLS cipher suites (IANA"
            + " names, as etcd) of every TLS port: client, etcd, HTTP and peer (default: the provider's). An unknown"
            + " name is refused at start.")
    java.util.List<String> cipherSuites;

    @Option(names = "--tls-min-version", paramLabel = "TLS1.2|TLS1.3", defaultValue = "TLS1.2", description = "Lowest"
            + " TLS version every TLS port accepts (default: ${DEFAULT-VALUE}).")
    String tlsMinVersion;

    @Option(names = "--tls-max-version", paramLabel = "TLS1.2|TLS1.3", defaultValue = "TLS1.3", description = "Highest"
            + " TLS version every TLS port accepts (default: ${DEFAULT-VALUE}).")
    String tlsMaxVersion;

    @Option(names = "--client-cert-allowed-cn", paramLabel = "CN", description = "Accept only client certificates"
            + " with this CN on the client, etcd and HTTP ports (default: any of --trusted-ca-file).")
    String clientCertAllowedCn;

    @Option(names = "--client-cert-allowed-hostname", paramLabel = "HOST", description = "Accept only client"
            + " certificates with this DNS or IP SAN on the client, etcd and HTTP ports (default: any).")
    String clientCertAllowedHostname;

    @Option(names = "--peer-cert-allowed-cn", paramLabel = "CN", description = "Peer certificates must also have this"
            + " CN, besides carrying their member name (default: any).")
    String peerCertAllowedCn;

    @Option(names = "--client-crl-file", paramLabel = "CRL", description = "A CRL (PEM or DER) of --trusted-ca-file:"
            + " revoked client certificates are refused at the handshake; reloaded when it changes (default: none).")
    Path clientCrlFile;

    @Option(names = "--peer-crl-file", paramLabel = "CRL", description = "A CRL of --peer-trusted-ca-file: revoked"
            + " peer certificates are refused at the handshake; reloaded when it changes (default: none).")
    Path peerCrlFile;

    @Option(names = "--listen-etcd", description = "host:port for etcd's v3 gRPC API, so etcdctl and etcd clients"
            + " work against this member (default: none); with --cert-file it serves TLS with the client port's files."
            + " See docs/etcd-compat.md.")
    String listenEtcd;

    @Option(names = "--auth-token-ttl", defaultValue = "300", paramLabel = "SECONDS", description = "How long an auth"
            + " token is valid after a login (default: ${DEFAULT-VALUE}, as etcd's); the SDK logs in again before it"
            + " expires; at most a year. Tokens are also bound to the cluster id and die with any user or role change.")
    long authTokenTtlSeconds;

    @Option(names = "--bcrypt-cost", defaultValue = "" + io.rota.server.authgate.Passwords.DEFAULT_COST, description =
            "bcrypt's cost (2^N rounds) for password hashes made from now on (default: ${DEFAULT-VALUE}, as etcd's;"
                    + " 4 to 31; each step doubles a login's CPU).")
    int bcryptCost;

    // --- Resource limits (issue 33, item 4): what one client or stranger may cost. docs/security.md.

    @Option(names = "--max-client-connections", paramLabel = "N", defaultValue = ""
            + ConnectionLimits.DEFAULT_MAX_CONNECTIONS, description = "Open connections on the client port, and"
            + " on the etcd port, each; a connection past it is closed at once (default: ${DEFAULT-VALUE}).")
    int maxClientConnections;

    @Option(names = "--client-idle-timeout", paramLabel = "DURATION", defaultValue = "5m", description = "Close a"
            + " client or etcd connection with no call, no watch and no traffic for this long, e.g. 90s, 5m; the SDK"
            + " dials again on its next call (default: ${DEFAULT-VALUE}).")
    String clientIdleTimeout;

    @Option(names = "--max-client-pending-bytes", paramLabel = "BYTES", defaultValue = ""
            + ConnectionLimits.DEFAULT_MAX_PENDING_BYTES, description = "Answers buffered for a client that does not"
            + " read them; past it the connection is closed (default: ${DEFAULT-VALUE}).")
    long maxClientPendingBytes;

    @Option(names = "--client-unwritable-timeout", paramLabel = "DURATION", defaultValue = "60s", description =
            "Close a client connection paused this long because it does not read its answers (its requests are not"
            + " read meanwhile) (default: ${DEFAULT-VALUE}).")
    String clientUnwritableTimeout;

    @Option(names = "--max-concurrent-streams", paramLabel = "N", defaultValue = ""
            + ConnectionLimits.DEFAULT_MAX_CONCURRENT_STREAMS, description = "gRPC streams per etcd-port connection"
            + " (etcd's flag); the next is refused (default: ${DEFAULT-VALUE}).")
    int maxConcurrentStreams;

    @Option(names = "--grpc-keepalive-min-time", paramLabel = "DURATION", defaultValue = "1s", description = "The"
            + " most often an etcd client may ping; more often closes its connection (default: ${DEFAULT-VALUE}).")
    String grpcKeepaliveMinTime;

    @Option(names = "--grpc-keepalive-interval", paramLabel = "DURATION", defaultValue = "2h", description = "How"
            + " often the etcd port pings a silent client (default: ${DEFAULT-VALUE}).")
    String grpcKeepaliveInterval;

    @Option(names = "--grpc-keepalive-timeout", paramLabel = "DURATION", defaultValue = "20s", description = "How"
            + " long the etcd port waits for a ping's answer before closing (default: ${DEFAULT-VALUE}).")
    String grpcKeepaliveTimeout;

    @Option(names = "--max-peer-pending-handshakes", paramLabel = "N", defaultValue = ""
            + io.rota.raft.transport.TransportConfig.DEFAULT_MAX_PENDING_HANDSHAKES, description = "Peer connections"
            + " accepted that have not completed the handshake; past it a new one is closed at once (default:"
            + " ${DEFAULT-VALUE}).")
    int maxPeerPendingHandshakes;

    /** The resource-limit flags; a refusal names the flag. */
    private ConnectionLimits limits() {
        try {
            return new ConnectionLimits(maxClientConnections, duration("--client-idle-timeout", clientIdleTimeout),
                    maxClientPendingBytes, duration("--client-unwritable-timeout", clientUnwritableTimeout),
                    maxConcurrentStreams, duration("--grpc-keepalive-min-time", grpcKeepaliveMinTime),
                    duration("--grpc-keepalive-interval", grpcKeepaliveInterval),
                    duration("--grpc-keepalive-timeout", grpcKeepaliveTimeout), maxPeerPendingHandshakes);
        } catch (IllegalArgumentException e) {
            String flag = e.getMessage().substring(0, Math.max(0, e.getMessage().indexOf(' ')));
            throw new FlagException(flag, e.getMessage());
        }
    }

    /** A duration as etcd writes them: a number and ms, s, m or h ({@code 500ms}, {@code 90s}, {@code 5m}). */
    static Duration duration(String flag, String value) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(\\d+)(ms|s|m|h)").matcher(value.trim());
        if (!m.matches()) {
            throw new FlagException(flag, flag + " is a duration such as 500ms, 90s, 5m or 2h, got '" + value + "'");
        }
        long n = Long.parseLong(m.group(1));
        return switch (m.group(2)) {
            case "ms" -> Duration.ofMillis(n);
            case "s" -> Duration.ofSeconds(n);
            case "m" -> Duration.ofMinutes(n);
            default -> Duration.ofHours(n);
        };
    }

    private UserQuotas userQuotas() {
        try {
            return new UserQuotas(maxLeasesPerUser, maxSessionsPerUser);
        } catch (IllegalArgumentException e) {
            throw new FlagException(maxLeasesPerUser < 1 ? "--max-leases-per-user" : "--max-sessions-per-user",
                    e.getMessage());
        }
    }

    @Override
    public Integer call() throws InterruptedException {
        ServerConfig config;
        try {
            // Every flag rule, alone and across flags, is ServerConfig's; its message names the flags.
            Map<String, Long> ids = new LinkedHashMap<>();
            config = ServerConfig.builder(name).dataDir(dataDir).listenClient(address("--listen-client", listenClient))
                    .listenPeer(address("--listen-peer", listenPeer)).initialCluster(cluster(initialCluster, ids))
                    .memberIds(ids).initialClusterState(clusterState(initialClusterState))
                    .clusterId(clusterId).initialClusterToken(initialClusterToken).heartbeatMs(heartbeatMs)
                    .electionMs(electionMs).snapshotCount(snapshotCount)
                    .maxRequestBytes(maxRequestBytes).http(http == null ? null : address("--http", http))
                    .httpPolicy(httpPolicy())
                    .faultInjection(unsafeFaultInjection)
                    .advertisePeer(advertisePeer == null ? null
                            : dialAddress("--advertise-peer", "--advertise-peer", advertisePeer))
                    .advertiseClient(advertiseClient == null ? null
                            : dialAddress("--advertise-client", "--advertise-client", advertiseClient))
                    .maintenance(MaintenanceConfig.parse(quotaBackendBytes, autoCompactionMode, autoCompactionRetention))
                    .tls(tls())
                    .listenEtcd(listenEtcd == null ? null : address("--listen-etcd", listenEtcd))
                    .limits(limits())
                    .forceNewCluster(forceNewCluster).userQuotas(userQuotas())
                    .authTokenTtl(java.time.Duration.ofSeconds(authTokenTtlSeconds)).bcryptCost(bcryptCost)
                    // The JVM options choose the threads (ROTA_JAVA_OPTS=-Drota.driver=thread); the member reads
                    // only its configuration (design HS81).
                    .threads(ServerConfig.Threads.fromSystemProperties()).build();
        } catch (FlagException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        if ((labScript == null) != (labClusterDir == null)) {
            throw new CommandLine.ParameterException(spec.commandLine(),
                    "--lab-script and --lab-cluster-dir go together (lab mode); give both or neither");
        }
        LabMode lab = labScript == null ? null : new LabMode(labScript.toAbsolutePath(), labClusterDir.toAbsolutePath());
        PrintWriter out = spec.commandLine().getOut();
        RotaServer server;
        try {
            server = RotaServer.start(config, lab);
        } catch (MemberRefusedException e) {
            spec.commandLine().getErr().println("rota server " + name + " (id " + config.memberId()
                    + ") refused to run: " + e.getMessage());
            return RotaServer.EXIT_REFUSED;
        } catch (FlagException e) {   // a rule that needs the data dir to decide (a joining member's cluster id)
            spec.commandLine().getErr().println("rota server " + name + ": " + e.getMessage());
            return RotaServer.EXIT_USAGE;
        } catch (RuntimeException e) {
            spec.commandLine().getErr().println("rota server " + name + " failed to start: " + e.getMessage()
                    + (e.getCause() == null ? "" : " (" + e.getCause() + ")"));
            return RotaServer.EXIT_FAILED;
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Thread hook = new Thread(() -> {
            server.handOffLeadership();   // a leader hands over first: no election gap on a rolling restart
            server.close();
            stopped.countDown();
        }, "rota-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        // Both may complete (a refused member's node may fail-stop meanwhile): the first decides the status.
        AtomicInteger exit = new AtomicInteger();
        server.refused().thenAccept(reason -> {
            spec.commandLine().getErr().println("rota server " + config.name() + " (id " + config.memberId()
                    + ") refused to run: " + reason);
            spec.commandLine().getErr().flush();
            exit.compareAndSet(0, RotaServer.EXIT_REFUSED);   // restarted, it would be refused again
            stopped.countDown();
        });
        // A removed member would linger too, and the one with the highest id is never refused by a peer (only
        // lower ids dial): once it knows its removal committed, it says so and exits as a refused one does.
        server.removed().thenAccept(index -> {
            spec.commandLine().getErr().println("rota server " + config.name() + " (id " + config.memberId()
                    + ") was removed from the cluster (its removal committed by index " + index + "); exiting. "
                    + "Its id is never reused: to bring this machine back, empty its data dir and `rotactl member "
                    + "add` it as a new member");
            spec.commandLine().getErr().flush();
            exit.compareAndSet(0, RotaServer.EXIT_REFUSED);   // restarted, it would be refused
            stopped.countDown();
        });
        // A member whose Raft node stopped itself would linger: alive to a process check, useless to clients.
        // Exit instead, so systemd or Kubernetes restarts it from its fsync'd log and snapshot.
        server.failStopped().thenAccept(cause -> {
            spec.commandLine().getErr().println("rota server " + config.name() + " (id " + config.memberId()
                    + ") stopped: its Raft node failed with " + cause + "; exiting so a supervisor can restart it"
                    + (cause instanceof OutOfMemoryError
                    ? ". The heap was too small for this member's state: raise -Xmx (docs/operations.md, Large state:"
                    + " about three times the data stored)" : " (the cause is in the log above)"));
            spec.commandLine().getErr().flush();
            exit.compareAndSet(0, RotaServer.EXIT_FAILED);
            stopped.countDown();
        });
        PlaintextWarning.of(config).forEach(w -> spec.commandLine().getErr().println("WARNING: " + w));
        spec.commandLine().getErr().flush();
        out.printf("rota server %s (id %d) started%n", config.name(), config.memberId());
        out.printf("  data dir  %s%n", config.dataDir().toAbsolutePath());
        out.printf("  client    %s%s%s%n", ServerConfig.format(server.clientAddress()),
                advertised(config.advertisedClient(server.clientAddress().getPort()), server.clientAddress()),
                config.tls().certFile() == null ? ""
                        : config.tls().clientCertAuth() ? " (TLS, client certificates required)" : " (TLS)");
        out.printf("  peer      %s%s%s%n", ServerConfig.format(config.listenPeer()),
                advertised(ServerConfig.format(config.advertisedPeer()), config.listenPeer()),
                config.tls().peerCertFile() == null ? "" : " (mutual TLS)");
        out.printf("  http      %s%n", server.httpAddress() == null ? "off" : ServerConfig.format(server.httpAddress()));
        boolean etcdTls = config.tls().certFile() != null;   // the etcd port uses the client port's TLS files
        out.printf("  etcd      %s%n", server.etcdAddress() == null ? "off"
                : ServerConfig.format(server.etcdAddress()) + (etcdTls ? " (TLS, as the client port; etcd v3 API:"
                + " ETCDCTL_API=3 etcdctl --endpoints=https://" + ServerConfig.format(server.etcdAddress())
                + " --cacert CA --cert CERT --key KEY ...)" : " (etcd v3 API: ETCDCTL_API=3 etcdctl --endpoints="
                + ServerConfig.format(server.etcdAddress()) + " ...)"));
        if (lab != null) {
            out.printf("  LAB MODE  the dashboard can kill, pause, restart and partition members (%s)%n", lab.script());
        }
        out.printf("  cluster   %s (cluster id %s, heartbeat %d ms, election %d ms, state %s)%n", initialCluster,
                server.config().clusterId(), config.heartbeatMs(), config.electionMs(),
                config.initialClusterState().name().toLowerCase());
        out.flush();
        stopped.await();
        if (exit.get() != 0) {
            Runtime.getRuntime().removeShutdownHook(hook);
            try {
                server.close();
            } catch (Throwable t) {   // e.g. still out of memory: exit all the same
                spec.commandLine().getErr().println("rota server " + config.name() + ": while stopping: " + t);
            }
        }
        return exit.get();
    }

    /** " (advertised as NAME:PORT)" when the address others use is not the bound one, else nothing. */
    private static String advertised(String advertised, InetSocketAddress bound) {
        return advertised.equals(ServerConfig.format(bound)) ? "" : " (advertised as " + advertised + ")";
    }

    private ServerTls tls() {
        return ServerTls.builder().clientPort(certFile, keyFile).trustedCaFile(trustedCaFile)
                .clientCertAuth(clientCertAuth).peerPort(peerCertFile, peerKeyFile, peerTrustedCaFile)
                .provider(provider(tlsProvider)).cipherSuites(cipherSuites).tlsVersions(tlsMinVersion, tlsMaxVersion)
                .clientCrlFile(clientCrlFile).peerCrlFile(peerCrlFile)
                .clientCertAllowed(clientCertAllowedCn, clientCertAllowedHostname).peerCertAllowedCn(peerCertAllowedCn)
                .build();
    }

    private static io.rota.raft.transport.TlsProvider provider(String value) {
        if (value == null) {
            return ServerTls.DEFAULT_PROVIDER;
        }
        switch (value) {
            case "jdk":
                return io.rota.raft.transport.TlsProvider.JDK;
            case "openssl":
                return io.rota.raft.transport.TlsProvider.OPENSSL;
            default:
                throw new FlagException("--tls-provider", "--tls-provider must be jdk or openssl, got '" + value + "'");
        }
    }

    private HttpPolicy httpPolicy() {
        try {
            return new HttpPolicy(httpHostAllowlist, httpCorsOrigins, httpMaxConnections);
        } catch (IllegalArgumentException e) {
            throw new FlagException("--http-max-connections", e.getMessage());
        }
    }

    private static InetSocketAddress address(String flag, String value) {
        return address(flag, flag, value);
    }

    /**
     * Parses {@code host:port} with the cluster's one parser of the fact (issue 30); a refusal names
     * {@code flag}, and says {@code what} was wrong. Port 0 binds any free port.
     */
    private static InetSocketAddress address(String flag, String what, String value) {
        HostPort parsed;
        try {
            parsed = HostPort.parseBind(what, value);
        } catch (BadValueException e) {
            throw new FlagException(flag, e.getMessage());
        }
        return new InetSocketAddress(parsed.host(), parsed.port());
    }

    /**
     * A {@code host:port} that others dial (a peer in {@code --initial-cluster}, an advertised address), kept
     * unresolved: Netty looks the name up at each dial, so a member whose name moves to a new IP — a
     * rescheduled pod, a replaced host — is found again. A bind address ({@link #address}) resolves at once.
     */
    private static InetSocketAddress dialAddress(String flag, String what, String value) {
        try {
            return HostPort.parse(what, value).unresolved();
        } catch (BadValueException e) {
            throw new FlagException(flag, e.getMessage());
        }
    }

    private static ServerConfig.ClusterState clusterState(String value) {
        switch (value) {
            case "new":
                return ServerConfig.ClusterState.NEW;
            case "existing":
                return ServerConfig.ClusterState.EXISTING;
            default:
                throw new FlagException("--initial-cluster-state", "--initial-cluster-state must be new or existing,"
                        + " got '" + value + "'");
        }
    }

    /** Parses NAME=HOST:PORT or NAME=ID@HOST:PORT entries; explicit ids go into {@code ids}. */
    static Map<String, InetSocketAddress> cluster(String value, Map<String, Long> ids) {
        Map<String, InetSocketAddress> members = new LinkedHashMap<>();
        for (String item : value.split(",")) {
            int eq = item.indexOf('=');
            if (eq <= 0) {
                throw new FlagException("--initial-cluster",
                        "--initial-cluster entries must be name=host:port, got '" + item + "'");
            }
            String member = item.substring(0, eq).trim();
            String target = item.substring(eq + 1).trim();
            try {
                MemberName.check("--initial-cluster name", member);   // the name it publishes (issue 30)
            } catch (BadValueException e) {
                throw new FlagException("--initial-cluster", e.getMessage());
            }
            int at = target.indexOf('@');
            if (at >= 0) {
                long id;
                try {
                    id = Long.parseLong(target.substring(0, at));
                } catch (NumberFormatException e) {
                    id = -1;
                }
                if (id < 1) {
                    throw new FlagException("--initial-cluster", "--initial-cluster " + member
                            + " has an id that is not a number of 1 or more: '" + target + "' (NAME=ID@HOST:PORT)");
                }
                ids.put(member, id);
                target = target.substring(at + 1);
            }
            if (members.put(member, dialAddress("--initial-cluster", "--initial-cluster " + member, target)) != null) {
                throw new FlagException("--initial-cluster", "--initial-cluster names " + member + " twice");
            }
        }
        return members;
    }
}
