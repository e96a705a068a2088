package io.rota.raft.node;

import io.rota.raft.core.Configuration;
import io.rota.raft.core.RaftOptions;
import io.rota.raft.core.Role;
import io.rota.raft.core.StateMachine;
import io.rota.raft.storage.LogStore;
import io.rota.raft.storage.MemoryLogStore;
import io.rota.raft.storage.RocksDbLogStore;
import io.rota.raft.storage.StorageConfig;
import io.rota.raft.transport.NettyPeerTransport;
import io.rota.raft.transport.TransportConfig;
import io.rota.testkit.Await;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;

/**
 * A cluster of real nodes in one JVM: each with its own RocksDB directory, its own Netty transport on
 * 127.0.0.1 (ephemeral ports, kept across restarts) and its own driver thread. Or, {@link #inMemory}, the
 * same drivers on {@link MemoryLogStore}s and a {@link MemoryNetwork}: for tests of the driver itself,
 * where disks and sockets would only add time.
 */
final class LocalCluster implements AutoCloseable {

    static final Duration TIMEOUT = Duration.ofSeconds(30);

    private final Path root;
    private final int size;
    private final String clusterId;
    private final UnaryOperator<NodeConfig> tweak;
    private final Configuration configuration;
    private final Map<Long, InetSocketAddress> addresses = new HashMap<>();
    private final Map<Long, RaftDriver<Long>> drivers = new HashMap<>();
    private final Map<Long, StateMachine<Long>> machines = new HashMap<>();
    private final Supplier<StateMachine<Long>> machineFactory;
    private final Map<Long, TransportConfig> transports = new HashMap<>();
    /** Real mode: each node's current transport, for its per-peer counters. */
    private final Map<Long, NettyPeerTransport> peerTransports = new java.util.concurrent.ConcurrentHashMap<>();
    /** In-memory mode: the network and each node's disk, which outlives its driver. Null otherwise. */
    private final MemoryNetwork network;
    private final Map<Long, MemoryLogStore> disks = new HashMap<>();
    private int starts;
    /** Real mode: each driver runs on its peer transport's event loop (design.md P11) rather than a thread. */
    private final boolean onDriverLoops;
    /** Real mode: wraps each node's RocksDB store (id, store), e.g. to hold a persist; identity by default. */
    private final BiFunction<Long, LogStore, LogStore> storeWrapper;
    /** Real mode: changes each node's transport configuration (e.g. small snapshot chunks); identity by default. */
    private final UnaryOperator<TransportConfig.Builder> transportTweak;

    LocalCluster(Path root, int size, UnaryOperator<NodeConfig> tweak) {
        this(root, size, tweak, ListStateMachine::new);
    }

    LocalCluster(Path root, int size, UnaryOperator<NodeConfig> tweak, Supplier<StateMachine<Long>> machineFactory) {
        this(root, null, size, tweak, machineFactory, false, (id, store) -> store, b -> b);
    }

    /** Real stores and sockets, each transport's configuration changed by {@code transportTweak}. */
    static LocalCluster withTransport(Path root, int size, UnaryOperator<NodeConfig> tweak,
                                      UnaryOperator<TransportConfig.Builder> transportTweak) {
        return new LocalCluster(root, null, size, tweak, ListStateMachine::new, false, (id, store) -> store,
                transportTweak);
    }

    /**
     * Real stores and sockets, each driver on its transport's event loop ({@code RaftDriver.Execution.onTransportLoop},
     * design.md P11), each store passed through {@code storeWrapper} first.
     */
    static LocalCluster onDriverLoops(Path root, int size, UnaryOperator<NodeConfig> tweak,
                                      BiFunction<Long, LogStore, LogStore> storeWrapper) {
        return new LocalCluster(root, null, size, tweak, ListStateMachine::new, true, storeWrapper, b -> b);
    }

    /** Nodes on in-memory disks and an in-memory network, each still on its own driver threads. */
    static LocalCluster inMemory(int size, UnaryOperator<NodeConfig> tweak,
                                 Supplier<StateMachine<Long>> machineFactory) {
        return new LocalCluster(null, new MemoryNetwork(), size, tweak, machineFactory, false, (id, store) -> store,
                b -> b);
    }

    private LocalCluster(Path root, MemoryNetwork network, int size, UnaryOperator<NodeConfig> tweak,
                         Supplier<StateMachine<Long>> machineFactory, boolean onDriverLoops,
                         BiFunction<Long, LogStore, LogStore> storeWrapper,
                         UnaryOperator<TransportConfig.Builder> transportTweak) {
        this.root = root;
        this.transportTweak = transportTweak;
        this.onDriverLoops = onDriverLoops;
        this.storeWrapper = storeWrapper;
        this.network = network;
        this.machineFactory = machineFactory;
        this.size = size;
        this.clusterId = root == null ? "test-memory" : "test-" + root.getFileName();
        this.tweak = tweak;
        Set<Long> voters = new HashSet<>();
        for (long id = 1; id <= size; id++) {
            voters.add(id);
        }
        this.configuration = new Configuration(voters);
        for (long id = 1; id <= size; id++) {
            start(id);
        }
    }

