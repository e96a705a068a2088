package io.rota.raft.sim;

import io.rota.raft.core.ConfChange;
import io.rota.raft.core.ConfChangeResult;
import io.rota.raft.core.Configuration;
import io.rota.raft.core.Entry;
import io.rota.raft.core.MemoryStorage;
import io.rota.raft.core.Message;
import io.rota.raft.core.PersistentState;
import io.rota.raft.core.ProposalResult;
import io.rota.raft.core.RaftNode;
import io.rota.raft.core.RaftOptions;
import io.rota.raft.core.ReadState;
import io.rota.raft.core.Ready;
import io.rota.raft.core.Role;
import io.rota.raft.core.SnapshotMetadata;

import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeSet;

/**
 * A deterministic simulated cluster: N {@link RaftNode}s, each with a simulated disk (the core's
 * {@link MemoryStorage}, which survives crashes) and state machine,
 * joined by a network that loses, duplicates, reorders and partitions messages. Nodes crash (losing all
 * they had not persisted) and restart from their disks. Nothing here reads a clock or a thread: a run is
 * a list of {@link Action}s, and the same list always produces the same run.
 *
 * <p>The cluster starts with {@code members} voters (ids 1..members) and {@value #SPARES} spare servers
 * after them, running from the start outside the configuration. Membership changes (thesis chapter 4)
 * add, promote, remove and replace servers at random, the leader included, so a run moves through many
 * configurations.
 *
 * <p>After every action the cluster carries out the nodes' Readies following the Ready contract, and the
 * {@link InvariantChecker} checks the safety properties.
 */
public final class SimCluster {

    /** Bound on messages in flight: past it the network loses the oldest (a lossy network). */
    static final int MAX_IN_FLIGHT = 2_000;
    /** Bound on Ready rounds per step: a node that keeps producing Readies is stuck in a loop. */
    private static final int MAX_READY_ROUNDS = 1_000;
    /** Servers outside the bootstrap configuration, ready to be added. */
    static final int SPARES = 2;

    private final int size;
    private final long seed;
    private final RaftOptions[] options;
    private final RaftNode[] nodes;
    private final MemoryStorage[] disks;
    private final SimStateMachine[] machines;
    private final int[] incarnations;
    /** Per node: a snapshot captured as the driver captures one, not yet finished ({@link #capture}). */
    private final Map<Integer, Capture> captures = new HashMap<>();
    /**
     * A crash armed to strike inside the node's next Ready that has something to persist: 1 after its
     * leader messages left but before the disk write; 2 after the disk write but before the rest left.
     */
    private final int[] crashInReady;
    private final List<Message> inFlight = new ArrayList<>();
    private final boolean[][] linkDown;
    private final InvariantChecker checker;
    /** Reads in progress: context -> what was committed when the read was issued. */
    private final Map<Long, Long> reads = new HashMap<>();
    private final ArrayDeque<String> trace = new ArrayDeque<>();
    private long nextReadContext = 1;
    private long nextCommand = 1;
    private int step;
    private long readsReleased;
    private long proposalsAccepted;
    /** PreVote and CheckQuorum are on: removed servers must not disrupt, even left running (§4.2.3). */
    private final boolean disruptionGuards;
    /** A replacement in progress (add a learner, promote it, remove the old voter), or null. */
    private Replacement replacement;

    /** Replace {@code victim} by {@code newcomer}: three single-server changes, {@code step} is the next. */
    private record Replacement(long victim, long newcomer, int step) {
    }

