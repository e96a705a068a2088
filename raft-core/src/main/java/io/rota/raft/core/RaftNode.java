package io.rota.raft.core;

import io.rota.raft.core.Message.AppendEntries;
import io.rota.raft.core.Message.AppendEntriesResponse;
import io.rota.raft.core.Message.Heartbeat;
import io.rota.raft.core.Message.HeartbeatResponse;
import io.rota.raft.core.Message.InstallSnapshot;
import io.rota.raft.core.Message.ReadIndexRequest;
import io.rota.raft.core.Message.ReadIndexResponse;
import io.rota.raft.core.Message.RequestVote;
import io.rota.raft.core.Message.RequestVoteResponse;
import io.rota.raft.core.Message.TimeoutNow;
import io.rota.raft.core.ProposalResult.Accepted;
import io.rota.raft.core.ProposalResult.Reason;
import io.rota.raft.core.ProposalResult.Rejected;
import io.rota.raft.core.RaftEvent.BecameFollower;
import io.rota.raft.core.RaftEvent.BecameLeader;
import io.rota.raft.core.RaftEvent.ElectionLost;
import io.rota.raft.core.RaftEvent.ElectionStarted;
import io.rota.raft.core.RaftEvent.LeaderChanged;
import io.rota.raft.core.RaftEvent.ProposalsRefused;
import io.rota.raft.core.RaftEvent.SnapshotInstalled;
import io.rota.raft.core.RaftEvent.SteppedDown;
import io.rota.raft.core.RaftEvent.TransferAborted;
import io.rota.raft.core.RaftEvent.TransferStarted;
import io.rota.raft.core.RaftEvent.VoteDenied;
import io.rota.raft.core.RaftEvent.VoteGranted;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.random.RandomGenerator;

/**
 * One Raft server as a pure, deterministic state machine (Ongaro and Ousterhout, "In Search of an
 * Understandable Consensus Algorithm", and Ongaro's thesis). It does no I/O, starts no threads, reads
 * no clock and logs nothing: time arrives as {@link #tick()}, the network as {@link #step(Message)},
 * clients as {@link #propose} and {@link #readIndex(long)}, and every effect leaves through a
 * {@link Ready}, which the runtime carries out and acknowledges with {@link #advance(Ready)}. The same
 * inputs, with the same seeded {@link RandomGenerator}, always produce the same outputs. What an operator
 * would want in a log — elections, votes, role and leader changes — leaves as {@link RaftEvent}s in the
 * Ready too.
 *
 * <p>Fields are grouped as in Figure 2: persistent state, volatile state, leader-only state.
 *
 * <p>Messages are told apart by {@link Message.Visitor}s, one per concern ({@link Dispatch},
 * {@link HigherTerm}, {@link LowerTerm}, {@link #MAY_SEND_BEFORE_PERSIST}), never by {@code instanceof}:
 * a new message type does not compile until each of them handles it.
 */
public final class RaftNode {

    /** The id meaning "no node": no vote cast, no leader known. */
    public static final long NONE = 0;

    private final RaftOptions options;
    private final long id;
    private final RandomGenerator random;
    /** The configuration in force at each index of the log (§4.1). */
    private final ConfigurationTracker configurations;
    /** The latest configuration in the log, committed or not (§4.1); always {@code configurations.latest()}. */
    private Configuration configuration;
    /** Whether a configuration this node has held named it: a joining server's bootstrap one does not. */
    private boolean everMember;

    // --- Persistent state on all servers (Figure 2); reaches disk through Ready.hardState/entries ---
    /** Latest term this server has seen; increases monotonically (§5.1). */
    private long currentTerm;
    /** Candidate that received this server's vote in currentTerm, or NONE (§5.2: one vote per term). */
    private long votedFor;
    /** The log, with commitIndex and lastApplied. */
    private final RaftLog log;

    // --- Volatile state on all servers ---
    private Role role = Role.FOLLOWER;
    private long leaderId = NONE;
    /** Ticks since the last election timeout reset (followers, candidates) or CheckQuorum round (leader). */
    private int electionElapsed;
    /** Ticks since this node started; never reset. The clock of {@link Progress#lastHeardTick}. */
    private long ticks;
    /**
     * This node's election timeout, drawn from [electionTicks, 2 × electionTicks) (§5.2); shortened to a
     * few ticks when the runtime reports the leader's process gone ({@link #reportPeerDown}).
     */
    private int randomizedElectionTimeout;
    /** Votes received in the current (pre-)election; absent = no answer yet. */
    private final Map<Long, Boolean> votes = new HashMap<>();
    /** Latest snapshot this node holds: taken locally via {@link #compact} or received (§7). */
    private Snapshot latestSnapshot;
    /** Pre-vote rounds since this node last followed a leader; reported in {@link BecameLeader} only. */
    private int preVoteRounds;
    /** {@link #reportPeerDown} shortened the election timer; reported as the election's cause only. */
    private boolean leaderReportedDown;

    // --- Volatile state on leaders (Figure 2: nextIndex[], matchIndex[], kept per follower) ---
    private final Map<Long, Progress> progress = new TreeMap<>();
    private int heartbeatElapsed;
    /** Target of a leadership transfer in progress, or NONE (§3.10). */
    private long leadTransferee = NONE;
    private final ReadOnly readOnly = new ReadOnly();
    /** Bytes of entries appended by this leader and not yet committed (bounded). */
    private long uncommittedBytes;
    /** Proposals are being refused for the byte limit; reported once per episode ({@link ProposalsRefused}). */
    private boolean refusingProposals;

    // --- Output not yet handed out in a Ready ---
    private final List<Message> leaderMessages = new ArrayList<>();
    private final List<Message> messages = new ArrayList<>();
    private final List<ReadState> readStates = new ArrayList<>();
    private final List<RaftEvent> events = new ArrayList<>();
    /** A snapshot received from the leader, to be persisted and restored through the next Ready. */
    private Snapshot pendingSnapshot;
    private HardState persistedHardState;
    /**
     * The soft state the runtime last acknowledged (etcd's {@code prevSoftSt}): a role, leader or term
     * change is a Ready by itself, so the runtime learns of a step-down that sends and writes nothing.
     */
    private SoftState reportedSoftState;
    /** The Ready handed out and not yet advanced; no input is accepted meanwhile. */
    private Ready outstanding;

    // --- The per-type concerns of messages (see Message.Visitor) ---
    private final Dispatch dispatch = new Dispatch();
    private final HigherTerm higherTerm = new HigherTerm();
    private final LowerTerm lowerTerm = new LowerTerm();

    /**
     * A node starting from what it finds on disk ({@link PersistentState#EMPTY} for a brand-new one).
     * It starts as a follower (§5.2: "When servers start up, they begin as followers").
     */
    public RaftNode(RaftOptions options, PersistentState state, RandomGenerator random) {
        this.options = Objects.requireNonNull(options, "options");
        this.random = Objects.requireNonNull(random, "random");
        this.id = options.id();
        this.log = new RaftLog(state);
        this.latestSnapshot = state.snapshot();
        this.configurations = new ConfigurationTracker(state, options.configuration());
        this.configuration = configurations.latest();
        this.everMember = configuration.isMember(id);
        this.currentTerm = state.hardState().currentTerm();
        this.votedFor = state.hardState().votedFor();
        this.persistedHardState = new HardState(currentTerm, votedFor, log.commitIndex());
        becomeFollower(currentTerm, NONE);
        this.reportedSoftState = softState();
    }

    // =====================================================================================
    // Inputs
    // =====================================================================================

    /** One unit of logical time: drives election timeouts (§5.2), heartbeats and CheckQuorum. */
    public void tick() {
        requireNoOutstandingReady();
        ticks++;
        if (role == Role.LEADER) {
            tickLeader();
        } else {
            tickElection();
        }
    }

