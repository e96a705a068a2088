package io.rota.server;

import io.rota.proto.CommandResult;
import io.rota.proto.Member;
import io.rota.proto.RegisteredMember;
import io.rota.raft.core.Configuration;
import io.rota.raft.core.Entry;
import io.rota.raft.node.Bootstrap;
import io.rota.raft.node.Clock;
import io.rota.raft.node.NodeConfig;
import io.rota.raft.node.NodeStatus;
import io.rota.raft.node.RaftDriver;
import io.rota.raft.storage.RocksDbLogStore;
import io.rota.raft.storage.StorageConfig;
import io.rota.raft.transport.NettyPeerTransport;
import io.rota.raft.transport.PeerIdentity;
import io.rota.raft.transport.TlsContexts;
import io.rota.raft.transport.TlsFiles;
import io.rota.server.api.ClientServer;
import io.rota.server.api.MemberPublisher;
import io.rota.server.api.ServerMetrics;
import io.rota.server.api.SnapshotStream;
import io.rota.server.cluster.ClusterView;
import io.rota.server.etcd.EtcdServer;
import io.rota.server.api.ForcedClusterRetirement;
import io.rota.server.cluster.FreshnessTrackingStore;
import io.rota.server.cluster.MemberIdentity;
import io.rota.server.cluster.MemberRefusedException;
import io.rota.server.cluster.PeerDirectory;
import io.rota.server.fault.FaultClock;
import io.rota.server.http.Dashboard;
import io.rota.server.http.HttpServer;
import io.rota.server.http.NodeReport;
import io.rota.server.kv.CoordinationStateMachine;
import io.rota.server.kv.Limits;
import io.rota.server.lab.LabController;
import io.rota.server.lab.LabMode;
import io.rota.server.lab.LabPartition;
import io.rota.server.maintenance.LeaseKeeper;
import io.rota.server.maintenance.AutoCompaction;
import io.rota.server.maintenance.TokenKeyKeeper;
import io.rota.server.maintenance.SpaceQuota;
import io.rota.server.watch.WatchHub;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.ScheduledExecutorService;

/**
 * One Rota member: wiring only. The hashicorp/raft shape — every part is built here, in one place:
 * <pre>
 *   clients ─► ClientServer ─► RequestRouter ─► RaftDriver ─► CoordinationStateMachine ─► WatchHub ─► clients
 *                                  │ (follower: Forwarder ─► leader's client port)
 *   timer: ClusterView (role pushed by the driver; status, members per tick) ─► MemberPublisher
 *          LeaseKeeper (role pushed by the driver; times leases while leading)
 *   HttpServer ─► NodeReport (/health, /status, /metrics), Dashboard (/, /dashboard/events; lab mode: /lab/...)
 * </pre>
 */
public final class RotaServer implements AutoCloseable {

    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(RotaServer.class);

    public static final String VERSION = "0.1.0";

    // rota server's exit statuses are a contract with supervisors: rota@.service and Kubernetes restart
    // EXIT_FAILED, systemd is told not to restart the other two (docs/operations.md, "Exit status"). A member
    // stopped by SIGTERM exits as any JVM does, 143 (128 + the signal), once its shutdown hook has run.
    /** Something failed (its Raft node fail-stopped, or the start: a port in use, a disk error): restart it. */
    static final int EXIT_FAILED = 1;
    /** A bad command line: restarting it with the same flags fails the same way. */
    static final int EXIT_USAGE = 2;
    /**
     * This member must not run: its peers refused it (its id was removed, or it is fresh under an id that joined)
     * or it refused its data dir (another member's or cluster's). Restarting it would only be refused again.
     */
    static final int EXIT_REFUSED = 3;
    /** How often the leader checkpoints remaining lease TTLs into the log. */
    static final Duration LEASE_CHECKPOINT_INTERVAL = Duration.ofMillis(500);

