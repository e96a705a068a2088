package io.rota.raft.core;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.function.BooleanSupplier;
import java.util.function.LongFunction;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;
import java.util.stream.LongStream;

/**
 * A deterministic, single-threaded cluster for tests, in the spirit of etcd-io/raft's {@code network}.
 *
 * <p>It plays the runtime of every node: it takes each {@link Ready}, "persists" it into a simulated
 * disk ({@link Disk}), puts its messages into an {@link #outbox()}, applies committed entries to a tiny
 * state machine (a map index → command) and calls {@code advance}. {@link #drain()} repeats this and
 * delivers messages until nothing moves. Time only passes when a test calls {@link #tick}.
 *
 * <p>Every apply is checked against State Machine Safety (Figure 3): if two nodes ever apply different
 * entries at the same index, the test fails at once.
 *
 * <p>Faults: {@link #drop} message filters (links are filters too, see {@link #cut}/{@link #isolate}),
 * {@link #crash} (in-memory state is lost) and {@link #restart} (a new node from its disk).
 */
final class Network {

    /** One server: its disk survives a crash; the node and its state machine (index → command) do not. */
    private static final class Server {
        /** What the node has on disk: exactly what its Readies asked to persist. */
        final MemoryStorage disk;
        RaftNode node;
        TreeMap<Long, String> stateMachine;
        List<Entry> applied;
        List<ReadState> readStates;
        /** What the node reported in its Readies since it (re)started ({@link Ready#events()}). */
        List<RaftEvent> events;

        Server(MemoryStorage disk) {
            this.disk = disk;
        }
    }

    private final UnaryOperator<RaftOptions.Builder> tweak;
    private final Configuration configuration;
    private final Map<Long, Server> servers = new TreeMap<>();
    private final List<Predicate<Message>> drops = new ArrayList<>();
    private final List<Message> outbox = new ArrayList<>();
    private final List<Message> sent = new ArrayList<>();
    /** Every entry any state machine applied, by index: checks State Machine Safety on each apply. */
    private final Map<Long, Entry> appliedAnywhere = new HashMap<>();
    private int restarts;

    /** A cluster of nodes 1..size with default options and empty disks. */
    Network(int size) {
        this(size, o -> o);
    }

    /** {@code tweak} adjusts every node's options, e.g. {@code o -> o.preVote(false)}. */
    Network(int size, UnaryOperator<RaftOptions.Builder> tweak) {
        this(size, tweak, id -> PersistentState.EMPTY);
    }

    /** Nodes that start from the given disks (see {@link #disk(long, long, long...)}). */
    Network(int size, UnaryOperator<RaftOptions.Builder> tweak, LongFunction<PersistentState> initialDisk) {
        this(size, 0, tweak, initialDisk);
    }

    /**
     * Voters 1..size, and {@code spares} more servers (size+1, ...) that run from the start with the same
     * bootstrap configuration but outside it, ready to be added by a membership change (§4).
     */
    Network(int size, int spares, UnaryOperator<RaftOptions.Builder> tweak) {
        this(size, spares, tweak, id -> PersistentState.EMPTY);
    }

    private Network(int size, int spares, UnaryOperator<RaftOptions.Builder> tweak,
                    LongFunction<PersistentState> initialDisk) {
        this.tweak = tweak;
        this.configuration = Configuration.of(LongStream.rangeClosed(1, size).boxed().toArray(Long[]::new));
        for (long id = 1; id <= size + spares; id++) {
            servers.put(id, new Server(new MemoryStorage(initialDisk.apply(id))));
            start(id);
        }
    }