    /**
     * Deliver a message from a peer. Messages for another node are ignored, and so are answers to a leader
     * from servers it does not replicate to (see {@link #acceptsFrom}).
     */
    public void step(Message m) {
        requireNoOutstandingReady();
        Objects.requireNonNull(m, "message");
        if (m.to() != id || m.from() == id || !acceptsFrom(m)) {
            return;
        }
        if (m.term() > currentTerm) {
            if (!m.accept(higherTerm)) {
                return;
            }
        } else if (m.term() < currentTerm) {
            m.accept(lowerTerm);
            return;
        }
        Progress sender = role == Role.LEADER ? progress.get(m.from()) : null;
        if (sender != null) {
            sender.lastHeardTick = ticks; // any message of this term: the server is up and reaches us
        }
        m.accept(dispatch);
    }

    /** Propose one command; see {@link #propose(List)}. */
    public ProposalResult propose(byte[] command) {
        return propose(List.of(command));
    }

    /**
     * Propose a batch of commands, appended together as consecutive entries so that one disk write and
     * one AppendEntries carry them all. Only the leader accepts (§5.3); it stops accepting while it hands
     * leadership over (§3.10) and while its uncommitted tail is at the byte limit.
     */
    public ProposalResult propose(List<byte[]> commands) {
        requireNoOutstandingReady();
        if (role != Role.LEADER) {
            return new Rejected(Reason.NOT_LEADER, leaderId);
        }
        if (leadTransferee != NONE) {
            return new Rejected(Reason.TRANSFERRING_LEADERSHIP, leaderId);
        }
        if (commands.isEmpty()) {
            throw new IllegalArgumentException("empty proposal");
        }
        long first = log.lastIndex() + 1;
        List<Entry> batch = new ArrayList<>(commands.size());
        long bytes = 0;
        for (byte[] command : commands) {
            Entry e = Entry.command(first + batch.size(), currentTerm, command);
            bytes += e.sizeBytes();
            batch.add(e);
        }
        if (uncommittedBytes > 0 && uncommittedBytes + bytes > options.maxUncommittedBytes()) {
            if (!refusingProposals) {
                refusingProposals = true;
                report(new ProposalsRefused(currentTerm, uncommittedBytes, options.maxUncommittedBytes()));
            }
            return new Rejected(Reason.TOO_MUCH_UNCOMMITTED, leaderId);
        }
        refusingProposals = false;
        uncommittedBytes += bytes;
        log.appendAtEnd(batch);
        broadcastAppend(false);
        maybeCommit(); // a single-voter cluster's commit waits only for its own disk, i.e. advance()
        return new Accepted(currentTerm, first, log.lastIndex());
    }

    /**
     * Ask for a linearizable read (§6.4). The answer comes as a {@link ReadState} with this
     * {@code context} in a later Ready: serve the read once the state machine has applied up to its
     * index. On a follower the request is forwarded to the leader. Returns false if no leader is
     * known (the caller should retry later or elsewhere); a request may also be lost with a leader
     * change, so the caller needs a deadline.
     */
    public boolean readIndex(long context) {
        requireNoOutstandingReady();
        if (role == Role.LEADER) {
            acceptRead(id, List.of(context));
            return true;
        }
        if (leaderId != NONE) {
            send(new ReadIndexRequest(currentTerm, id, leaderId, List.of(context)));
            return true;
        }
        return false;
    }

    /**
     * Hand leadership to {@code target} (§3.10): stop taking proposals, bring the target's log up to
     * date, then send it TimeoutNow so it starts an election at once. Abandoned after one election
     * timeout. Returns false if this node is not the leader or the target is not a voter (a learner
     * cannot lead).
     */
    public boolean transferLeadership(long target) {
        requireNoOutstandingReady();
        if (role != Role.LEADER || !configuration.isVoter(target)) {
            return false;
        }
        if (target == id) {
            return true;
        }
        leadTransferee = target;
        electionElapsed = 0; // the transfer gets one election timeout to finish
        report(new TransferStarted(currentTerm, target));
        Progress pr = progress.get(target);
        if (pr.matchIndex == log.lastIndex()) {
            send(new TimeoutNow(currentTerm, id, target));
        } else {
            sendAppend(target, true);
        }
        return true;
    }

    /**
     * Snapshot hook (§7): the state machine has saved an image of everything applied up to
     * {@code index}. The node keeps it to send to followers that fall behind the log, and drops log
     * entries up to {@code index} minus {@link RaftOptions#snapshotCatchUpEntries()} — but a leader keeps
     * the entries after an older snapshot still streaming to a follower (bounded by
     * {@link RaftOptions#maxSnapshotPinEntries()}).
     *
     * @return the log's new first index; the runtime may delete stored entries below it
     */
    public long compact(long index, byte[] data) {
        return compact(index, new SnapshotBytes(data));
    }

    /**
     * What a snapshot of everything applied up to {@code index} must record (§7): that index, its term, and
     * the configuration <em>at</em> that index (§4.1) — not {@link #configuration()}, which may be a later,
     * uncommitted change. A runtime that writes the snapshot before calling {@link #compact} (on another
     * thread) records this, and {@link #compact} records the same.
     */
    public SnapshotMetadata snapshotMetadata(long index) {
        if (index > log.appliedIndex()) {
            throw new IllegalArgumentException("snapshot at " + index + " is beyond the applied index "
                    + log.appliedIndex());
        }
        return new SnapshotMetadata(index, log.term(index), configurations.at(index));
    }

    /** As {@link #compact(long, byte[])}, with the image in a file or anywhere else the runtime keeps it. */
    public long compact(long index, SnapshotData data) {
        requireNoOutstandingReady();
        if (index > log.appliedIndex()) {
            throw new IllegalArgumentException("snapshot at " + index + " is beyond the applied index "
                    + log.appliedIndex());
        }
        if (latestSnapshot != null && index <= latestSnapshot.index()) {
            return log.firstIndex();
        }
        if (log.term(index) <= 0) {
            throw new IllegalArgumentException("snapshot at " + index + ": entry already compacted");
        }
        // The one record a snapshot at this index has, whoever wrote it (the driver writes it first, §7).
        latestSnapshot = new Snapshot(snapshotMetadata(index), data);
        configurations.compact(index);
        log.compactTo(Math.min(Math.max(0, index - options.snapshotCatchUpEntries()), snapshotPin(index)));
        return log.firstIndex();
    }

    /**
     * The oldest snapshot still streaming to a follower, or {@code Long.MAX_VALUE} if none: compaction keeps
     * the entries after it, so that the follower, once it has installed it, continues from the log (§7)
     * instead of needing the newer snapshot — which, were it sent, would be overtaken again by the next one
     * whenever a transfer lasts longer than the snapshot interval (etcd pauses compaction likewise). A pin
     * more than {@link RaftOptions#maxSnapshotPinEntries()} behind {@code index} is dropped: that follower
     * gets a newer snapshot after it installs the old one.
     */
    private long snapshotPin(long index) {
        long pin = Long.MAX_VALUE;
        if (role != Role.LEADER) {
            return pin;
        }
        for (Progress pr : progress.values()) {
            if (pr.inFlightSnapshotIndex > 0 && index - pr.inFlightSnapshotIndex > options.maxSnapshotPinEntries()) {
                pr.inFlightSnapshotIndex = 0;
            } else if (pr.inFlightSnapshotIndex > 0) {
                pin = Math.min(pin, pr.inFlightSnapshotIndex);
            }
        }
        return pin;
    }

    /** The runtime could not reach {@code peer}: stop pipelining to it and probe instead. */
    public void reportUnreachable(long peer) {
        requireNoOutstandingReady();
        Progress pr = progress.get(peer);
        if (role == Role.LEADER && pr != null && pr.state == Progress.State.REPLICATE) {
            pr.becomeProbe();
        }
    }