    /** A cluster of {@code members} voters and {@value #SPARES} spares, driven by {@code seed}. */
    public SimCluster(int members, long seed) {
        this.size = members + SPARES;
        this.seed = seed;
        this.nodes = new RaftNode[size];
        this.options = new RaftOptions[size];
        this.disks = new MemoryStorage[size];
        this.machines = new SimStateMachine[size];
        this.incarnations = new int[size];
        this.crashInReady = new int[size];
        this.linkDown = new boolean[size][size];
        Set<Long> voters = new HashSet<>();
        for (int i = 0; i < members; i++) {
            voters.add((long) i + 1);
        }
        Configuration configuration = new Configuration(voters);
        this.checker = new InvariantChecker(size, configuration);
        // Each seed draws its own tunables, so that the sweep covers one-entry messages and large
        // batches, a stop-and-wait pipeline and a wide one, PreVote and CheckQuorum on and off.
        SplittableRandom tunables = new SplittableRandom(seed ^ 0x5DEECE66DL);
        long maxEntryBytes = new long[] {1, 120, 1 << 20}[tunables.nextInt(3)];
        int inflight = new int[] {1, 4, 64}[tunables.nextInt(3)];
        int heartbeat = 1 + tunables.nextInt(3);
        long catchUp = new long[] {0, 3, 50}[tunables.nextInt(3)];
        boolean plainRaft = tunables.nextInt(4) == 0;
        // Drawn apart from the tunables, so that each seed's other draws stay what they were: one guarded
        // run in four keeps one guard only, since PreVote alone (§9.6) and CheckQuorum alone (§4.2.3) must
        // each keep a removed server harmless (issue 32, item 6: the sweep never tried them apart).
        int alone = new SplittableRandom(seed ^ 0x9E3779B97F4A7C15L).nextInt(8);
        boolean preVote = !plainRaft && alone != 0;
        boolean checkQuorum = !plainRaft && alone != 1;
        this.disruptionGuards = preVote || checkQuorum;
        for (int i = 0; i < size; i++) {
            options[i] = RaftOptions.builder(i + 1, configuration)
                    .electionTicks(10).heartbeatTicks(heartbeat)
                    .maxEntriesBytesPerMessage(maxEntryBytes).maxInflightMessages(inflight)
                    .maxInflightBytes(600).maxUncommittedBytes(1_500)
                    .snapshotCatchUpEntries(catchUp)
                    .preVote(preVote).checkQuorum(checkQuorum)
                    .build();
            disks[i] = new MemoryStorage();
            start(i);
        }
    }

    private void start(int i) {
        PersistentState onDisk = disks[i].load();
        nodes[i] = new RaftNode(options[i], onDisk,
                new SplittableRandom(seed * 1_000_003L + i * 7919L + incarnations[i]));
        machines[i] = new SimStateMachine();
        if (onDisk.snapshot() != null) {
            machines[i].restore(((io.rota.raft.core.SnapshotBytes) onDisk.snapshot().data()).bytes());
        }
    }

    /** Run one action, carry out the resulting Readies, and check every invariant. */
    public void run(Action action) {
        step++;
        note(action.toString());
        switch (action.kind()) {
            case DELIVER -> deliver(action.a());
            case TICK -> {
                finishCapture(action.a() % size);
                tick(action.a() % size);
            }
            case TICK_ALL -> {
                for (int i = 0; i < size; i++) {
                    tick(i);
                }
            }
            case PROPOSE -> propose(action.b() % 4 == 0 ? action.a() % size : leaderOr(action.a() % size),
                    1 + action.b() % 4);
            case READ -> read(action.a() % size);
            case DROP -> {
                if (!inFlight.isEmpty()) {
                    inFlight.remove(action.a() % inFlight.size());
                }
            }
            case DUPLICATE -> {
                if (!inFlight.isEmpty()) {
                    inFlight.add(inFlight.get(action.a() % inFlight.size()));
                }
            }
            case PARTITION -> partition(action.a(), action.b());
            case HEAL -> heal();
            case CRASH -> crash(action.a() % size, action.b() % 3);
            case RESTART -> restart(action.a() % size);
            case TRANSFER -> transfer(action.a() % size);
            case COMPACT -> {
                if (action.b() % 2 == 0) {
                    compact(action.a() % size);
                } else {
                    capture(action.a() % size);
                }
            }
            case PEER_DOWN -> {
                if (nodes[action.a() % size] != null) {
                    nodes[action.a() % size].reportPeerDown(action.b() % size + 1);
                }
            }
            case CHANGE -> change(action.a(), action.b());
        }
        processReadies();
        checker.afterStep(nodes, incarnations);
    }

