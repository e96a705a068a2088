package io.rota.server.sim;

import io.rota.proto.CommandResult;
import io.rota.proto.Member;
import io.rota.raft.core.Configuration;
import io.rota.raft.core.Entry;
import io.rota.raft.core.Message;
import io.rota.raft.core.RaftOptions;
import io.rota.raft.core.StateMachine;
import io.rota.raft.node.NodeConfig;
import io.rota.raft.node.RaftDriver;
import io.rota.raft.storage.MemoryLogStore;
import io.rota.raft.transport.NettyPeerTransport;
import io.rota.raft.transport.PeerTransport;
import io.rota.raft.transport.TransportConfig;
import io.rota.server.api.ClientServer;
import io.rota.server.api.MemberPublisher;
import io.rota.server.api.RequestRouter;
import io.rota.server.api.ServerMetrics;
import io.rota.server.cluster.ClusterView;
import io.rota.server.cluster.MemberIdentity;
import io.rota.server.cluster.PeerDirectory;
import io.rota.server.kv.CoordinationStateMachine;
import io.rota.server.kv.Limits;
import io.rota.server.maintenance.LeaseKeeper;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import java.util.function.LongConsumer;

/**
 * One Rota member inside the simulation, wired as {@code RotaServer} wires a real one — the real
 * {@link RaftDriver}, {@link CoordinationStateMachine}, {@link LeaseKeeper}, {@link ClusterView},
 * {@link RequestRouter}, {@link MemberPublisher} and {@link PeerDirectory} — except that its disk is a
 * {@link MemoryLogStore} that survives crashes, its network is the {@link ServerWorld}'s, and its clock and
 * executor are its own {@link SimClock} and {@link SimScheduler}. Its hardware clock outlives a crash;
 * everything else is rebuilt from the disk on restart.
 *
 * <p>The peer directory is the server's own, fed the replicated member tables by apply exactly as in
 * {@code RotaServer}, so every registered or published peer address is parsed by the production code; its
 * transport is a real {@link NettyPeerTransport} that is never started (its peer table takes the addresses,
 * no event loop or socket exists), and its identity says "joined" so it never writes an identity file.
 */
final class SimMember {

    static final Duration TICK = Duration.ofMillis(100);
    static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(5);
    static final Duration CHECKPOINT_INTERVAL = Duration.ofMillis(500);

    final int index;
    final long id;
    final SimClock clock;
    /** Election timeout in ticks; members may be started with different flags (issue 11, hole 3). */
    final int electionTicks;
    private final ServerWorld world;
    private final MemoryLogStore disk = new MemoryLogStore();
    private final long seed;

    int incarnation;
    boolean alive;
    SimScheduler scheduler;
    CoordinationStateMachine stateMachine;
    RaftDriver<CommandResult> driver;
    ClusterView view;
    RequestRouter router;
    PeerDirectory peerDirectory;
    /** In the apply sweep: the entry being applied (still set if its apply threw). */
    Entry applying;
    private Consumer<Message> inbound;
    private LongConsumer peerDown;

    SimMember(ServerWorld world, int index, SimClock clock, int electionTicks, long seed) {
        this.world = world;
        this.index = index;
        this.id = index + 1L;
        this.clock = clock;
        this.electionTicks = electionTicks;
        this.seed = seed;
    }

    String address() {
        return "sim:" + id;
    }

    long minLeaseTtlSeconds() {
        return (electionTicks * TICK.toMillis() * 3 / 2 + 999) / 1000;
    }