    /**
     * The runtime knows that {@code peer}'s process is gone — its connection closed and its port now
     * refuses connections (a crash or kill -9), which is stronger evidence than a missing heartbeat. A
     * follower whose leader that is stops waiting out a whole election timeout (§5.2) and campaigns
     * almost at once. Survivors are ranked by id so that they do not all start together and split the
     * vote: the first campaigns on its next tick, the next two ticks later, and so on.
     *
     * <p>Only liveness changes: a false report costs at most one election, and PreVote (§9.6) still
     * asks a majority first. A survivor that has not seen the leader go refuses that pre-vote while its
     * leader lease lasts (CheckQuorum), so a report by one partitioned follower disrupts nothing.
     */
    public void reportPeerDown(long peer) {
        requireNoOutstandingReady();
        if (role != Role.FOLLOWER || peer != leaderId || peer == id || !isPromotable()) {
            return;
        }
        int rank = 0;
        for (long voter : configuration.voters()) {
            if (voter != peer && voter < id) {
                rank++;
            }
        }
        leaderId = NONE; // no longer "in lease": our pre-vote grants are now open to the survivors
        leaderReportedDown = true;
        report(new LeaderChanged(currentTerm, NONE, peer));
        electionElapsed = 0;
        randomizedElectionTimeout = Math.min(1 + 2 * rank, randomizedElectionTimeout);
    }

    /** The runtime failed to deliver a snapshot to {@code peer}: probe again (and resend if needed). */
    public void reportSnapshotFailure(long peer) {
        requireNoOutstandingReady();
        Progress pr = progress.get(peer);
        if (role != Role.LEADER || pr == null) {
            return;
        }
        pr.inFlightSnapshotIndex = 0; // nothing streams to it now: compaction need not wait for it
        if (pr.state == Progress.State.SNAPSHOT) {
            pr.becomeProbe();
        }
    }

    // =====================================================================================
    // Output: Ready / advance
    // =====================================================================================

    /** Whether {@link #ready()} has anything for the runtime, a changed soft state included. */
    public boolean hasReady() {
        return !softState().equals(reportedSoftState) || !leaderMessages.isEmpty() || !messages.isEmpty()
                || !readStates.isEmpty() || !events.isEmpty()
                || pendingSnapshot != null || log.persistedIndex() < log.lastIndex()
                || log.appliedIndex() < log.commitIndex() || !currentHardState().equals(persistedHardState);
    }

    /** Collect the pending effects; see {@link Ready} for what the runtime must do with them. */
    public Ready ready() {
        requireNoOutstandingReady();
        HardState hs = currentHardState();
        List<Entry> entries = log.unpersistedEntries();
        boolean mustSync = pendingSnapshot != null || !entries.isEmpty()
                || hs.currentTerm() != persistedHardState.currentTerm() || hs.votedFor() != persistedHardState.votedFor();
        outstanding = new Ready(softState(), hs.equals(persistedHardState) ? null : hs, pendingSnapshot,
                entries, log.unappliedCommittedEntries(options.maxCommittedBytesPerReady()),
                leaderMessages, messages, readStates, mustSync, events);
        return outstanding;
    }

    /**
     * The runtime has carried out {@code ready}: its entries and hard state are durable, its messages
     * sent, its committed entries applied. A leader now counts its own copy toward commitment (§10.2.1).
     */
    public void advance(Ready ready) {
        if (ready != outstanding) {
            throw new IllegalStateException("advance() must be given the Ready last returned by ready()");
        }
        outstanding = null;
        if (!ready.entries().isEmpty()) {
            Entry last = ready.entries().get(ready.entries().size() - 1);
            log.persistedTo(last.index(), last.term());
        }
        if (ready.snapshot() != null) {
            pendingSnapshot = null;
        }
        if (!ready.committedEntries().isEmpty()) {
            log.appliedTo(ready.committedEntries().get(ready.committedEntries().size() - 1).index());
        }
        if (ready.hardState() != null) {
            persistedHardState = ready.hardState();
        }
        reportedSoftState = ready.softState();
        leaderMessages.subList(0, ready.leaderMessages().size()).clear();
        messages.subList(0, ready.messages().size()).clear();
        readStates.subList(0, ready.readStates().size()).clear();
        events.subList(0, ready.events().size()).clear();
        if (role == Role.LEADER) {
            Progress self = progress.get(id);
            if (self.maybeUpdate(log.persistedIndex()) && maybeCommit()) {
                broadcastCommit();
            }
        }
    }

    // =====================================================================================
    // Terms (§5.1) and dispatch: one Message.Visitor per concern
    // =====================================================================================

    /**
     * A message from a higher term; {@code accept} returns whether to go on and handle it.
     * "If RPC request or response contains term T > currentTerm: set currentTerm = T, convert to
     * follower" (Figure 2, Rules for Servers), except for the cases PreVote and CheckQuorum carve out.
     */
    private final class HigherTerm implements Message.Visitor<Boolean> {

        @Override
        public Boolean visit(RequestVote m) {
            // A pre-vote is refused while we hear from a leader whether or not CheckQuorum is on: §9.6 grants
            // one only by a server that has not heard from a valid leader for an election timeout. Without
            // that, PreVote alone let a removed server that missed its removal's commit win once (issue 32).
            boolean inLease = (options.checkQuorum() || m.preVote()) && leaderId != NONE
                    && electionElapsed < options.electionTicks();
            if (inLease && !m.leadershipTransfer()) {
                // §4.2.3 / §9.6: we heard from a live leader within the minimum election timeout, so
                // this candidate is disruptive (partitioned, or removed); do not even raise our term.
                report(new VoteDenied(m.term(), m.from(), m.preVote(), VoteDenied.Reason.LEADER_LEASE));
                return false;
            }
            if (m.preVote()) {
                return true; // a pre-vote changes no term (§9.6)
            }
            return adoptTerm(m, NONE);
        }

        @Override
        public Boolean visit(RequestVoteResponse m) {
            if (m.preVote() && m.voteGranted()) {
                return true; // a granted pre-vote carries the term we would campaign in, not a real term
            }
            return adoptTerm(m, NONE);
        }

        // Only the leader of a term sends these three: their sender leads the term we adopt.

        @Override
        public Boolean visit(AppendEntries m) {
            return adoptTerm(m, m.from());
        }

        @Override
        public Boolean visit(Heartbeat m) {
            return adoptTerm(m, m.from());
        }

        @Override
        public Boolean visit(InstallSnapshot m) {
            return adoptTerm(m, m.from());
        }

        // The rest name no leader: we adopt the term and know of no leader in it yet.

        @Override
        public Boolean visit(AppendEntriesResponse m) {
            return adoptTerm(m, NONE);
        }

        @Override
        public Boolean visit(HeartbeatResponse m) {
            return adoptTerm(m, NONE);
        }

        @Override
        public Boolean visit(TimeoutNow m) {
            return adoptTerm(m, NONE);
        }

        @Override
        public Boolean visit(ReadIndexRequest m) {
            return adoptTerm(m, NONE);
        }

        @Override
        public Boolean visit(ReadIndexResponse m) {
            return adoptTerm(m, NONE);
        }
    }

    /**
     * Adopt {@code m}'s higher term as a follower of {@code leader} ({@link #NONE} unless {@code m} came
     * from that term's leader) and report what changed. Returns true: {@code m} is handled next.
     */
    private boolean adoptTerm(Message m, long leader) {
        Role before = role;
        long leaderBefore = leaderId;
        long transferee = leadTransferee;
        int elapsed = electionElapsed;
        int timeout = randomizedElectionTimeout;
        becomeFollower(m.term(), leader);
        if (leader == NONE) {
            // Adopting a newer term is not hearing from a leader: only AppendEntries from the leader or a
            // granted vote reset the election timer (Figure 2, Rules for Followers). Otherwise a candidate
            // with a stale log could keep up-to-date servers from ever timing out.
            electionElapsed = elapsed;
            randomizedElectionTimeout = timeout;
        }
        report(switch (before) {
            case LEADER -> new SteppedDown(currentTerm, m.from() == transferee
                    ? SteppedDown.Cause.TRANSFER_COMPLETED : SteppedDown.Cause.HIGHER_TERM, m.from());
            case PRE_CANDIDATE, CANDIDATE -> new BecameFollower(currentTerm, leader, before);
            case FOLLOWER -> new LeaderChanged(currentTerm, leader, leaderBefore);
        });
        return true;
    }

    /** A message from a lower term: "reply false" to requests (§5.1) so a stale sender learns the term. */
    private final class LowerTerm implements Message.Visitor<Void> {

        // A deposed leader (or one cut off and healed) learns our term from the rejection and steps down.