    // ---------------------------------------------------------------------------------------------
    // Actions
    // ---------------------------------------------------------------------------------------------

    private void deliver(int pick) {
        if (inFlight.isEmpty()) {
            return;
        }
        Message m = inFlight.remove(pick % inFlight.size());
        int to = (int) m.to() - 1;
        int from = (int) m.from() - 1;
        if (nodes[to] == null || linkDown[from][to]) {
            return; // lost
        }
        deliverTo(to, m);
    }

    private void deliverTo(int to, Message m) {
        if (m instanceof Message.RequestVoteResponse r) {
            checker.onVoteDelivered(r);
        }
        nodes[to].step(m);
    }

    /** Clients mostly find the leader (as the SDK does, following hints): the newest leader, if any. */
    private int leaderOr(int fallback) {
        int leader = fallback;
        long term = -1;
        for (int i = 0; i < size; i++) {
            if (nodes[i] != null && nodes[i].role() == Role.LEADER && nodes[i].currentTerm() > term) {
                leader = i;
                term = nodes[i].currentTerm();
            }
        }
        return leader;
    }

    private void tick(int i) {
        if (nodes[i] != null) {
            nodes[i].tick();
        }
    }

    private void propose(int i, int count) {
        if (nodes[i] == null) {
            return;
        }
        List<byte[]> commands = new ArrayList<>(count);
        for (int c = 0; c < count; c++) {
            commands.add(("cmd-" + nextCommand++ + "-via-" + (i + 1)).getBytes(StandardCharsets.UTF_8));
        }
        if (nodes[i].propose(commands) instanceof io.rota.raft.core.ProposalResult.Accepted) {
            proposalsAccepted += count;
        }
    }

    private void read(int i) {
        if (nodes[i] == null) {
            return;
        }
        long context = nextReadContext++;
        long committedNow = checker.maxCommitted();
        if (nodes[i].readIndex(context)) {
            reads.put(context, committedNow);
        }
    }

    /** Shapes of partition: isolate one node, majority/minority split, one-way cut, bridge. */
    private void partition(int shape, int choice) {
        heal();
        SplittableRandom r = new SplittableRandom(choice);
        switch (shape % 4) {
            case 0 -> { // isolate one node
                int x = r.nextInt(size);
                for (int j = 0; j < size; j++) {
                    cut(x, j);
                    cut(j, x);
                }
            }
            case 1 -> { // split into a minority and a majority
                boolean[] minority = randomGroup(r, size / 2);
                for (int x = 0; x < size; x++) {
                    for (int y = 0; y < size; y++) {
                        if (minority[x] != minority[y]) {
                            cut(x, y);
                        }
                    }
                }
            }
            case 2 -> { // one-way: x hears nothing from y, but y hears x
                int x = r.nextInt(size);
                int y = (x + 1 + r.nextInt(size - 1)) % size;
                cut(y, x);
            }
            default -> { // bridge: two halves that only one node connects
                int bridge = r.nextInt(size);
                boolean[] side = randomGroup(r, (size - 1) / 2);
                side[bridge] = false;
                for (int x = 0; x < size; x++) {
                    for (int y = 0; y < size; y++) {
                        if (x != bridge && y != bridge && side[x] != side[y]) {
                            cut(x, y);
                        }
                    }
                }
            }
        }
        note("links down: " + describeLinks());
    }

    private boolean[] randomGroup(SplittableRandom r, int count) {
        boolean[] group = new boolean[size];
        int chosen = 0;
        while (chosen < Math.max(1, count)) {
            int x = r.nextInt(size);
            if (!group[x]) {
                group[x] = true;
                chosen++;
            }
        }
        return group;
    }

    private void cut(int from, int to) {
        if (from != to) {
            linkDown[from][to] = true;
        }
    }

    /** Repair every link. */
    public void heal() {
        for (boolean[] row : linkDown) {
            java.util.Arrays.fill(row, false);
        }
    }