    /** Start (or restart) node {@code id} from its data directory, on its old port if it had one. */
    void start(long id) {
        NodeConfig config = tweak.apply(NodeConfig.builder(RaftOptions.defaults(id, configuration))
                .tick(Duration.ofMillis(20)).build());
        StateMachine<Long> machine = machineFactory.get();
        if (network != null) {
            LogStore disk = disks.computeIfAbsent(id, k -> new MemoryLogStore());
            drivers.put(id, RaftDriver.builder(config, disk, network.port(id), machine)
                    .random(new SplittableRandom(id * 31 + starts++)).start());
            machines.put(id, machine);
            return;
        }
        InetSocketAddress listen = addresses.getOrDefault(id, new InetSocketAddress("127.0.0.1", 0));
        TransportConfig tc = transportTweak.apply(TransportConfig.builder(clusterId, id, listen)
                .reconnectBackoff(Duration.ofMillis(20), Duration.ofMillis(200))
                .snapshotDirectory(StorageConfig.defaults(dataDir(id)).snapshotDir())).build();
        addresses.forEach((peer, address) -> {
            if (peer != id) {
                tc.peers().put(peer, address);
            }
        });
        LogStore store = storeWrapper.apply(id, RocksDbLogStore.open(StorageConfig.defaults(dataDir(id))));
        NettyPeerTransport transport = onDriverLoops
                ? NettyPeerTransport.withDriverLoop(tc, "raft-driver-" + id) : new NettyPeerTransport(tc);
        peerTransports.put(id, transport);
        RaftDriver<Long> driver = RaftDriver.builder(config, store, transport, machine)
                .random(new SplittableRandom(id * 31 + starts++))
                .execution(onDriverLoops ? RaftDriver.Execution.onTransportLoop(transport.driverLoop().orElseThrow())
                        : RaftDriver.Execution.ownThread())
                .start();
        InetSocketAddress bound = transport.localAddress();
        if (!bound.equals(addresses.get(id))) {
            addresses.put(id, bound);
            transports.forEach((peer, other) -> {
                if (peer != id) {
                    other.peers().put(id, bound);
                }
            });
        }
        transports.put(id, tc);
        drivers.put(id, driver);
        machines.put(id, machine);
    }

    /** Stop node {@code id} abruptly: whatever it had not fsync'd is gone, as after kill -9. */
    void kill(long id) {
        RaftDriver<Long> d = drivers.remove(id);
        if (d != null) {
            d.close();
        }
    }

    /** Delete node {@code id}'s data directory (it must be stopped). */
    void wipe(long id) {
        try (Stream<Path> files = Files.walk(dataDir(id))) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    Path dataDir(long id) {
        return root.resolve("n" + id);
    }

    RaftDriver<Long> node(long id) {
        return drivers.get(id);
    }

    /** Node {@code id}'s state machine, as its factory made it; touch it only through {@link RaftDriver#read}. */
    StateMachine<Long> machine(long id) {
        return machines.get(id);
    }

    /** Real mode: node {@code id}'s counters for its peer {@code peer}. */
    io.rota.raft.transport.PeerStats peerStats(long id, long peer) {
        return peerTransports.get(id).stats().get(peer);
    }

    NodeStatus status(long id) {
        return drivers.get(id).status().orTimeout(5, TimeUnit.SECONDS).join();
    }

    /** Wait until one live node leads and every live node follows it; return its id. */
    long awaitLeader() {
        long[] leader = new long[1];
        Await.until(TIMEOUT, () -> {
            long found = 0;
            long term = -1;
            for (long id : drivers.keySet()) {
                NodeStatus s = status(id);
                if (s.role() == Role.LEADER && s.term() > term) {
                    found = id;
                    term = s.term();
                }
            }
            if (found == 0) {
                return false;
            }
            for (long id : drivers.keySet()) {
                NodeStatus s = status(id);
                if (s.term() != term || s.leaderId() != found) {
                    return false;
                }
            }
            leader[0] = found;
            return true;
        }, "a leader that every live node follows");
        return leader[0];
    }

    /** Propose at the current leader, retrying on NOT_LEADER/UNAVAILABLE; returns the result. */
    long write(String command) {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (true) {
            long leader = awaitLeader();
            try {
                return drivers.get(leader).propose(command.getBytes(StandardCharsets.UTF_8), Duration.ofSeconds(5))
                        .join();
            } catch (RuntimeException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
            }
        }
    }

    /** The commands node {@code id} has applied, read linearizably through that node. */
    List<String> commands(long id) {
        ListStateMachine m = (ListStateMachine) machines.get(id);
        CompletableFuture<List<String>> f = drivers.get(id).read(m::commands, Duration.ofSeconds(5));
        return f.join();
    }

    /** The commands node {@code id} has applied so far (a serializable read: no ReadIndex). */
    List<String> localCommands(long id) {
        ListStateMachine m = (ListStateMachine) machines.get(id);
        return drivers.get(id).readLocal(m::commands).orTimeout(5, TimeUnit.SECONDS).join();
    }

    /** Every live node's status and applied count, for failure messages. */
    String describe() {
        StringBuilder sb = new StringBuilder();
        for (long id : drivers.keySet()) {
            sb.append("\n  ").append(status(id)).append(" commands=").append(localCommands(id).size());
        }
        return sb.toString();
    }

    Set<Long> live() {
        return Set.copyOf(drivers.keySet());
    }

    int size() {
        return size;
    }

    @Override
    public void close() {
        for (long id : List.copyOf(drivers.keySet())) {
            kill(id);
        }
    }
}