        @Override
        public Void visit(AppendEntries m) {
            send(new AppendEntriesResponse(currentTerm, id, m.from(), false, 0, 0, 0, 0));
            return null;
        }

        @Override
        public Void visit(Heartbeat m) {
            send(new AppendEntriesResponse(currentTerm, id, m.from(), false, 0, 0, 0, 0));
            return null;
        }

        @Override
        public Void visit(InstallSnapshot m) {
            send(new AppendEntriesResponse(currentTerm, id, m.from(), false, 0, 0, 0, 0));
            return null;
        }

        @Override
        public Void visit(RequestVote m) {
            report(new VoteDenied(m.term(), m.from(), m.preVote(), VoteDenied.Reason.STALE_TERM));
            send(new RequestVoteResponse(currentTerm, id, m.from(), false, m.preVote()));
            return null;
        }

        // Stale responses and the rest are dropped: they answer, or ask about, a term that is over.

        @Override
        public Void visit(RequestVoteResponse m) {
            return null;
        }

        @Override
        public Void visit(AppendEntriesResponse m) {
            return null;
        }

        @Override
        public Void visit(HeartbeatResponse m) {
            return null;
        }

        @Override
        public Void visit(TimeoutNow m) {
            return null;
        }

        @Override
        public Void visit(ReadIndexRequest m) {
            return null;
        }

        @Override
        public Void visit(ReadIndexResponse m) {
            return null;
        }
    }

    /** A message of the current term (or one {@link HigherTerm} let through) to its handler. */
    private final class Dispatch implements Message.Visitor<Void> {

        @Override
        public Void visit(RequestVote m) {
            handleRequestVote(m);
            return null;
        }

        @Override
        public Void visit(RequestVoteResponse m) {
            handleVoteResponse(m);
            return null;
        }

        @Override
        public Void visit(AppendEntries m) {
            handleAppendEntries(m);
            return null;
        }

        @Override
        public Void visit(AppendEntriesResponse m) {
            handleAppendEntriesResponse(m);
            return null;
        }

        @Override
        public Void visit(Heartbeat m) {
            handleHeartbeat(m);
            return null;
        }

        @Override
        public Void visit(HeartbeatResponse m) {
            handleHeartbeatResponse(m);
            return null;
        }

        @Override
        public Void visit(InstallSnapshot m) {
            handleInstallSnapshot(m);
            return null;
        }

        @Override
        public Void visit(TimeoutNow m) {
            handleTimeoutNow(m);
            return null;
        }

        @Override
        public Void visit(ReadIndexRequest m) {
            handleReadIndexRequest(m);
            return null;
        }

        @Override
        public Void visit(ReadIndexResponse m) {
            handleReadIndexResponse(m);
            return null;
        }
    }

    // =====================================================================================
    // Leader election (§5.2, §5.4.1, §9.6)
    // =====================================================================================

    private void tickElection() {
        electionElapsed++;
        if (isPromotable() && electionElapsed >= randomizedElectionTimeout) {
            // §5.2: "If election timeout elapses without receiving AppendEntries RPC from current leader
            // or granting vote to candidate: convert to candidate".
            campaign(options.preVote(), leaderReportedDown ? ElectionStarted.Cause.LEADER_DOWN
                    : ElectionStarted.Cause.ELECTION_TIMEOUT);
        }
    }

    /**
     * Whether this server may stand for election. A voter may; a learner, or a server outside the
     * configuration, ignores its election timer. One exception: a server that was a voter until the latest
     * change in its log removed it, while it does not know that change to be committed. The cluster may
     * still need it: a leader that removed itself and then lost its lead (a crash, CheckQuorum) may be the
     * only server holding the change, and its longer log makes it refuse its vote to the others — if it did
     * not stand, no one could ever be elected. It counts only the new voters' votes, never its own; if it
     * wins, it commits the change and steps down (§4.2.2, design.md M5).
     */
    private boolean isPromotable() {
        return configuration.isVoter(id)
                || (configurations.latestIndex() > log.commitIndex() && configurations.previous().isVoter(id));
    }

    /** Start a pre-election (§9.6) or an election (§5.2). */
    private void campaign(boolean preVote, ElectionStarted.Cause cause) {
        long voteTerm;
        if (preVote) {
            becomePreCandidate();
            voteTerm = currentTerm + 1;
            preVoteRounds++;
        } else {
            becomeCandidate();
            voteTerm = currentTerm;
        }
        report(new ElectionStarted(voteTerm, preVote, cause));
        boolean leadershipTransfer = cause == ElectionStarted.Cause.LEADERSHIP_TRANSFER;
        votes.put(id, true); // vote for self
        if (configuration.voteResult(votes) == Configuration.VoteResult.WON) {
            onElectionWon(preVote);
            return;
        }
        for (long peer : configuration.voters()) {
            if (peer != id) {
                send(new RequestVote(voteTerm, id, peer, log.lastIndex(), log.lastTerm(), preVote,
                        leadershipTransfer));
            }
        }
    }

    private void onElectionWon(boolean preVote) {
        if (preVote) {
            campaign(false, ElectionStarted.Cause.PRE_VOTE_WON);
        } else {
            becomeLeader();
        }
    }

    /**
     * RequestVote receiver (Figure 2): "1. Reply false if term < currentTerm" (done in
     * {@link LowerTerm}); "2. If votedFor is null or candidateId, and candidate's log is at least as
     * up-to-date as receiver's log, grant vote" (§5.2, §5.4.1).
     */
    private void handleRequestVote(RequestVote m) {
        boolean canVote = votedFor == m.from()
                || (votedFor == NONE && leaderId == NONE)
                || (m.preVote() && m.term() > currentTerm);
        if (canVote && log.isUpToDate(m.lastLogIndex(), m.lastLogTerm())) {
            send(new RequestVoteResponse(m.term(), id, m.from(), true, m.preVote()));
            if (!m.preVote()) {
                votedFor = m.from();
                electionElapsed = 0; // §5.2: granting a vote resets the election timer
            }
            report(new VoteGranted(m.term(), m.from(), m.preVote()));
        } else {
            send(new RequestVoteResponse(currentTerm, id, m.from(), false, m.preVote()));
            VoteDenied.Reason why = canVote ? VoteDenied.Reason.LOG_NOT_UP_TO_DATE
                    : votedFor != NONE ? VoteDenied.Reason.ALREADY_VOTED : VoteDenied.Reason.LEADER_KNOWN;
            report(new VoteDenied(m.term(), m.from(), m.preVote(), why));
        }
    }

    private void handleVoteResponse(RequestVoteResponse m) {
        boolean counting = (role == Role.PRE_CANDIDATE && m.preVote()) || (role == Role.CANDIDATE && !m.preVote());
        if (!counting) {
            return;
        }
        votes.put(m.from(), m.voteGranted());
        switch (configuration.voteResult(votes)) {
            case WON -> onElectionWon(role == Role.PRE_CANDIDATE);
            case LOST -> loseElection();
            case PENDING -> { }
        }
    }

    /** §5.2: a majority refused; wait for a leader or a new timeout, and retry. */
    private void loseElection() {
        boolean preVote = role == Role.PRE_CANDIDATE;
        int granted = 0;
        for (boolean vote : votes.values()) {
            granted += vote ? 1 : 0;
        }
        report(new ElectionLost(preVote ? currentTerm + 1 : currentTerm, preVote, granted,
                configuration.voters().size()));
        becomeFollower(currentTerm, NONE);
    }

    /** Last step of a leadership transfer (§3.10): start a real election at once, no PreVote. */
    private void handleTimeoutNow(TimeoutNow m) {
        if (isPromotable() && role != Role.LEADER) {
            campaign(false, ElectionStarted.Cause.LEADERSHIP_TRANSFER);
        }
    }

    // =====================================================================================
    // Role changes
    // =====================================================================================

    private void becomeFollower(long term, long leader) {
        if (term > currentTerm) {
            currentTerm = term;
            votedFor = NONE;
        }
        role = Role.FOLLOWER;
        leaderId = leader;
        resetVolatileRoleState();
    }