    private final ServerConfig config;
    private final RaftDriver<CommandResult> driver;
    private final ScheduledExecutorService timer;
    private final ClusterView view;
    private final LeaseKeeper leaseKeeper;
    private final WatchHub watchHub;
    private final ClientServer clientServer;
    private final HttpServer httpServer;
    /** The etcd front door (--listen-etcd), or null (the default). */
    private final EtcdServer etcdServer;
    /** Lab mode's controller, or null (the default). */
    private final LabController lab;
    private final PeerDirectory peerDirectory;
    /** Issue 18: backups served on the client port, the space quota and auto-compaction (null: off). */
    private final SnapshotStream snapshots;
    private final SpaceQuota quota;
    private final AutoCompaction autoCompaction;
    /** Issue 33: draws a token key on the leader of a cluster restored without one. */
    private final TokenKeyKeeper tokenKeys;

    /** TLS of the client port and the peer port (reloading their files), or null where plaintext. */
    private final TlsContexts clientTls;
    private final TlsContexts peerTls;

    private RotaServer(ServerConfig given, LabMode labMode) {
        // The data dir's recorded cluster id wins over the derived default (design MF9).
        ServerConfig config = given.withEffectiveClusterId(MemberIdentity.read(given.dataDir())
                .map(MemberIdentity::clusterId));
        this.config = config;
        long id = config.memberId();
        Limits limits = Limits.defaults();
        FaultClock faultClock = config.faultInjection() ? new FaultClock(Clock.SYSTEM) : null;
        Clock clock = faultClock != null ? faultClock : Clock.SYSTEM;
        watchHub = new WatchHub(id, this::term, limits.maxHistoryEvents() + 1024, 1_000);
        CoordinationStateMachine stateMachine = new CoordinationStateMachine(limits);
        stateMachine.setListener(watchHub);

        NodeConfig nodeConfig = config.nodeConfig();
        // Before the store opens: a directory of another member is refused, and an empty one is fresh.
        MemberIdentity opened = MemberIdentity.open(config.dataDir(), config.clusterId(), id,
                config.bootstrapCluster());
        RocksDbLogStore disk = RocksDbLogStore.open(StorageConfig.defaults(config.dataDir()));
        MemberIdentity identity;
        try {
            identity = prepareLog(config, disk, nodeConfig.raft().configuration(), opened);
        } catch (RuntimeException e) {
            disk.close();
            throw e;
        }
        // Loaded first: a certificate that cannot be used stops the start before anything is opened.
        TlsFiles peerFiles = config.tls().peerFiles();
        TlsFiles clientFiles = config.tls().clientFiles();
        peerTls = peerFiles == null ? null : TlsContexts.load(peerFiles, java.util.List.of(), false, "peer port");
        // The client context also dials the leader's client port (forwarded writes): it trusts the peer CA too.
        clientTls = clientFiles == null ? null : TlsContexts.load(clientFiles, peerFiles == null ? java.util.List.of()
                : java.util.List.of(peerFiles.trustedCaFile()), true, "client port");
        // The driver runs on the peer transport's one event loop (design.md P11), and client connections are
        // served on that loop too (design.md P15), unless the configuration's threads say otherwise (HS81).
        boolean driverOnLoop = config.threads().driverOnLoop();
        boolean clientsOnDriverLoop = config.threads().clientsOnDriverLoop();
        NettyPeerTransport transport = driverOnLoop
                ? NettyPeerTransport.withDriverLoop(config.transportConfig(), "raft-driver-" + id)
                : new NettyPeerTransport(config.transportConfig());
        peerDirectory = new PeerDirectory(id, identity, config.dataDir(), transport);
        transport.setAdmission(peerDirectory);
        Map<Long, String> initialNames = new HashMap<>();
        config.initialCluster().keySet().forEach(n -> initialNames.put(config.idOf(n), n));
        peerDirectory.setInitialNames(initialNames);
        if (peerTls != null) {
            transport.setTls(peerTls.startReloading(), PeerIdentity.byMemberName(peerDirectory::memberName));
        }
        if (clientTls != null) {
            clientTls.startReloading();
        }
        stateMachine.setRegistryListener(peerDirectory);
        // Lab mode only: a switch that can cut this member off from its peers (the dashboard's "partition").
        LabPartition partition = labMode == null ? null : new LabPartition(transport);
        // Built before the driver, which reports fsync latency, applied entries and role changes into it.
        ServerMetrics metrics = new ServerMetrics(clock);
        metrics.timeline.note("start", 0, config.name() + " started");
        FreshnessTrackingStore store = new FreshnessTrackingStore(disk);
        peerDirectory.setEmptyLog(store::emptyLog);
        driver = RaftDriver.builder(nodeConfig, store, partition != null ? partition : transport, stateMachine)
                .random(new SplittableRandom()).metrics(metrics).clock(clock)
                .execution(driverOnLoop ? RaftDriver.Execution.onTransportLoop(transport.driverLoop().orElseThrow())
                        : RaftDriver.Execution.ownThread())
                .start();
        lab = labMode == null ? null : new LabController(labMode.script(), labMode.clusterDir(), partition);

        timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "rota-timer-" + config.name());
            t.setDaemon(true);
            return t;
        });
        Duration tick = config.tick();
        view = new ClusterView(config.name(), driver, stateMachine::members, timer, tick);
        leaseKeeper = new LeaseKeeper(driver, stateMachine::leaseImages, timer, clock, LEASE_CHECKPOINT_INTERVAL,
                config.requestTimeout());
        stateMachine.setLeaseListener(leaseKeeper);
        watchHub.start(driver, stateMachine, timer, config.watchProgressInterval());
        ClientServer clients = null;
        EtcdServer etcd = null;
        try {
            clients = new ClientServer(config.clientSettings(VERSION), driver, stateMachine, view, watchHub, timer,
                    clock, metrics, clientTls, clientsOnDriverLoop ? transport.driverLoop().orElseThrow() : null,
                    config.limits());
            // Issue 33: tokens bound to this cluster's id, living --auth-token-ttl; hashes of --bcrypt-cost.
            clients.router().gate().configure(config.clusterId(), config.authTokenTtl(), config.bcryptCost(),
                    clock::wallMillis);
            etcd = config.listenEtcd() == null ? null : new EtcdServer(config.listenEtcd(),
                    config.clientSettings(VERSION).maxFrameBytes(), clients.router(), watchHub, view, config.clusterId(),
                    config.tls().clientFiles(), config.limits());
            Map<Long, String> names = new HashMap<>();
            config.initialCluster().keySet().forEach(n -> names.put(config.idOf(n), n));
            httpServer = config.http() == null ? null : new HttpServer(config.http(),
                    new NodeReport(config.name(), config.clusterId(), driver, stateMachine, view, metrics, watchHub, transport::stats),
                    faultClock, new Dashboard(config.name(), config.clusterId(), names, driver, stateMachine, view, metrics, lab),
                    clientTls, config.tls().clientCertAuth(), clients.router().gate(), config.httpPolicy(),
                    ownHosts(config));
        } catch (RuntimeException e) {
            if (clients != null) {
                clients.close();
            }
            if (etcd != null) {
                etcd.close();
            }
            timer.shutdownNow();
            driver.close();
            if (lab != null) {
                lab.close();
            }
            closeTls();
            throw e;
        }
        clientServer = clients;
        etcdServer = etcd;
        Member self = Member.newBuilder().setId(id).setName(config.name())
                .setClientAddress(config.advertisedClient(clientServer.localAddress().getPort()))
                .setPeerAddress(ServerConfig.format(config.advertisedPeer()))
                .setHttpAddress(httpServer == null ? "" : config.advertisedHttp(clientServer.localAddress().getPort(),
                        httpServer.localAddress().getPort()))
                .setEtcdAddress(etcdServer == null ? "" : config.advertisedEtcd(clientServer.localAddress().getPort(),
                        etcdServer.localAddress().getPort())).build();
        Map<Long, RegisteredMember> configured = new HashMap<>();
        config.peersById().forEach((memberId, address) -> configured.put(memberId, RegisteredMember.newBuilder()
                .setId(memberId).setName(initialNames.get(memberId))
                .setPeerAddress(ServerConfig.format(address)).build()));
        clientServer.router().knowFromConfiguration(config.clusterId(), configured);
        view.addListener(new MemberPublisher(view, clientServer.router(), self, clock, peerDirectory::recordJoined));
        if (config.forceNewCluster()) {
            Set<Long> oldMembers = Set.copyOf(config.peersById().keySet());
            view.addListener(new ForcedClusterRetirement(id, clientServer.router(), () -> driver.readLocal(() -> {
                Set<Long> ids = new TreeSet<>(oldMembers);
                stateMachine.registry().forEach(r -> ids.add(r.getId()));
                stateMachine.members().forEach(m -> ids.add(m.getId()));
                stateMachine.registry().stream().filter(RegisteredMember::getRemoved).forEach(r -> ids.remove(r.getId()));
                ids.remove(id);
                return ids;
            })));
        }
        leaseKeeper.start(tick);
        view.start();
        // Issue 18: backups, the space quota and auto-compaction.
        snapshots = new SnapshotStream(driver, stateMachine, view, config.clusterId(), VERSION, config.requestTimeout());
        clientServer.router().serveSnapshots(snapshots);
        MaintenanceConfig upkeep = config.maintenance();
        quota = new SpaceQuota(driver, stateMachine, upkeep.quotaBackendBytes(), id, timer, clock,
                config.requestTimeout());
        quota.start(tick);
        autoCompaction = switch (upkeep.autoCompactionMode()) {
            case NONE -> null;
            case PERIODIC -> new AutoCompaction(driver, stateMachine, upkeep.retentionPeriod(), 0, timer, clock,
                    config.requestTimeout());
            case REVISION -> new AutoCompaction(driver, stateMachine, null, upkeep.retentionRevisions(), timer, clock,
                    config.requestTimeout());
        };
        tokenKeys = new TokenKeyKeeper(driver, stateMachine, clientServer.router().gate(), timer, clock,
                config.requestTimeout());
        tokenKeys.start();
        if (autoCompaction != null) {
            autoCompaction.start();
        }
    }

    /**
     * What the log holds before the node starts (docs/design.md MF4, MF10): a member bootstrapping a new
     * cluster on an empty data dir writes the initial configuration as entry 1; with --force-new-cluster, the
     * member's data is made a cluster of one, and the index of that entry recorded in its identity. A second
     * start with the flag finds the data single-voter and changes nothing; once the new cluster has grown, the
     * flag left on is refused rather than forcing again (that would cut the new members out).
     *
     * @return the identity as it now stands
     */
    private static MemberIdentity prepareLog(ServerConfig config, RocksDbLogStore disk,
                                             Configuration initial, MemberIdentity identity) {
        if (!config.forceNewCluster()) {
            if (config.initialClusterState() == ServerConfig.ClusterState.NEW
                    && Bootstrap.writeInitialConfiguration(disk, initial)) {
                log.info("bootstrapped a new cluster: configuration {} written as log entry 1 (from now on the data"
                        + " dir, not --initial-cluster, says who the members are)", initial);
            }
            return identity;
        }
        Configuration inData = Bootstrap.configurationInData(disk.load()).orElse(initial);
        if (identity.forcedAt() > 0 && !inData.equals(Configuration.of(config.memberId()))) {
            throw new MemberRefusedException("--force-new-cluster was already applied to "
                    + config.dataDir() + " (entry " + identity.forcedAt() + "), and the new cluster has changed since"
                    + " (now " + inData + "): forcing again would cut its new members out. Remove --force-new-cluster"
                    + " (docs/operations.md, \"Two members are gone\")");
        }
        Optional<Entry> forced;
        try {
            forced = Bootstrap.forceSingleVoter(disk, config.memberId(), initial);
        } catch (IllegalStateException e) {
            throw new MemberRefusedException("--force-new-cluster needs this member's own"
                    + " data dir, and " + config.dataDir() + " holds no log or snapshot: " + e.getMessage(), e);
        }
        if (forced.isEmpty()) {
            log.warn("--force-new-cluster: {} (id {}) is already the sole voter of its data; nothing rewritten."
                    + " Remove the flag from the next start", config.name(), config.memberId());
            return identity;
        }
        MemberIdentity recorded = identity.forcedAt(forced.get().index());
        recorded.write(config.dataDir());
        log.warn("--force-new-cluster: {} (id {}) is now the SOLE VOTER of its data: configuration entry at index {}"
                + " in term {}. Every entry in this member's log will be committed, including any the old cluster"
                + " never committed; the other members are retired once this member leads. Remove"
                + " --force-new-cluster from the next start; add members with `rotactl member add --learner` and"
                + " promote them", config.name(), config.memberId(), forced.get().index(), forced.get().term());
        return recorded;
    }

    /** Start a member; it runs until {@link #close()}. */
    /**
     * The hosts this member listens on and advertises, wildcards left out: with the loopback names, the HTTP
     * port's default Host allowlist (design SD11).
     */
    private static List<String> ownHosts(ServerConfig config) {
        List<String> hosts = new ArrayList<>();
        for (InetSocketAddress a : Arrays.asList(config.http(), config.listenClient(), config.listenPeer(),
                config.listenEtcd(), config.advertiseClient(), config.advertisedPeer())) {
            if (a != null && !(a.getAddress() != null && a.getAddress().isAnyLocalAddress())) {
                hosts.add(a.getHostString());
            }
        }
        return hosts;
    }

    public static RotaServer start(ServerConfig config) {
        return new RotaServer(config, null);
    }

    /** Start a member of a local lab cluster (docs/dashboard.md); {@code labMode} null is {@link #start(ServerConfig)}. */
    public static RotaServer start(ServerConfig config, LabMode labMode) {
        PlaintextWarning.of(config).forEach(w -> log.warn(w));   // issue 33: say it loudly, before anything else
        return new RotaServer(config, labMode);
    }

    public ServerConfig config() {
        return config;
    }

    public InetSocketAddress clientAddress() {
        return clientServer.localAddress();
    }

    public InetSocketAddress httpAddress() {
        return httpServer == null ? null : httpServer.localAddress();
    }

    /** Where etcd clients connect, or null without --listen-etcd. */
    public InetSocketAddress etcdAddress() {
        return etcdServer == null ? null : etcdServer.localAddress();
    }

    public ClusterView view() {
        return view;
    }

    /** This member's Raft driver, for tests that read its log ({@link RaftDriver#logTail}). */
    RaftDriver<CommandResult> driver() {
        return driver;
    }

    /**
     * Completes with the reason if this member, started on an empty data directory, was refused by its peers
     * because the cluster knows its id (issue 13): it must stop, and the operator replace it instead.
     */
    public java.util.concurrent.CompletableFuture<String> refused() {
        return peerDirectory.fatal();
    }

    /**
     * Completes with the error when this member's Raft node stopped itself (storage failure, a state machine that
     * cannot apply or restore, out of memory): it serves nothing more, and the process should exit.
     */
    public java.util.concurrent.CompletableFuture<Throwable> failStopped() {
        return driver.failStopped();
    }

    /**
     * Completes with the commit index at which this member learnt that the cluster removed it for good: it
     * serves nothing more, and the process should say so and exit (issue 32, item 6).
     */
    public java.util.concurrent.CompletableFuture<Long> removed() {
        return driver.removed();
    }

    private long term() {
        return view == null ? 0 : view.term();
    }

    /**
     * Before a graceful stop (SIGTERM): if this member leads, hand leadership to the most caught-up voter
     * (§3.10 leadership transfer) and wait, at most one election timeout, until it no longer leads — so a
     * rolling restart has no election gap, only a transfer (docs/design.md M13). Returns the new leader's id,
     * or 0 if this member did not lead, no voter could take over, or the wait ran out.
     */
    public long handOffLeadership() {
        try {
            NodeStatus status = driver.status().get(config.electionMs(), TimeUnit.MILLISECONDS);
            if (status.role() != io.rota.raft.core.Role.LEADER) {
                return 0;
            }
            long target = 0;
            long best = -1;
            for (Map.Entry<Long, io.rota.raft.core.RaftNode.ProgressView> e : status.progress().entrySet()) {
                if (e.getKey() != status.id() && status.configuration().isVoter(e.getKey())
                        && e.getValue().matchIndex() > best) {
                    best = e.getValue().matchIndex();
                    target = e.getKey();
                }
            }
            if (target == 0 || !driver.transferLeadership(target).get(config.electionMs(), TimeUnit.MILLISECONDS)) {
                return 0;
            }
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(config.electionMs());
            while (System.nanoTime() - deadline < 0) {
                if (driver.status().get(config.electionMs(), TimeUnit.MILLISECONDS).role()
                        != io.rota.raft.core.Role.LEADER) {
                    log.info("{} handed leadership to member {} before stopping", config.name(), target);
                    return target;
                }
                Thread.sleep(5);
            }
            log.warn("{} asked member {} to take over, but still led after {} ms; stopping anyway", config.name(),
                    target, config.electionMs());
        } catch (ExecutionException | TimeoutException e) {
            log.warn("{} could not hand off leadership before stopping: {}", config.name(), e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return 0;
    }

    /** Graceful stop: client and HTTP ports first, then the timers, then Raft (transport and store). */
    @Override
    public void close() {
        if (httpServer != null) {
            httpServer.close();
        }
        if (etcdServer != null) {
            etcdServer.close();
        }
        if (lab != null) {
            lab.close();
        }
        clientServer.close();
        snapshots.close();
        quota.close();
        tokenKeys.close();
        if (autoCompaction != null) {
            autoCompaction.close();
        }
        view.close();
        leaseKeeper.close();
        watchHub.close();
        timer.shutdownNow();
        driver.close();
        closeTls();
    }

    private void closeTls() {
        if (clientTls != null) {
            clientTls.close();
        }
        if (peerTls != null) {
            peerTls.close();
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Command line
    // ---------------------------------------------------------------------------------------------

    public static void main(String[] args) {
        System.exit(run(args, new PrintWriter(System.out, true), new PrintWriter(System.err, true)));
    }

    /**
     * Parse and run; returns the exit status: 0 when the command did what it was asked (a snapshot command,
     * {@code --help}); {@value #EXIT_FAILED} when it failed — for {@code rota server}, something a supervisor
     * should restart the member for (its Raft node fail-stopped, or it could not start: a port in use, a disk
     * error); {@value #EXIT_USAGE} for a bad command line (one line on {@code err} saying what is wrong and how
     * to fix it); {@value #EXIT_REFUSED} when the member must not be restarted (refused by its peers, or refusing
     * its data dir), with the reason and what to do on {@code err}. A member stopped by SIGTERM does not return:
     * the JVM exits with 143 after the shutdown hook.
     */
    static int run(String[] args, PrintWriter out, PrintWriter err) {
        CommandLine cli = new CommandLine(new Rota()).setOut(out).setErr(err);
        cli.setParameterExceptionHandler((e, a) -> {
            e.getCommandLine().getErr().println("rota: " + e.getMessage() + " (see: " + e.getCommandLine().getCommandSpec()
                    .qualifiedName() + " --help)");
            return EXIT_USAGE;
        });
        return cli.execute(args);
    }

    @CommandLine.Command(name = "rota", mixinStandardHelpOptions = true, version = "rota " + VERSION,
            subcommands = {ServerCommand.class, SnapshotCommand.class}, description = "Rota, a Raft coordination service.")
    static final class Rota implements Runnable {
        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public void run() {
            throw new CommandLine.ParameterException(spec.commandLine(), "missing command: try 'rota server'");
        }
    }
}