    private void crash(int i, int mode) {
        if (nodes[i] == null) {
            return;
        }
        if (mode == 0) {
            crashNow(i);
        } else {
            crashInReady[i] = mode;
        }
    }

    private void crashNow(int i) {
        crashInReady[i] = 0;
        if (nodes[i] != null) {
            note("node " + (i + 1) + " crashed: " + nodes[i]);
            nodes[i] = null;
            machines[i] = null;
        }
    }

    /** Restart a crashed node from what its disk holds. */
    public void restart(int i) {
        if (nodes[i] != null) {
            return;
        }
        incarnations[i]++;
        start(i);
        note("node " + (i + 1) + " restarted: " + nodes[i]);
    }

    private void transfer(int target) {
        for (RaftNode n : nodes) {
            if (n != null && n.role() == Role.LEADER) {
                n.transferLeadership(target + 1);
                return;
            }
        }
    }

    /**
     * A membership change at the newest leader (thesis chapter 4). {@code b % 6}: add a learner, promote a
     * learner, add a voter, remove a member, remove the leader itself, or start replacing a voter (add a
     * learner, promote it, remove the old voter: three changes, carried on by later CHANGE steps). Servers
     * are picked with {@code a}. Refusals (a change in progress, a learner behind, no leader, too few voters
     * answering) are normal. One change in four is forced past the strict quorum check (design MF2), so that
     * runs still reach configurations whose voters are partly down, and recover from them.
     */
    private void change(int a, int b) {
        int leader = leaderOr(-1);
        if (leader < 0 || nodes[leader] == null || nodes[leader].role() != Role.LEADER) {
            return;
        }
        RaftNode n = nodes[leader];
        Configuration c = n.configuration();
        List<Long> others = new ArrayList<>();
        for (long id = 1; id <= size; id++) {
            if (!c.isMember(id)) {
                others.add(id);
            }
        }
        if (replacement != null) {
            carryOnReplacement(n);
            return;
        }
        List<Long> voters = new ArrayList<>(c.voters());
        List<Long> learners = new ArrayList<>(c.learners());
        List<Long> members = new ArrayList<>(c.members());
        ConfChange change = switch (b % 6) {
            case 0 -> others.isEmpty() ? null : ConfChange.addLearner(others.get(a % others.size()));
            case 1 -> learners.isEmpty() ? null : ConfChange.promote(learners.get(a % learners.size()));
            case 2 -> others.isEmpty() ? null : ConfChange.addVoter(others.get(a % others.size()));
            case 3 -> ConfChange.remove(members.get(a % members.size()));
            case 4 -> ConfChange.remove(n.id());
            default -> {
                if (!others.isEmpty()) {
                    replacement = new Replacement(voters.get(a % voters.size()), others.get(a % others.size()), 0);
                    note("replace " + replacement.victim() + " by " + replacement.newcomer());
                    carryOnReplacement(n);
                }
                yield null;
            }
        };
        if (change != null) {
            proposeChange(n, change, (b / 6) % 4 == 0);
        }
    }

    private void carryOnReplacement(RaftNode leader) {
        Replacement r = replacement;
        ConfChange next = switch (r.step()) {
            case 0 -> ConfChange.addLearner(r.newcomer());
            case 1 -> ConfChange.promote(r.newcomer());
            default -> ConfChange.remove(r.victim());
        };
        ConfChangeResult result = proposeChange(leader, next, false);
        if (result instanceof ConfChangeResult.Accepted) {
            replacement = r.step() == 2 ? null : new Replacement(r.victim(), r.newcomer(), r.step() + 1);
        } else if (result instanceof ConfChangeResult.Refused refused && !retryable(refused.reason())) {
            replacement = null; // the cluster moved on (another change took the server in or out)
        }
    }

    private static boolean retryable(ConfChangeResult.Reason reason) {
        return switch (reason) {
            case NOT_LEADER, TRANSFERRING_LEADERSHIP, NOT_YET_COMMITTED_IN_TERM, CHANGE_IN_PROGRESS, LEARNER_BEHIND,
                 LEARNER_NOT_RESPONDING, QUORUM_AT_RISK -> true; // the last two pass once crashed servers restart
            case ALREADY_MEMBER, NOT_A_MEMBER, NOT_A_LEARNER, LAST_VOTER -> false;
        };
    }