    private void becomePreCandidate() {
        // §9.6: a pre-candidate keeps its term and vote; it only asks whether it could win.
        role = Role.PRE_CANDIDATE;
        leaderId = NONE;
        resetVolatileRoleState();
    }

    private void becomeCandidate() {
        // §5.2: "increment currentTerm, vote for self, reset election timer, send RequestVote RPCs".
        currentTerm++;
        votedFor = id;
        role = Role.CANDIDATE;
        leaderId = NONE;
        resetVolatileRoleState();
    }

    private void becomeLeader() {
        Map<Long, Boolean> ballots = Map.copyOf(votes);
        role = Role.LEADER;
        leaderId = id;
        resetVolatileRoleState();
        report(new BecameLeader(currentTerm, preVoteRounds));
        preVoteRounds = 0;
        // Figure 2: "nextIndex initialized to leader last log index + 1, matchIndex to 0".
        syncProgress();
        // An answer to our RequestVote is a message of this term: those servers were heard from just now.
        ballots.keySet().forEach(voter -> {
            if (progress.get(voter) != null) {
                progress.get(voter).lastHeardTick = ticks;
            }
        });
        progress.get(id).matchIndex = log.persistedIndex();
        // §5.4.2 / §8: commit entries of earlier terms by committing one of our own, at once.
        Entry noOp = Entry.noOp(log.lastIndex() + 1, currentTerm);
        log.appendAtEnd(List.of(noOp));
        broadcastAppend(true);
    }

    private void resetVolatileRoleState() {
        electionElapsed = 0;
        heartbeatElapsed = 0;
        randomizedElectionTimeout = options.electionTicks() + random.nextInt(options.electionTicks());
        votes.clear();
        progress.clear();
        leadTransferee = NONE;
        readOnly.reset();
        uncommittedBytes = 0;
        refusingProposals = false;
        leaderReportedDown = false;
    }

    // =====================================================================================
    // Log replication, follower side (§5.3)
    // =====================================================================================

    /**
     * The leader of the current term spoke (AppendEntries, heartbeat or snapshot): a candidate yields to it
     * (§5.2), and the election timer restarts (Figure 2, Rules for Followers).
     */
    private void followLeader(long leader) {
        if (role != Role.FOLLOWER) {
            Role before = role;
            becomeFollower(currentTerm, leader);
            report(new BecameFollower(currentTerm, leader, before));
        } else if (leaderId != leader) {
            report(new LeaderChanged(currentTerm, leader, leaderId));
        }
        leaderId = leader;
        electionElapsed = 0;
        preVoteRounds = 0;
        if (leaderReportedDown) {
            // The report was wrong: the leader lives. Give back the full randomized timeout the report cut to
            // a tick or two, or this follower keeps timing out between heartbeats (issue 32).
            randomizedElectionTimeout = options.electionTicks() + random.nextInt(options.electionTicks());
            leaderReportedDown = false;
        }
    }

    /**
     * AppendEntries receiver (Figure 2):
     * 2. reply false if the log doesn't contain an entry at prevLogIndex whose term matches prevLogTerm;
     * 3–4. delete conflicting entries and append new ones (never truncating on a stale message);
     * 5. if leaderCommit > commitIndex, set commitIndex = min(leaderCommit, index of last new entry).
     * The reply leaves only after the entries are durable (Ready contract).
     */
    private void handleAppendEntries(AppendEntries m) {
        followLeader(m.from());
        if (m.prevLogIndex() < log.commitIndex()) {
            // Everything up to our commit index already matches the leader's log (§5.4.3); answer from
            // there, dropping the part of the message we know to be applied.
            acceptFromCommit(m);
            return;
        }
        if (!log.matchTerm(m.prevLogIndex(), m.prevLogTerm())) {
            long conflictIndex;
            long conflictTerm;
            if (m.prevLogIndex() > log.lastIndex()) {
                conflictIndex = log.lastIndex() + 1; // our log is too short
                conflictTerm = 0;
            } else {
                conflictTerm = log.term(m.prevLogIndex());
                conflictIndex = log.firstIndexOfTermAt(m.prevLogIndex());
            }
            send(new AppendEntriesResponse(currentTerm, id, m.from(), false, 0, m.prevLogIndex(),
                    conflictIndex, conflictTerm));
            return;
        }
        long lastNew = log.appendFromLeader(m.prevLogIndex(), m.entries());
        logWritten(m.entries());
        log.commitTo(Math.min(m.leaderCommit(), lastNew));
        acknowledge(m, lastNew);
    }

    /**
     * The success answer, unless {@code m} is a commit notice: its answer would only repeat an
     * acknowledgement the leader already counts (not sending it is the same as losing it).
     */
    private void acknowledge(AppendEntries m, long lastNew) {
        if (!m.commitNotice()) {
            send(new AppendEntriesResponse(currentTerm, id, m.from(), true, lastNew, 0, 0, 0));
        }
    }

    private void acceptFromCommit(AppendEntries m) {
        long commit = log.commitIndex();
        List<Entry> rest = new ArrayList<>();
        for (Entry e : m.entries()) {
            if (e.index() > commit) {
                rest.add(e);
            }
        }
        long lastNew = commit;
        if (!rest.isEmpty()) {
            // The entry at our commit index matches the leader's (Log Matching), so rest follows it.
            lastNew = log.appendFromLeader(commit, rest);
            logWritten(rest);
        }
        log.commitTo(Math.min(m.leaderCommit(), lastNew));
        acknowledge(m, lastNew);
    }

    private void handleHeartbeat(Heartbeat m) {
        followLeader(m.from());
        // The leader caps the heartbeat's commit index at what it knows we hold, so this is safe.
        log.commitTo(Math.min(m.commitIndex(), log.lastIndex()));
        send(new HeartbeatResponse(currentTerm, id, m.from(), m.readRound(), log.lastIndex()));
    }

    /**
     * InstallSnapshot receiver (§7, Figure 13): if our log already holds the snapshot's last entry, keep
     * the entries after it; otherwise discard the whole log and restore from the snapshot.
     */
    private void handleInstallSnapshot(InstallSnapshot m) {
        followLeader(m.from());
        SnapshotMetadata meta = m.snapshot().metadata();
        long match;
        if (meta.lastIncludedIndex() <= log.commitIndex()) {
            match = log.commitIndex(); // stale or duplicate snapshot: we are already past it
        } else if (log.matchTerm(meta.lastIncludedIndex(), meta.lastIncludedTerm())) {
            log.commitTo(meta.lastIncludedIndex()); // rule 6: retain the entries that follow
            match = meta.lastIncludedIndex();
        } else {
            log.restore(meta); // rules 7-8
            latestSnapshot = m.snapshot();
            pendingSnapshot = m.snapshot();
            configurations.restore(meta);
            configuration = configurations.latest();
            everMember |= configuration.isMember(id);
            match = meta.lastIncludedIndex();
            report(new SnapshotInstalled(currentTerm, m.from(), meta.lastIncludedIndex()));
        }
        send(new AppendEntriesResponse(currentTerm, id, m.from(), true, match, 0, 0, 0));
    }

    // =====================================================================================
    // Log replication, leader side (§5.3, §5.4.2, §10.2)
    // =====================================================================================

    private void tickLeader() {
        if (settleCommittedConfiguration()) {
            return;
        }
        heartbeatElapsed++;
        electionElapsed++;
        if (electionElapsed >= options.electionTicks()) {
            electionElapsed = 0;
            if (options.checkQuorum() && !quorumRecentlyActive()) {
                // CheckQuorum (§6.2): a leader cut off from a majority steps down rather than serving
                // stale reads or accepting writes it can never commit.
                becomeFollower(currentTerm, NONE);
                report(new SteppedDown(currentTerm, SteppedDown.Cause.QUORUM_LOST, NONE));
                return;
            }
            if (leadTransferee != NONE) {
                report(new TransferAborted(currentTerm, leadTransferee));
            }
            leadTransferee = NONE; // §3.10: abort a transfer that did not finish within an election timeout
        }
        if (heartbeatElapsed >= options.heartbeatTicks()) {
            heartbeatElapsed = 0;
            broadcastHeartbeat();
            for (var e : progress.entrySet()) {
                Progress pr = e.getValue();
                if (pr.state == Progress.State.SNAPSHOT
                        && (pr.snapshotTicks += options.heartbeatTicks()) >= options.snapshotRetryTicks()) {
                    pr.becomeProbe(); // the snapshot or its answer was lost; find out where it stands
                }
            }
        }
    }