    void start(Configuration configuration, Map<Long, String> addresses) {
        incarnation++;
        alive = true;
        scheduler = new SimScheduler(world.loop, clock);
        stateMachine = new CoordinationStateMachine(Limits.defaults());
        peerDirectory = new PeerDirectory(id, new MemberIdentity("sim", id, true), Path.of("sim-n" + id),
                new NettyPeerTransport(TransportConfig.builder("sim", id, new InetSocketAddress(0)).build()));
        stateMachine.setRegistryListener(world.watchedRegistryListener(this, peerDirectory));
        NodeConfig config = NodeConfig.builder(RaftOptions.builder(id, configuration)
                        .electionTicks(electionTicks).heartbeatTicks(1).build())
                .tick(TICK).snapshotCount(300).memberAddresses(addresses).build();
        // Snapshots are persisted by tasks on the member's own scheduler: a crash drops one in flight, a pause
        // holds it, and each runs between two driver turns, as the real snapshot thread may.
        driver = RaftDriver.builder(config, disk, new Transport(), new Observed(stateMachine))
                .random(new SplittableRandom(seed * 31 + incarnation)).clock(clock)
                .execution(RaftDriver.Execution.onScheduler(scheduler, scheduler)).start();
        view = new ClusterView("n" + id, driver, stateMachine::members, scheduler, TICK);
        LeaseKeeper keeper = new LeaseKeeper(driver, stateMachine::leaseImages, scheduler, clock, CHECKPOINT_INTERVAL,
                REQUEST_TIMEOUT);
        stateMachine.setLeaseListener(world.watchedLeaseListener(this, keeper));
        ClientServer.Settings settings = ClientServer.Settings.builder(new InetSocketAddress(0)).maxFrameBytes(1 << 20)
                .requestTimeout(REQUEST_TIMEOUT).retryInterval(TICK)
                .readAttemptTimeout(TICK.multipliedBy(electionTicks * 2L)).minLeaseTtlSeconds(minLeaseTtlSeconds())
                .version("sim").build();
        router = new RequestRouter(driver, stateMachine, view, world.forwarder(this), scheduler, clock,
                new ServerMetrics(), settings);
        Member self = Member.newBuilder().setId(id).setName("n" + id).setClientAddress(address())
                .setPeerAddress(address()).build();
        view.addListener(new MemberPublisher(view, router, self, clock));
        keeper.start(TICK);
        view.start();
    }

    /** The entry whose apply threw, if one did (apply sweep), for a failure's message. */
    String applyingDescription() {
        if (applying == null) {
            return "";
        }
        String what;
        try {
            what = io.rota.proto.Command.parseFrom(applying.data()).toString().replace('\n', ' ');
        } catch (com.google.protobuf.InvalidProtocolBufferException e) {
            what = "bytes that are not a command (" + applying.data().length + " bytes)";
        }
        return "\n  while applying index " + applying.index() + ": "
                + (what.length() > 400 ? what.substring(0, 400) + "..." : what);
    }

    /** kill -9: nothing more runs, nothing in memory survives; the disk does. */
    void crash() {
        alive = false;
        scheduler.shutdownNow();
    }

    /** Handed a peer message by the network (runs on this member's scheduler). */
    void deliver(Message m) {
        if (alive && inbound != null) {
            inbound.accept(m);
        }
    }

    void reportPeerDown(long peer) {
        if (alive && peerDown != null) {
            peerDown.accept(peer);
        }
    }

    /** The port to the simulated network. */
    private final class Transport implements PeerTransport {
        private final int myIncarnation = incarnation;

        @Override
        public void start(Consumer<Message> in, LongConsumer down) {
            inbound = in;
            peerDown = down;
        }

        @Override
        public InetSocketAddress localAddress() {
            return new InetSocketAddress(0);
        }

        @Override
        public boolean send(Message message) {
            if (alive && incarnation == myIncarnation) {
                world.sendPeer(SimMember.this, message);
            }
            return true;
        }

        @Override
        public Set<Long> connectedPeers() {
            return Set.of();
        }

        @Override
        public void close() {
        }
    }

    /** The state machine, with every applied entry shown to the world's invariants. */
    private final class Observed implements StateMachine<CommandResult> {
        private final CoordinationStateMachine inner;

        Observed(CoordinationStateMachine inner) {
            this.inner = inner;
        }

        @Override
        public List<CommandResult> apply(List<Entry> committed) {
            List<CommandResult> results;
            if (!world.applySweep) {
                results = inner.apply(committed);
            } else {
                // One entry at a time, to compare whole states at the same index across members.
                results = new ArrayList<>(committed.size());
                for (Entry e : committed) {
                    applying = e;
                    results.addAll(inner.apply(List.of(e)));
                    applying = null;
                    if (e.index() % ServerWorld.STATE_EVERY == 0) {
                        // The image message's hash: memoized in its keys and events, which the store shares
                        // between images, so this costs a pass over references, not over the bytes.
                        world.observeState(SimMember.this, e.index(), inner.image());
                    }
                }
            }
            world.observeApplied(SimMember.this, committed, results);
            return results;
        }

        @Override
        public Capture capture() {
            return inner.capture();
        }

        @Override
        public void restore(java.io.InputStream snapshot) throws java.io.IOException {
            inner.restore(snapshot);
        }
    }
}