    private ConfChangeResult proposeChange(RaftNode leader, ConfChange change, boolean force) {
        ConfChangeResult result = leader.proposeConfChange(change, force);
        if (result instanceof ConfChangeResult.Accepted accepted) {
            note("leader " + leader.id() + " appended " + change + (force ? " (forced)" : "") + " at " + accepted.index() + ": "
                    + accepted.configuration());
        } else {
            note("leader " + leader.id() + " refused " + change + ": " + ((ConfChangeResult.Refused) result).reason());
        }
        return result;
    }

    /** A snapshot captured as the driver captures one, to be written and finished later (RaftDriver). */
    private record Capture(int incarnation, SnapshotMetadata metadata, byte[] image) {
    }

    /**
     * The driver's snapshot, first half (RaftDriver.maybeSnapshot): record what the core says the snapshot
     * at the applied index is, and the state machine's image; the core goes on taking and applying entries
     * until {@link #finishCapture}, as the driver's does while its snapshot thread writes.
     */
    private void capture(int i) {
        RaftNode n = nodes[i];
        if (n == null || n.appliedIndex() == 0 || captures.containsKey(i)
                || (n.latestSnapshot() != null && n.latestSnapshot().index() >= n.appliedIndex())) {
            return;
        }
        captures.put(i, new Capture(incarnations[i], n.snapshotMetadata(n.appliedIndex()), machines[i].snapshot()));
    }

    /**
     * Second half (RaftDriver.finishSnapshot), at the node's next tick: compact to the captured snapshot
     * unless a crash lost it or an installed one covers it. Its record must be what the core records for that
     * index now; the driver logs a BUG and keeps its log otherwise, and before issue 32 it stopped the member
     * (a change above the applied index made the two differ), so a difference is a violation here.
     */
    private void finishCapture(int i) {
        Capture c = captures.remove(i);
        RaftNode n = nodes[i];
        if (c == null || n == null || c.incarnation() != incarnations[i]) {
            return;
        }
        long index = c.metadata().lastIncludedIndex();
        if (n.latestSnapshot() != null && n.latestSnapshot().index() >= index) {
            return;
        }
        SnapshotMetadata now = n.snapshotMetadata(index);
        if (!now.equals(c.metadata())) {
            throw new InvariantViolation("node " + (i + 1) + " would stop itself: its snapshot at " + index
                    + " was captured as " + c.metadata() + " but the core records " + now);
        }
        long newFirst = n.compact(index, c.image());
        disks[i].compact(n.latestSnapshot(), newFirst);
    }

    private void compact(int i) {
        RaftNode n = nodes[i];
        if (n == null || n.appliedIndex() == 0
                || (n.latestSnapshot() != null && n.latestSnapshot().index() >= n.appliedIndex())) {
            return;
        }
        long newFirst = n.compact(n.appliedIndex(), machines[i].snapshot());
        disks[i].compact(n.latestSnapshot(), newFirst);
    }

    // ---------------------------------------------------------------------------------------------
    // The Ready contract, carried out
    // ---------------------------------------------------------------------------------------------

    /** Carry out every node's Readies until none has more. */
    public void processReadies() {
        for (int round = 0; ; round++) {
            boolean any = false;
            for (int i = 0; i < size; i++) {
                if (nodes[i] != null && nodes[i].hasReady()) {
                    any = true;
                    handleReady(i);
                }
            }
            if (!any) {
                return;
            }
            if (round > MAX_READY_ROUNDS) {
                throw new InvariantViolation("nodes keep producing Readies: livelock in the core");
            }
        }
    }