    private boolean quorumRecentlyActive() {
        int active = 0;
        for (var e : progress.entrySet()) {
            // Only voters count (§4.2.1): learners, and a leader that is removing itself, do not.
            if (configuration.isVoter(e.getKey()) && (e.getKey() == id || e.getValue().recentActive)) {
                active++;
            }
            if (e.getKey() != id) {
                e.getValue().recentActive = false;
            }
        }
        return active >= configuration.quorum();
    }

    private void broadcastHeartbeat() {
        for (var e : progress.entrySet()) {
            long peer = e.getKey();
            if (peer != id) {
                // Never tell a follower to commit beyond what it is known to hold.
                long commit = Math.min(e.getValue().matchIndex, log.commitIndex());
                send(new Heartbeat(currentTerm, id, peer, commit, readOnly.sentRound()));
            }
        }
    }

    private void broadcastAppend(boolean sendIfEmpty) {
        for (long peer : progress.keySet()) {
            if (peer != id) {
                sendAppend(peer, sendIfEmpty);
            }
        }
    }

    /**
     * The commit index moved: tell every follower now rather than at the next heartbeat (followers apply,
     * serve reads and deliver watch events from it). A follower with entries to send gets them, carrying
     * leaderCommit; one in REPLICATE state with nothing new gets a commit notice, which it does not answer
     * (see {@link AppendEntries}); a probing one gets an ordinary AppendEntries, whose answer it needs.
     */
    private void broadcastCommit() {
        for (long peer : progress.keySet()) {
            if (peer != id) {
                sendAppend(peer, true, true);
            }
        }
    }

    /**
     * Send the follower what it lacks, if its flow control allows: entries from nextIndex, or the
     * snapshot if those entries were compacted (§7). In REPLICATE state nextIndex moves on at once
     * (pipelining); in PROBE state one message waits for its answer.
     */
    private boolean sendAppend(long to, boolean sendIfEmpty) {
        return sendAppend(to, sendIfEmpty, false);
    }

    /** @param notice an empty message to a follower in REPLICATE state may go as a commit notice (no answer) */
    private boolean sendAppend(long to, boolean sendIfEmpty, boolean notice) {
        Progress pr = progress.get(to);
        if (pr.isPaused()) {
            return false;
        }
        long prevLogIndex = pr.nextIndex - 1;
        long prevLogTerm = log.term(prevLogIndex);
        if (prevLogTerm < 0) {
            return sendSnapshot(to, pr);
        }
        List<Entry> entries = log.slice(pr.nextIndex, log.lastIndex() + 1, options.maxEntriesBytesPerMessage());
        if (entries.isEmpty() && !sendIfEmpty) {
            return false;
        }
        boolean commitNotice = notice && entries.isEmpty() && pr.state == Progress.State.REPLICATE;
        send(new AppendEntries(currentTerm, id, to, prevLogIndex, prevLogTerm, entries, log.commitIndex(),
                commitNotice));
        if (pr.state == Progress.State.REPLICATE) {
            if (!entries.isEmpty()) {
                long last = entries.get(entries.size() - 1).index();
                long bytes = 0;
                for (Entry e : entries) {
                    bytes += e.sizeBytes();
                }
                pr.nextIndex = last + 1;
                pr.inflights.add(last, bytes);
            }
        } else {
            pr.probeSent = true;
        }
        return true;
    }

    private boolean sendSnapshot(long to, Progress pr) {
        if (latestSnapshot == null) {
            throw new IllegalStateException("entry " + (pr.nextIndex - 1) + " for node " + to
                    + " was compacted but there is no snapshot");
        }
        send(new InstallSnapshot(currentTerm, id, to, latestSnapshot));
        pr.becomeSnapshot(latestSnapshot.index());
        return true;
    }

    private void handleAppendEntriesResponse(AppendEntriesResponse m) {
        if (role != Role.LEADER) {
            return;
        }
        Progress pr = progress.get(m.from());
        pr.recentActive = true;
        if (!m.success()) {
            if (pr.maybeDecreaseTo(m.rejectedIndex(), nextIndexFromHint(m))) {
                sendAppend(m.from(), true);
            }
            return;
        }
        boolean wasPaused = pr.isPaused();
        if (pr.maybeUpdate(m.matchIndex())) {
            switch (pr.state) {
                case PROBE -> pr.becomeReplicate();
                case SNAPSHOT -> {
                    if (pr.matchIndex >= pr.pendingSnapshotIndex || pr.matchIndex + 1 >= log.firstIndex()) {
                        pr.becomeProbe();
                        pr.becomeReplicate();
                    }
                }
                case REPLICATE -> pr.inflights.freeTo(m.matchIndex());
            }
            if (maybeCommit()) {
                broadcastCommit(); // tell followers the new commit index without waiting a heartbeat
            } else if (wasPaused) {
                // It was paused while the commit index moved on; tell it now, even with no new entries.
                sendAppend(m.from(), true);
            }
            // Fill the pipeline: keep sending while flow control allows and there is something to send.
            while (sendAppend(m.from(), false)) {
                // each call sends one message and moves nextIndex on
            }
            if (m.from() == leadTransferee && pr.matchIndex == log.lastIndex()) {
                send(new TimeoutNow(currentTerm, id, m.from())); // §3.10: the target is caught up
            }
        } else if (pr.state == Progress.State.REPLICATE) {
            pr.inflights.freeTo(m.matchIndex());
        }
    }

    /**
     * Where a rejection's conflict hint says to continue (fast backtracking): if we hold entries of the
     * follower's conflicting term, resume after our last one; otherwise skip that term entirely.
     */
    private long nextIndexFromHint(AppendEntriesResponse m) {
        if (m.conflictTerm() == 0) {
            return m.conflictIndex();
        }
        long ours = log.lastIndexOfTerm(m.conflictTerm(), m.rejectedIndex());
        return ours > 0 ? ours + 1 : m.conflictIndex();
    }

    private void handleHeartbeatResponse(HeartbeatResponse m) {
        if (role != Role.LEADER) {
            return;
        }
        Progress pr = progress.get(m.from());
        pr.recentActive = true;
        pr.probeSent = false; // the follower is reachable: let a lost probe be retried
        if (m.lastLogIndex() < pr.matchIndex) {
            // It no longer holds what it acknowledged: its storage was wiped or replaced. Raft assumes
            // stable storage, so this is an operator's doing; start over from what it has (§7 if needed).
            pr.matchIndex = m.lastLogIndex();
            pr.becomeProbe();
        }
        if (pr.state == Progress.State.REPLICATE && pr.inflights.full()) {
            // The window may be full of messages the network lost; free one slot so the next send can
            // reveal that (the follower rejects it and we fall back to probing).
            pr.inflights.freeFirst();
        }
        if (pr.matchIndex < log.lastIndex()) {
            sendAppend(m.from(), true);
        }
        if (m.readRound() > pr.readRoundAcked) {
            pr.readRoundAcked = m.readRound();
            confirmReads();
        }
    }

    /**
     * §5.3 and §5.4.2: an entry is committed once the leader that created it has replicated it on a
     * majority; the leader commits by counting replicas only entries of its current term (Figure 8),
     * and its own copy counts only once durable (§10.2.1: its match index moves in {@link #advance}).
     */
    private boolean maybeCommit() {
        long candidate = configuration.committedIndex(peer -> progress.get(peer).matchIndex);
        if (candidate <= log.commitIndex() || log.term(candidate) != currentTerm) {
            return false;
        }
        long oldCommit = log.commitIndex();
        log.commitTo(candidate);
        for (long i = oldCommit + 1; i <= candidate; i++) {
            uncommittedBytes = Math.max(0, uncommittedBytes - log.entry(i).sizeBytes());
        }
        for (ReadOnly.PendingRead r : readOnly.takeAwaitingCommit()) {
            acceptRead(r.requester(), r.contexts());
        }
        return true;
    }