    /** A disk holding {@code currentTerm}, {@code commitIndex} and one entry per given term (index 1, 2, ...). */
    static PersistentState disk(long currentTerm, long commitIndex, long... entryTerms) {
        List<Entry> log = new ArrayList<>();
        for (int i = 0; i < entryTerms.length; i++) {
            log.add(Entry.command(i + 1, entryTerms[i], bytes("e" + (i + 1))));
        }
        return new PersistentState(new HardState(currentTerm, RaftNode.NONE, commitIndex), null, 0, 0, log);
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    RaftOptions options(long id) {
        return tweak.apply(RaftOptions.builder(id, configuration)).build();
    }

    private void start(long id) {
        Server s = servers.get(id);
        PersistentState onDisk = s.disk.load();
        s.node = new RaftNode(options(id), onDisk, new SplittableRandom(31L * id + restarts));
        s.stateMachine = onDisk.snapshot() == null ? new TreeMap<>() : decode(((SnapshotBytes) onDisk.snapshot().data()).bytes());
        s.applied = new ArrayList<>();
        s.readStates = new ArrayList<>();
        s.events = new ArrayList<>();
    }

    // ------------------------------------------------------------------ access

    RaftNode node(long id) {
        RaftNode n = servers.get(id).node;
        if (n == null) {
            throw new IllegalStateException("node " + id + " is crashed");
        }
        return n;
    }

    /** What node {@code id} has on disk. */
    PersistentState disk(long id) {
        return servers.get(id).disk.load();
    }

    /** Entries this node's state machine applied since it (re)started, in order. */
    List<Entry> applied(long id) {
        return servers.get(id).applied;
    }

    /** The commands in this node's state machine, in log order (survives snapshots). */
    List<String> stateMachine(long id) {
        return List.copyOf(servers.get(id).stateMachine.values());
    }

    List<ReadState> readStates(long id) {
        return servers.get(id).readStates;
    }

    /** Events node {@code id} reported since it (re)started, in order. */
    List<RaftEvent> events(long id) {
        return servers.get(id).events;
    }

    /** Messages sent and not yet delivered; tests may inspect, remove or reorder them. */
    List<Message> outbox() {
        return outbox;
    }

    /** Every message any node sent so far (delivered or not), for counting. */
    List<Message> sent() {
        return sent;
    }

    long sentCount(Class<? extends Message> type, long to) {
        return sent.stream().filter(m -> type.isInstance(m) && m.to() == to).count();
    }

    /**
     * Entries as "index@term" strings, for assertions: {@link Entry} is a record holding a byte[], so its
     * equals() compares the arrays by identity.
     */
    static List<String> ids(List<Entry> entries) {
        return entries.stream().map(e -> e.index() + "@" + e.term()).toList();
    }

    /** The messages of the given type, in order. */
    static <T extends Message> List<T> ofType(List<Message> messages, Class<T> type) {
        return messages.stream().filter(type::isInstance).map(type::cast).toList();
    }

    /** The running (not crashed) nodes. */
    List<RaftNode> live() {
        return servers.values().stream().filter(s -> s.node != null).map(s -> s.node).toList();
    }

    /** The live leader with the highest term, or NONE. */
    long leader() {
        return live().stream().filter(n -> n.role() == Role.LEADER)
                .max((a, b) -> Long.compare(a.currentTerm(), b.currentTerm())).map(RaftNode::id).orElse(RaftNode.NONE);
    }

    // ------------------------------------------------------------------ the runtime loop

    /** Carry out one Ready of {@code id} (persist, send to the outbox, apply, advance); null if none. */
    Ready handleReady(long id) {
        RaftNode n = node(id);
        if (!n.hasReady()) {
            return null;
        }
        Ready r = n.ready();
        servers.get(id).disk.persist(r);
        outbox.addAll(r.allMessages());
        sent.addAll(r.allMessages());
        apply(id, r);
        n.advance(r);
        return r;
    }

    /** Handle Readies of all live nodes until none has one. */
    void handleReadies() {
        for (RaftNode n : live()) {
            long id = n.id();
            int guard = 0;
            while (handleReady(id) != null) {
                if (++guard > 100) {
                    throw new AssertionError("node " + id + " keeps producing Readies");
                }
            }
        }
    }

    /** Handle the Readies of {@code id} but keep its messages out of the network: return them instead. */
    List<Message> collect(long id) {
        int before = outbox.size();
        while (handleReady(id) != null) {
            // all of them
        }
        List<Message> mine = new ArrayList<>(outbox.subList(before, outbox.size()));
        outbox.subList(before, outbox.size()).clear();
        return mine;
    }

    /** Deliver one message now, unless a filter drops it or its target is crashed. */
    void deliver(Message m) {
        RaftNode target = servers.containsKey(m.to()) ? servers.get(m.to()).node : null;
        if (target != null && drops.stream().noneMatch(d -> d.test(m))) {
            target.step(m);
        }
    }

    /** Handle Readies and deliver messages (FIFO) until quiescent; fails if that never happens. */
    void drain() {
        for (int round = 0; round < 1000; round++) {
            handleReadies();
            if (outbox.isEmpty()) {
                return;
            }
            List<Message> batch = new ArrayList<>(outbox);
            outbox.clear();
            batch.forEach(this::deliver);
        }
        throw new AssertionError("the network did not quiesce in 1000 rounds; outbox: " + outbox);
    }

    private void apply(long id, Ready r) {
        Server s = servers.get(id);
        if (r.snapshot() != null) {
            s.stateMachine = decode(((SnapshotBytes) r.snapshot().data()).bytes());
        }
        for (Entry e : r.committedEntries()) {
            Entry other = appliedAnywhere.putIfAbsent(e.index(), e);
            if (other != null && (other.term() != e.term() || !Arrays.equals(other.data(), e.data()))) {
                throw new AssertionError("State Machine Safety violated: index " + e.index() + " applied as "
                        + other + " and as " + e + " (node " + id + ")");
            }
            if (e.type() == Entry.Type.COMMAND) {
                s.stateMachine.put(e.index(), new String(e.data(), StandardCharsets.UTF_8));
            }
        }
        s.applied.addAll(r.committedEntries());
        s.readStates.addAll(r.readStates());
        s.events.addAll(r.events());
    }

    // ------------------------------------------------------------------ time and clients

    void tick(long id) {
        node(id).tick();
    }

    /** Tick every live node once (no drain). */
    void tickAll() {
        live().forEach(RaftNode::tick);
    }

    /** Tick every live node once, then drain; repeat until {@code done} holds (at most {@code maxTicks}). */
    void tickUntil(BooleanSupplier done, int maxTicks) {
        for (int i = 0; i < maxTicks && !done.getAsBoolean(); i++) {
            tickAll();
            drain();
        }
        if (!done.getAsBoolean()) {
            throw new AssertionError("condition not reached within " + maxTicks + " ticks");
        }
    }

    /** Tick everyone until some node leads; returns it. */
    long tickUntilLeader() {
        tickUntil(() -> leader() != RaftNode.NONE, 100);
        return leader();
    }

    /**
     * Tick only {@code id}, draining after each tick, until it leads (it times out and wins). The other
     * nodes' clocks stand still, so this suits nodes that do not hold a leader lease (CheckQuorum).
     */
    void electLeader(long id) {
        int limit = 20 * options(id).electionTicks();
        for (int i = 0; i < limit && node(id).role() != Role.LEADER; i++) {
            tick(id);
            drain();
        }
        if (node(id).role() != Role.LEADER) {
            throw new AssertionError("node " + id + " did not become leader: " + live());
        }
    }

    /**
     * Let an election timeout pass on {@code ids} alone, as if their leader had gone silent, and discard what
     * they send meanwhile: after it they grant pre-votes again (§9.6). For schedules that elect with
     * {@link #electLeader}, which advances only the candidate's clock.
     */
    void outwaitLeader(long... ids) {
        for (long id : ids) {
            for (int i = 0; i < options(id).electionTicks(); i++) {
                tick(id);
            }
            collect(id);
        }
    }

    ProposalResult propose(long id, String command) {
        return node(id).propose(bytes(command));
    }

    /** Snapshot hook: node {@code id} snapshots its state machine at {@code index} and compacts its disk. */
    long compact(long id, long index) {
        StringBuilder data = new StringBuilder();
        servers.get(id).stateMachine.headMap(index, true).forEach((i, c) -> data.append(i).append(':').append(c).append('\n'));
        long firstIndex = node(id).compact(index, bytes(data.toString()));
        servers.get(id).disk.compact(node(id).latestSnapshot(), firstIndex);
        return firstIndex;
    }

    private static TreeMap<Long, String> decode(byte[] snapshot) {
        TreeMap<Long, String> sm = new TreeMap<>();
        for (String line : new String(snapshot, StandardCharsets.UTF_8).split("\n")) {
            int colon = line.indexOf(':');
            if (colon > 0) {
                sm.put(Long.parseLong(line.substring(0, colon)), line.substring(colon + 1));
            }
        }
        return sm;
    }

    // ------------------------------------------------------------------ faults

    /** Drop every message (at delivery) for which {@code filter} is true, until {@link #recover()}. */
    void drop(Predicate<Message> filter) {
        drops.add(filter);
    }

    void dropType(Class<? extends Message> type) {
        drop(type::isInstance);
    }

    /** Cut the link between {@code a} and {@code b}, both directions. */
    void cut(long a, long b) {
        drop(m -> (m.from() == a && m.to() == b) || (m.from() == b && m.to() == a));
    }

    /** Cut {@code id} off from everyone. */
    void isolate(long id) {
        drop(m -> m.from() == id || m.to() == id);
    }

    /** Heal all links and remove all filters. */
    void recover() {
        drops.clear();
    }

    /** Lose the node's memory (its disk survives); messages to it are dropped until {@link #restart}. */
    void crash(long id) {
        node(id);
        servers.get(id).node = null;
    }

    /** Start a fresh node from what is on its disk; its state machine restarts from the snapshot. */
    void restart(long id) {
        if (servers.get(id).node != null) {
            throw new IllegalStateException("node " + id + " is running");
        }
        restarts++;
        start(id);
    }
}