    private void handleReady(int i) {
        RaftNode node = nodes[i];
        // Record commits before anything leaves: a message may carry the new commit index.
        checker.observeCommits(nodes);
        Ready rd = node.ready();
        // 1. Leader messages may leave before the leader's own write (§10.2.1).
        send(rd.leaderMessages());
        boolean writes = rd.hasWrites();
        if (crashInReady[i] == 1 && writes) {
            crashNow(i); // crashed before anything of this Ready reached the disk
            return;
        }
        // 2. Persist.
        disks[i].persist(rd);
        if (rd.hardState() != null) {
            checker.onPersist(i, node.id(), rd.hardState());
        }
        if (crashInReady[i] == 2 && writes) {
            crashNow(i); // durable, but the acknowledgements never left
            return;
        }
        // 3. Send what waited for the disk.
        send(rd.messages());
        // 4. Apply.
        SimStateMachine sm = machines[i];
        if (rd.snapshot() != null) {
            checker.onRestore(node.id(), rd.snapshot());
            sm.restore(((io.rota.raft.core.SnapshotBytes) rd.snapshot().data()).bytes());
        }
        for (Entry e : rd.committedEntries()) {
            sm.apply(e);
            checker.onApply(node.id(), e, sm.stateHash);
        }
        for (ReadState rs : rd.readStates()) {
            Long committedWhenIssued = reads.remove(rs.context());
            if (committedWhenIssued != null) {
                checker.onRead(node.id(), rs, committedWhenIssued);
                readsReleased++;
            }
        }
        // 5. Acknowledge.
        node.advance(rd);
    }