    // =====================================================================================
    // Linearizable reads (§6.4)
    // =====================================================================================

    private void handleReadIndexRequest(ReadIndexRequest m) {
        if (role == Role.LEADER) {
            acceptRead(m.from(), m.contexts());
        }
    }

    private void handleReadIndexResponse(ReadIndexResponse m) {
        for (long context : m.contexts()) {
            readStates.add(new ReadState(context, m.readIndex()));
        }
    }

    /**
     * §6.4: 1. the leader must have committed an entry of its term (else it may not know the latest
     * commit index); 2. record commitIndex as the read index; 3. confirm it is still the leader with a
     * round of heartbeats; 4. release the read once the state machine reaches the read index.
     */
    private void acceptRead(long requester, List<Long> contexts) {
        if (log.term(log.commitIndex()) != currentTerm) {
            readOnly.awaitCommit(requester, contexts);
            return;
        }
        long readIndex = log.commitIndex();
        if (configuration.voters().equals(Set.of(id))) { // the only voter: no one else to confirm with
            release(new ReadOnly.PendingRead(requester, contexts, readIndex, 0));
            return;
        }
        if (readOnly.add(requester, contexts, readIndex)) {
            broadcastHeartbeat();
        }
    }

    private void confirmReads() {
        Progress self = progress.get(id);
        self.readRoundAcked = readOnly.sentRound();
        long confirmed = configuration.committedIndex(peer -> progress.get(peer).readRoundAcked);
        ReadOnly.Confirmation c = readOnly.confirm(confirmed);
        for (ReadOnly.PendingRead r : c.released()) {
            release(r);
        }
        if (c.startNextRound()) {
            broadcastHeartbeat();
        }
    }

    private void release(ReadOnly.PendingRead r) {
        if (r.requester() == id) {
            for (long context : r.contexts()) {
                readStates.add(new ReadState(context, r.readIndex()));
            }
        } else {
            send(new ReadIndexResponse(currentTerm, id, r.requester(), r.contexts(), r.readIndex()));
        }
    }

    // =====================================================================================
    // Membership changes (§4)
    // =====================================================================================

    /**
     * Propose a single-server membership change (§4.1): add a learner or a voter, promote a learner, or
     * remove a server — the leader itself included (§4.2.2). The new configuration is appended as a
     * {@link Entry.Type#CONFIGURATION} entry and is in force on this leader at once; the change is done
     * when that entry is committed. Refused, with a reason, unless this node leads, is not handing
     * leadership over, has committed an entry of its own term, has no other change uncommitted, the
     * change fits the configuration (a promoted learner must answer and be caught up), and the voters
     * that answer form a quorum of the new configuration ({@link #proposeConfChange(ConfChange, boolean)}).
     */
    public ConfChangeResult proposeConfChange(ConfChange change) {
        return proposeConfChange(change, false);
    }

    /**
     * {@link #proposeConfChange(ConfChange)}, with <b>strict reconfiguration</b> (etcd's
     * {@code --strict-reconfig-check}; design MF2) unless {@code force}: a change is refused
     * {@link ConfChangeResult.Reason#QUORUM_AT_RISK} unless the voters of the configuration it produces that
     * this leader heard from within an election timeout, itself included, are a quorum of it. §4.1 makes a
     * configuration entry count under the new configuration as soon as it is appended; if too few of its
     * voters answer, the entry can never commit, cannot be withdrawn, and the cluster is stuck. A server
     * being added as a voter has not answered yet, so it does not count. {@code force} skips this check
     * only: never the §4.1 rules, nor the promotion rules (§4.2.1).
     */
    public ConfChangeResult proposeConfChange(ConfChange change, boolean force) {
        requireNoOutstandingReady();
        Objects.requireNonNull(change, "change");
        ConfChangeResult.Reason refusal = confChangeRefusal(change, force);
        if (refusal != null) {
            Set<Long> responding = refusal == ConfChangeResult.Reason.QUORUM_AT_RISK
                    || refusal == ConfChangeResult.Reason.LEARNER_NOT_RESPONDING ? responding() : Set.of();
            return new ConfChangeResult.Refused(refusal, leaderId == id ? NONE : leaderId, responding);
        }
        Configuration next = change.applyTo(configuration);
        Entry entry = Entry.configuration(log.lastIndex() + 1, currentTerm, next);
        uncommittedBytes += entry.sizeBytes(); // a change is small and one at a time: not held to the limit
        log.appendAtEnd(List.of(entry));
        logWritten(List.of(entry));
        broadcastAppend(true); // also probes the servers just added
        maybeCommit();
        return new ConfChangeResult.Accepted(currentTerm, entry.index(), next);
    }

    private ConfChangeResult.Reason confChangeRefusal(ConfChange change, boolean force) {
        if (role != Role.LEADER || !configuration.isVoter(id)) {
            return ConfChangeResult.Reason.NOT_LEADER; // a leader that removed itself is about to step down
        }
        if (leadTransferee != NONE) {
            return ConfChangeResult.Reason.TRANSFERRING_LEADERSHIP;
        }
        if (log.term(log.commitIndex()) != currentTerm) {
            // Ongaro's 2015 correction to §4.1: until an entry of this term is committed, a configuration
            // entry of an earlier leader may sit uncommitted in other logs; a change made on top of a
            // different one could give two configurations without a common majority.
            return ConfChangeResult.Reason.NOT_YET_COMMITTED_IN_TERM;
        }
        if (configurations.latestIndex() > log.commitIndex()) {
            return ConfChangeResult.Reason.CHANGE_IN_PROGRESS; // §4.1: one uncommitted change at a time
        }
        ConfChangeResult.Reason misfit = change.misfit(configuration);
        if (misfit != null) {
            return misfit;
        }
        if (change.type() == ConfChange.Type.PROMOTE) {
            // §4.2.1: a voter must be able to vote at once; a dead or silent learner would be a dead voter.
            if (!responding(change.node())) {
                return ConfChangeResult.Reason.LEARNER_NOT_RESPONDING;
            }
            if (!caughtUp(progress.get(change.node()))) {
                return ConfChangeResult.Reason.LEARNER_BEHIND;
            }
        }
        if (!force) {
            Configuration next = change.applyTo(configuration);
            long answering = next.voters().stream().filter(this::responding).count();
            if (answering < next.quorum()) {
                return ConfChangeResult.Reason.QUORUM_AT_RISK;
            }
        }
        return null;
    }

    /**
     * Whether this leader heard from {@code server} within the last election timeout (it hears from itself
     * always). A server it does not replicate to has not answered in this term.
     */
    private boolean responding(long server) {
        if (server == id) {
            return true;
        }
        Progress pr = progress.get(server);
        return pr != null && pr.lastHeardTick != Progress.NEVER && ticks - pr.lastHeardTick <= options.electionTicks();
    }

    /** The servers this leader replicates to that answered within the last election timeout, itself included. */
    private Set<Long> responding() {
        Set<Long> out = new TreeSet<>();
        for (long server : progress.keySet()) {
            if (responding(server)) {
                out.add(server);
            }
        }
        return Set.copyOf(out);
    }

    /** §4.2.1: see {@link ConfChange#PROMOTION_MAX_LAG_ENTRIES}. */
    private boolean caughtUp(Progress learner) {
        return learner.matchIndex > 0 && log.lastIndex() - learner.matchIndex <= ConfChange.PROMOTION_MAX_LAG_ENTRIES;
    }

    /**
     * §4.1: a server takes messages from servers outside its configuration too — a new server hears from a
     * leader it does not know yet, and a candidate may need the vote of a server that has not yet appended
     * the entry adding the candidate. Only answers to a leader (acknowledgements and read requests) are
     * taken from the servers it replicates to alone: from anyone else they are a removed server's late
     * message. Removed servers cannot disrupt by their elections: PreVote and the voters' leader lease do
     * that work (§4.2.3, {@link #stepHigherTerm}).
     */
    private boolean acceptsFrom(Message m) {
        boolean toLeader = m instanceof AppendEntriesResponse || m instanceof HeartbeatResponse
                || m instanceof ReadIndexRequest;
        return !toLeader || configuration.isMember(m.from()) || progress.containsKey(m.from());
    }

    /**
     * Entries were written to the log (by this leader, or from the leader's AppendEntries, perhaps after
     * truncating a conflicting suffix): a configuration entry among them is in force at once, and a
     * truncated one no longer is (§4.1).
     */
    private void logWritten(List<Entry> written) {
        configurations.written(written, log.lastIndex());
        configuration = configurations.latest();
        everMember |= configuration.isMember(id);
        if (role == Role.LEADER) {
            syncProgress();
        }
    }

    /**
     * The servers a leader replicates to: the members (voters and learners) of its configuration and,
     * while that configuration is uncommitted, the members of the one before it — so that a server being
     * removed still receives the entry that removes it and learns it is out, and a leader removing itself
     * keeps every server up to date until the change commits (§4.2.2). The leader itself is always one.
     */
    private Set<Long> replicationTargets() {
        Set<Long> targets = new TreeSet<>(configuration.members());
        if (configurations.latestIndex() > log.commitIndex()) {
            targets.addAll(configurations.previous().members());
        }
        targets.add(id);
        return targets;
    }

    /** Give every replication target a {@link Progress}, and drop the Progress of everyone else. */
    private void syncProgress() {
        Set<Long> targets = replicationTargets();
        progress.keySet().retainAll(targets);
        for (long peer : targets) {
            if (!progress.containsKey(peer)) {
                Progress pr = new Progress(log.lastIndex() + 1, options.maxInflightMessages(), options.maxInflightBytes());
                pr.recentActive = true;
                progress.put(peer, pr);
            }
        }
    }

    /**
     * Leader, on each tick: once its latest configuration is committed, stop replicating to the servers
     * that configuration removed; and a leader that is not one of its voters steps down (§4.2.2), first
     * handing over to a caught-up voter with TimeoutNow (§3.10) so that the cluster need not wait out an
     * election timeout. Done on the tick after the commit, when the commit index has gone out with the
     * AppendEntries that followed it. Returns whether this node stepped down.
     */
    private boolean settleCommittedConfiguration() {
        if (configurations.latestIndex() > log.commitIndex()) {
            return false;
        }
        syncProgress();
        if (configuration.isVoter(id)) {
            return false;
        }
        long successor = NONE;
        for (long voter : configuration.voters()) {
            Progress pr = progress.get(voter);
            if (successor == NONE && pr.matchIndex == log.lastIndex()) {
                successor = voter;
            }
        }
        if (successor != NONE) {
            send(new TimeoutNow(currentTerm, id, successor));
        }
        becomeFollower(currentTerm, NONE);
        report(new SteppedDown(currentTerm, SteppedDown.Cause.REMOVED_FROM_CONFIGURATION, successor));
        return true;
    }

    // =====================================================================================
    // Plumbing
    // =====================================================================================

    private void send(Message m) {
        boolean early = role == Role.LEADER && m.term() == currentTerm && m.accept(MAY_SEND_BEFORE_PERSIST);
        (early ? leaderMessages : messages).add(m);
    }

    /** Record what happened, for the runtime's log ({@link Ready#events()}). */
    private void report(RaftEvent event) {
        events.add(event);
    }

    /**
     * Which of a leader's messages may leave before its own write finishes ({@link Ready#leaderMessages()},
     * §10.2.1): those that promise nothing about the leader's disk. Votes and acknowledgements promise what
     * the write makes durable (Figure 2: "updated on stable storage before responding to RPCs").
     */
    private static final Message.Visitor<Boolean> MAY_SEND_BEFORE_PERSIST = new SendBeforePersist();

    /** See {@link #MAY_SEND_BEFORE_PERSIST}. */
    private static final class SendBeforePersist implements Message.Visitor<Boolean> {

        // Replication: the leader counts its own copy toward commitment only after advance().

        @Override
        public Boolean visit(AppendEntries m) {
            return true;
        }

        @Override
        public Boolean visit(Heartbeat m) {
            return true;
        }

        @Override
        public Boolean visit(InstallSnapshot m) {
            return true;
        }

        @Override
        public Boolean visit(TimeoutNow m) {
            return true; // it asks for an election and promises nothing about the leader's disk
        }

        // Promises about this node's disk, or never sent by a leader: after the write.

        @Override
        public Boolean visit(RequestVote m) {
            return false;
        }

        @Override
        public Boolean visit(RequestVoteResponse m) {
            return false;
        }

        @Override
        public Boolean visit(AppendEntriesResponse m) {
            return false;
        }

        @Override
        public Boolean visit(HeartbeatResponse m) {
            return false;
        }

        @Override
        public Boolean visit(ReadIndexRequest m) {
            return false;
        }

        @Override
        public Boolean visit(ReadIndexResponse m) {
            return false; // nothing gained by sending early: the follower waits to apply up to its index
        }
    }

    private HardState currentHardState() {
        return new HardState(currentTerm, votedFor, log.commitIndex());
    }

    private SoftState softState() {
        return new SoftState(role, leaderId, currentTerm);
    }

    private void requireNoOutstandingReady() {
        if (outstanding != null) {
            throw new IllegalStateException("advance() the outstanding Ready before giving the node more input");
        }
    }

    // =====================================================================================
    // Read-only views (status, tests, the simulator's invariant checks)
    // =====================================================================================

    public long id() {
        return id;
    }

    public Role role() {
        return role;
    }

    public long currentTerm() {
        return currentTerm;
    }

    public long votedFor() {
        return votedFor;
    }

    public long leaderId() {
        return leaderId;
    }

    public long commitIndex() {
        return log.commitIndex();
    }

    /** lastApplied (Figure 2), counted when committed entries leave in a Ready. */
    public long appliedIndex() {
        return log.appliedIndex();
    }

    public long firstIndex() {
        return log.firstIndex();
    }

    public long lastIndex() {
        return log.lastIndex();
    }

    public long lastTerm() {
        return log.lastTerm();
    }

    /** Term of the entry at {@code index}; 0 for index 0, -1 if compacted or beyond the end. */
    public long term(long index) {
        return log.term(index);
    }

    /** Live read-only view of the in-memory log after the compaction point; do not keep it. */
    public List<Entry> logEntries() {
        return log.entries();
    }

    /** The configuration in force: the latest in the log, committed or not (§4.1). */
    public Configuration configuration() {
        return configuration;
    }

    /**
     * Whether this server knows it was removed for good (§4.2.2): a configuration it held named it, the latest
     * one does not, that one is committed, and it no longer leads (a leader removing itself steps down first).
     * Its runtime may then stop: ids are never reused, so no later change can take it back.
     */
    public boolean removedFromConfiguration() {
        return everMember && !configuration.isMember(id) && configurations.latestIndex() <= log.commitIndex()
                && role != Role.LEADER;
    }

    public Snapshot latestSnapshot() {
        return latestSnapshot;
    }

    public long leadTransferee() {
        return leadTransferee;
    }

    /**
     * The leader's view of a follower's replication, for status pages and tests; {@code responding}: heard
     * from within the last election timeout, as strict reconfiguration counts it.
     */
    public record ProgressView(long matchIndex, long nextIndex, String state, int inflight, boolean responding) {
    }

    /** Per-follower replication state if this node leads, else an empty map. */
    public Map<Long, ProgressView> progress() {
        Map<Long, ProgressView> view = new TreeMap<>();
        if (role == Role.LEADER) {
            progress.forEach((peer, pr) -> view.put(peer,
                    new ProgressView(pr.matchIndex, pr.nextIndex, pr.state.name(), pr.inflights.count(),
                            responding(peer))));
        }
        return view;
    }

    /** Reads waiting on leadership confirmation (leader only). */
    public int pendingReads() {
        return readOnly.pending();
    }

    @Override
    public String toString() {
        return "RaftNode{" + id + " " + role + " term=" + currentTerm + " leader=" + leaderId + " log=["
                + log.firstIndex() + ".." + log.lastIndex() + "] commit=" + log.commitIndex()
                + " applied=" + log.appliedIndex() + "}";
    }
}