    private void send(List<Message> messages) {
        inFlight.addAll(messages);
        while (inFlight.size() > MAX_IN_FLIGHT) {
            inFlight.remove(0);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Liveness support and inspection
    // ---------------------------------------------------------------------------------------------

    /**
     * Restart every crashed node, repair the network, and forget pending crash points. Without PreVote and
     * CheckQuorum, a removed server that never learnt of its removal would keep raising the cluster's term
     * (§4.2.3), so these runs then stop every server that no configuration can still include, as an
     * operator stops a removed server; with them, removed servers keep running and must not disrupt.
     */
    public void healAll() {
        heal();
        for (int i = 0; i < size; i++) {
            crashInReady[i] = 0;
            restart(i);
        }
        if (!disruptionGuards) {
            Set<Long> keep = possibleMembers();
            for (int i = 0; i < size; i++) {
                if (!keep.contains((long) i + 1) && nodes[i] != null) {
                    note("node " + (i + 1) + " is outside every configuration the cluster can reach: stopped");
                    nodes[i] = null;
                    machines[i] = null;
                }
            }
        }
        processReadies();
        checker.afterStep(nodes, incarnations);
    }

    /**
     * Members of the configuration at the highest commit index any node knows, and of every configuration
     * entry after it in any log or in any AppendEntries still in flight: the configurations the cluster
     * may yet use.
     */
    private Set<Long> possibleMembers() {
        RaftNode ahead = null;
        for (RaftNode n : nodes) {
            if (ahead == null || n.commitIndex() > ahead.commitIndex()) {
                ahead = n;
            }
        }
        long committed = ahead.commitIndex();
        Configuration atCommit = ahead.latestSnapshot() != null ? ahead.latestSnapshot().metadata().configuration()
                : options[0].configuration();
        for (Entry e : ahead.logEntries()) {
            if (e.index() <= committed && e.type() == Entry.Type.CONFIGURATION) {
                atCommit = Configuration.decode(e.data());
            }
        }
        Set<Long> keep = new TreeSet<>(atCommit.members());
        List<List<Entry>> logs = new ArrayList<>();
        for (RaftNode n : nodes) {
            logs.add(n.logEntries());
        }
        for (Message m : inFlight) {
            if (m instanceof Message.AppendEntries ae) {
                logs.add(ae.entries());
            }
        }
        for (List<Entry> log : logs) {
            for (Entry e : log) {
                if (e.index() > committed && e.type() == Entry.Type.CONFIGURATION) {
                    keep.addAll(Configuration.decode(e.data()).members());
                }
            }
        }
        return keep;
    }


    /**
     * One round of a healthy network: every node ticks, then every message in flight (and every message
     * those produce) is delivered. Invariants are checked after every delivery.
     */
    /** Whether PreVote or CheckQuorum is on: then removed servers keep running and must not disrupt. */
    public boolean disruptionGuards() {
        return disruptionGuards;
    }

    public void healthyRound() {
        step++;
        for (int i = 0; i < size; i++) {
            tick(i);
        }
        processReadies();
        checker.afterStep(nodes, incarnations);
        int delivered = 0;
        while (!inFlight.isEmpty()) {
            Message m = inFlight.remove(0);
            int to = (int) m.to() - 1;
            if (nodes[to] != null) {
                deliverTo(to, m);
            }
            processReadies();
            checker.afterStep(nodes, incarnations);
            if (++delivered > 100_000) {
                throw new InvariantViolation("a healthy round never quiesces");
            }
        }
    }

    /**
     * The unique leader of the highest term, if every member of its configuration (voters and learners) is
     * running and agrees on it; else NONE. Servers outside the configuration are not asked.
     */
    public long stableLeader() {
        long leader = RaftNode.NONE;
        long term = -1;
        for (RaftNode n : nodes) {
            if (n != null && n.role() == Role.LEADER && n.currentTerm() > term) {
                leader = n.id();
                term = n.currentTerm();
            }
        }
        if (leader == RaftNode.NONE) {
            return RaftNode.NONE;
        }
        for (long member : node(leader).configuration().members()) {
            RaftNode n = node(member);
            if (n == null || n.currentTerm() != term || n.leaderId() != leader) {
                return RaftNode.NONE;
            }
        }
        return leader;
    }

    /** Propose one command at the stable leader; returns where it went, or null if not accepted. */
    public ProposalResult.Accepted proposeAtLeader(byte[] command) {
        long leader = stableLeader();
        if (leader == RaftNode.NONE) {
            return null;
        }
        ProposalResult result = nodes[(int) leader - 1].propose(command);
        processReadies();
        checker.afterStep(nodes, incarnations);
        return result instanceof ProposalResult.Accepted a ? a : null;
    }

    /**
     * Whether every member of the stable leader's configuration has applied the entry {@code index} of
     * {@code term} (not another one there).
     */
    public boolean allApplied(long index, long term) {
        long leader = stableLeader();
        if (leader == RaftNode.NONE) {
            return false;
        }
        for (long member : node(leader).configuration().members()) {
            int i = (int) member - 1;
            RaftNode n = nodes[i];
            if (n == null || machines[i].appliedIndex < index
                    || (index >= n.firstIndex() && n.term(index) != term)) {
                return false;
            }
        }
        return true;
    }

    public RaftNode node(long id) {
        return nodes[(int) id - 1];
    }

    public int size() {
        return size;
    }

    public long seed() {
        return seed;
    }

    public int steps() {
        return step;
    }

    public long readsReleased() {
        return readsReleased;
    }

    public long proposalsAccepted() {
        return proposalsAccepted;
    }

    /** Membership changes committed (configuration entries), not only proposed. */
    public long changesCommitted() {
        return checker.configurationsCommitted();
    }

    public long maxCommitted() {
        return checker.maxCommitted();
    }

    /** The last events, for a failure report. */
    public String trace() {
        StringBuilder sb = new StringBuilder();
        for (String line : trace) {
            sb.append("  ").append(line).append('\n');
        }
        for (RaftNode n : nodes) {
            sb.append("  state: ").append(n == null ? "crashed" : n.toString()).append('\n');
        }
        return sb.toString();
    }

    private void note(String event) {
        trace.addLast("#" + step + " " + event);
        if (trace.size() > 40) {
            trace.removeFirst();
        }
    }

    private String describeLinks() {
        StringBuilder sb = new StringBuilder();
        for (int x = 0; x < size; x++) {
            for (int y = 0; y < size; y++) {
                if (linkDown[x][y]) {
                    sb.append(x + 1).append("->").append(y + 1).append(' ');
                }
            }
        }
        return sb.toString().trim();
    }
}
