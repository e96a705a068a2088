package io.rota.raft.node;

import io.rota.raft.core.ConfChange;
import io.rota.raft.core.ConfChangeResult;
import io.rota.raft.core.Configuration;
import io.rota.raft.core.Entry;
import io.rota.raft.core.Leadership;
import io.rota.raft.core.Message;
import io.rota.raft.core.PersistentState;
import io.rota.raft.core.ProposalResult;
import io.rota.raft.core.RaftEvent;
import io.rota.raft.core.RaftNode;
import io.rota.raft.core.ReadState;
import io.rota.raft.core.Ready;
import io.rota.raft.core.Role;
import io.rota.raft.core.Snapshot;
import io.rota.raft.core.SnapshotData;
import io.rota.raft.core.SnapshotMetadata;
import io.rota.raft.core.SoftState;
import io.rota.raft.core.StateMachine;
import io.rota.raft.storage.LogStore;
import io.rota.raft.storage.SnapshotFile;
import io.rota.raft.storage.StorageException;
import io.rota.raft.transport.PeerTransport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

/**
 * The runtime around one {@link RaftNode}: a single thread owns the core (the LMAX shape) and carries
 * out its {@link Ready}s against real storage, a real network and the {@link StateMachine}.
 *
 * <pre>
 *   Netty threads ──► inbox (bounded, lock-free) ◄── callers: propose / read / transfer / status
 *                         │ drain a batch
 *                         ▼
 *   driver thread:  tick × n, step(messages), propose(batch), readIndex(...)
 *                   while hasReady:  soft state changed? ─► push to role listeners
 *                                    send leader messages ─► persist (one fsync) ─► send the rest
 *                                    ─► apply committed entries, complete futures ─► advance
 *                   every snapshotCount entries: capture the state machine ──────────┐
 *                   a snapshot persisted? ─► compact the core and the log            │
 *                   fail what passed its deadline                                    ▼
 *   snapshot thread:                                       serialise ─► write + fsync the file
 * </pre>
 *
 * <p>Futures are completed on the driver thread: callers must not block in their continuations (use the
 * {@code *Async} variants to move work elsewhere).
 *
 * <p>Time and threads come from outside: {@link #builder}'s {@link Execution#ownThread()} builds the production
 * ones — a driver thread, a ticker, a snapshot thread — with the JVM's clock, and is the only place that does;
 * {@link Execution#onScheduler} runs each turn as a task on a caller's single-threaded scheduler, persists snapshots on a caller's executor and
 * reads a caller's {@link Clock}, so the deterministic simulator runs this very class.
 *
 * @param <R> result type of the state machine's commands
 */
public final class RaftDriver<R> implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RaftDriver.class);

    /** What the driver thread consumes. Netty handlers and callers only ever enqueue these. */
    private sealed interface Input permits PeerMessage, PeerDown, SnapshotFailed, Proposal, Read, LocalRead,
            Transfer, StatusQuery, MembershipChange, Wakeup {
    }

    /** A role listener and the executor it is told on. */
    private record Subscription(RoleListener listener, Executor executor) {
    }

    /**
     * What the snapshot thread hands back to the driver thread: the snapshot it made durable, or why it
     * could not. Passed through a slot of its own, not the inbox, which drops inputs when full.
     */
    private record SnapshotDone(SnapshotMetadata metadata, SnapshotData data, long captureNanos, long persistNanos,
                                Throwable failure) {
    }

    private record PeerMessage(Message message) implements Input {
    }

    /** The transport could not finish streaming a snapshot to a peer (see {@link RaftNode#reportSnapshotFailure}). */
    private record SnapshotFailed(long peer) implements Input {
    }

    /** The transport found a peer's process gone (see {@link RaftNode#reportPeerDown}). */
    private record PeerDown(long peer) implements Input {
    }

    private record Proposal(byte[] command, CompletableFuture<Object> future, long deadline) implements Input {
    }

    private record Read(Supplier<?> query, CompletableFuture<Object> future, long deadline) implements Input {
    }

    private record LocalRead(Supplier<?> query, CompletableFuture<Object> future) implements Input {
    }

    private record Transfer(long target, CompletableFuture<Boolean> future) implements Input {
    }

    private record StatusQuery(CompletableFuture<NodeStatus> future) implements Input {
    }

    private record MembershipChange(ConfChange change, boolean force, CompletableFuture<Configuration> future,
                                    long deadline) implements Input {
    }

    private record Wakeup() implements Input {
    }

    private static final Wakeup WAKEUP = new Wakeup();

    /** A proposal appended at some index in some term; it succeeded iff that entry is applied. */
    private record Pending(long term, CompletableFuture<Object> future, long deadline) {
    }

    private final NodeConfig config;
    private final RaftNode core;
    private final LogStore store;
    private final PeerTransport transport;
    private final StateMachine<R> stateMachine;
    private final DriverMetrics metrics;
    private final Inbox<Input> inbox;
    private final AtomicInteger pendingTicks = new AtomicInteger();
    private final Clock clock;
    /** Runs the ticks, and in {@link Execution#onScheduler} mode the turns too. */
    private final ScheduledExecutorService ticker;
    /** Serialises and writes snapshots, off the driver thread (§7; hashicorp's FSMSnapshot.Persist). */
    private final Executor snapshotExecutor;
    /** The driver's own thread, or null when its turns run on the caller's scheduler. */
    private final Thread thread;
    /** Role listeners registered since the last turn; the driver thread moves them to {@link #subscriptions}. */
    private final ConcurrentLinkedQueue<Subscription> newSubscriptions = new ConcurrentLinkedQueue<>();
    /** Set by the snapshot thread, taken by the driver thread at the start of a turn. */
    private final AtomicReference<SnapshotDone> snapshotDone = new AtomicReference<>();
    /** Scheduler mode: a turn is queued on the scheduler and has not started yet. */
    private final AtomicBoolean turnQueued = new AtomicBoolean();
    private ScheduledFuture<?> tickTask;
    private volatile boolean running = true;
    /** The snapshot thread {@link Execution#onTransportLoop} made, which {@link #close()} stops; null otherwise. */
    private volatile ExecutorService ownedSnapshotThread;
    /** Scheduler mode: the thread the last turn ran on (for {@link #close()}); null before the first. */
    private volatile Thread schedulerThread;
    private volatile Throwable failure;
    /** Completes with {@link #failure} when the node stops itself; a process hosting it should exit. */
    private final CompletableFuture<Throwable> failStopped = new CompletableFuture<>();
    /** Completes with the commit index once this node knows it was removed for good ({@link #removed()}). */
    private final CompletableFuture<Long> removed = new CompletableFuture<>();
    /** This member's current leadership, or null while it does not lead. Written on the driver thread. */
    private volatile Leadership leadership;

    // --- Owned by the driver thread ---
    private final TreeMap<Long, Pending> proposals = new TreeMap<>();
    private final Map<Long, Read> reads = new HashMap<>();
    /** Reads confirmed by ReadIndex, waiting for the state machine to reach their index. */
    private final TreeMap<Long, List<Read>> readsAwaitingApply = new TreeMap<>();
    /**
     * ReadIndex contexts (§6.4) start at a random point in each incarnation, so a leader's late answer to a
     * read of this member's previous life never matches a read of this one (issue 11, hole 5).
     */
    private long nextReadContext;
    private long knownLeader = RaftNode.NONE;
    /** The soft state of the last Ready (at start, the core's initial one): what listeners were last told. */
    private SoftState softState;
    /** The vote {@link DriverMetrics#roleChanged} was last told. */
    private long reportedVote;
    private final List<Subscription> subscriptions = new ArrayList<>();
    private long appliedIndex;
    /** Index of the snapshot the log is compacted to: the latest durable one, taken here or installed. */
    private long snapshotIndex;
    /** A capture is being persisted on the snapshot thread; at most one at a time. */
    private boolean snapshotInFlight;
    /** Index of the last snapshot whose persist failed: the next attempt waits snapshotCount entries past it. */
    private long failedSnapshotIndex;
    private long lastDeadlineSweep;

    /**
     * @param driverThread makes the driver's own thread (production), or null to run each turn as a task on
     *                     {@code ticker} ({@link Execution#onScheduler})
     */
    private RaftDriver(NodeConfig config, RaftNode core, LogStore store, PeerTransport transport,
                       StateMachine<R> stateMachine, DriverMetrics metrics, long appliedIndex, long firstReadContext,
                       Clock clock, ScheduledExecutorService ticker, Executor snapshotExecutor,
                       ThreadFactory driverThread) {
        this.config = config;
        this.clock = clock;
        this.ticker = ticker;
        this.snapshotExecutor = snapshotExecutor;
        this.thread = driverThread == null ? null : driverThread.newThread(this::loop);
        this.nextReadContext = firstReadContext;
        this.metrics = metrics;
        this.core = core;
        this.store = store;
        this.transport = transport;
        this.stateMachine = stateMachine;
        this.appliedIndex = appliedIndex;
        this.snapshotIndex = appliedIndex;
        this.inbox = new Inbox<>(config.inboxCapacity());
        // The starting role, reported once before the first turn; after that only Readies change it.
        this.softState = new SoftState(core.role(), core.leaderId(), core.currentTerm());
        this.reportedVote = core.votedFor();
        metrics.roleChanged(softState.role(), softState.currentTerm(), softState.leaderId(), reportedVote);
    }

    /**
     * A driver for {@code config}, loading from {@code store}, talking through {@code transport} and applying to
     * {@code stateMachine}; the optional parts are named on the builder and {@link Builder#start()} starts it
     * (design HS80). The driver owns the store and transport from then on and closes them in {@link #close()}.
     */
    public static <R> Builder<R> builder(NodeConfig config, LogStore store, PeerTransport transport,
                                         StateMachine<R> stateMachine) {
        return new Builder<>(config, store, transport, stateMachine);
    }

    /**
     * Where a driver's turns run: the one choice a {@link Builder} makes about threads (design HS80).
     * {@link #ownThread()} is production's default; {@link #onScheduler} is the simulator's; {@link
     * #onTransportLoop} puts the turns on the peer transport's event loop (design.md P11).
     */
    public static final class Execution {
        private enum Kind { OWN_THREAD, SCHEDULER, TRANSPORT_LOOP }

        private final Kind kind;
        private final ScheduledExecutorService scheduler;
        private final Executor snapshotExecutor;

        private Execution(Kind kind, ScheduledExecutorService scheduler, Executor snapshotExecutor) {
            this.kind = kind;
            this.scheduler = scheduler;
            this.snapshotExecutor = snapshotExecutor;
        }

        /**
         * The driver's own thread, a ticker and a snapshot thread, all made by the driver and closed by
         * {@link #close()}. This is where the production threads are made, and the only place in the driver
         * that makes any.
         */
        public static Execution ownThread() {
            return new Execution(Kind.OWN_THREAD, null, null);
        }

        /**
         * Every turn runs as a task on {@code scheduler}, which must run its tasks one at a time (a single
         * thread, or the simulator's event loop); ticks are scheduled on it too, and snapshots are serialised
         * and written by tasks on {@code snapshotExecutor} (which may be {@code scheduler} itself where blocking
         * it does not matter, as in the simulator). {@link #close()} must then be called from that scheduler's
         * thread (or once it has stopped); the executors stay the caller's to shut down.
         */
        public static Execution onScheduler(ScheduledExecutorService scheduler, Executor snapshotExecutor) {
            return new Execution(Kind.SCHEDULER, Objects.requireNonNull(scheduler),
                    Objects.requireNonNull(snapshotExecutor));
        }

        /**
         * The turns run on {@code loop}, the single I/O thread of the peer transport ({@code
         * NettyPeerTransport.withDriverLoop}; design.md P11): a peer's message is stepped by the thread that read
         * it and the driver's messages are written by the thread that made them, so a write at one in flight
         * switches threads half as often. Snapshots are written on a thread of the driver's own, which {@link
         * #close()} stops; {@link #close()} may be called from any thread.
         */
        public static Execution onTransportLoop(ScheduledExecutorService loop) {
            return new Execution(Kind.TRANSPORT_LOOP, Objects.requireNonNull(loop), null);
        }
    }

    /** The named optional parts of a driver; {@link #start()} loads, restores and starts it. */
    public static final class Builder<R> {
        private final NodeConfig config;
        private final LogStore store;
        private final PeerTransport transport;
        private final StateMachine<R> stateMachine;
        private RandomGenerator random;
        private DriverMetrics metrics = DriverMetrics.NONE;
        private Clock clock = Clock.SYSTEM;
        private Execution execution = Execution.ownThread();
        private final List<Subscription> roleListeners = new ArrayList<>();

        private Builder(NodeConfig config, LogStore store, PeerTransport transport, StateMachine<R> stateMachine) {
            this.config = Objects.requireNonNull(config);
            this.store = Objects.requireNonNull(store);
            this.transport = Objects.requireNonNull(transport);
            this.stateMachine = Objects.requireNonNull(stateMachine);
        }

        /** The core's randomness (election timeouts) and the first ReadIndex context; a fresh one by default. */
        public Builder<R> random(RandomGenerator random) {
            this.random = Objects.requireNonNull(random);
            return this;
        }

        /** Where fsync latency, applied entries, snapshots and role changes are reported; none by default. */
        public Builder<R> metrics(DriverMetrics metrics) {
            this.metrics = Objects.requireNonNull(metrics);
            return this;
        }

        /** Where the driver's deadlines are read; the system's clock by default. */
        public Builder<R> clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock);
            return this;
        }

        /** Where the turns run; {@link Execution#ownThread()} by default. */
        public Builder<R> execution(Execution execution) {
            this.execution = Objects.requireNonNull(execution);
            return this;
        }

        /**
         * A role listener told from the first turn on, as {@link RaftDriver#addRoleListener} after start would,
         * without waking the driver early.
         */
        public Builder<R> roleListener(RoleListener listener, Executor executor) {
            roleListeners.add(new Subscription(Objects.requireNonNull(listener), Objects.requireNonNull(executor)));
            return this;
        }

        /**
         * Load the node's state from the store, restore the state machine from the latest snapshot, and start
         * the ticks and the transport (and the driver's threads, as {@link #execution} says).
         */
        public RaftDriver<R> start() {
            RandomGenerator random = this.random != null ? this.random : new SplittableRandom();
            long id = config.raft().id();
            return switch (execution.kind) {
                case OWN_THREAD -> {
                    ScheduledExecutorService ticker =
                            Executors.newSingleThreadScheduledExecutor(daemon("raft-ticker-" + id));
                    ExecutorService snapshots = Executors.newSingleThreadExecutor(daemon("raft-snapshot-" + id));
                    yield launch(this, random, ticker, snapshots, r -> new Thread(r, "raft-driver-" + id), null);
                }
                case SCHEDULER -> launch(this, random, execution.scheduler, execution.snapshotExecutor, null, null);
                case TRANSPORT_LOOP -> {
                    ExecutorService snapshots = Executors.newSingleThreadExecutor(daemon("raft-snapshot-" + id));
                    yield launch(this, random, execution.scheduler, snapshots, null, snapshots);
                }
            };
        }
    }

    private static ThreadFactory daemon(String name) {
        return r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        };
    }

    private static <R> RaftDriver<R> launch(Builder<R> b, RandomGenerator random, ScheduledExecutorService ticker,
                                            Executor snapshotExecutor, ThreadFactory driverThread,
                                            ExecutorService ownedSnapshotThread) {
        NodeConfig config = b.config;
        LogStore store = b.store;
        PeerTransport transport = b.transport;
        StateMachine<R> stateMachine = b.stateMachine;
        DriverMetrics metrics = b.metrics;
        Clock clock = b.clock;
        PersistentState state = store.load();
        long applied = 0;
        if (state.snapshot() != null) {
            restore(stateMachine, state.snapshot());
            applied = state.snapshot().index();
        }
        long firstReadContext = random.nextLong();
        RaftNode core = new RaftNode(config.raft(), state, random);
        log.info("node {} starting: term {}, log [{}..{}], commit {}, snapshot at {}", config.raft().id(),
                core.currentTerm(), core.firstIndex(), core.lastIndex(), core.commitIndex(), applied);
        RaftDriver<R> driver = new RaftDriver<>(config, core, store, transport, stateMachine, metrics, applied,
                firstReadContext, clock, ticker, snapshotExecutor, driverThread);
        driver.ownedSnapshotThread = ownedSnapshotThread;
        driver.newSubscriptions.addAll(b.roleListeners);
        transport.start(driver::onPeerMessage, driver::onPeerDown, driver::onSnapshotFailed);
        if (driver.thread != null) {
            driver.thread.start();
        }
        long tickNanos = config.tick().toNanos();
        driver.tickTask = driver.ticker.scheduleAtFixedRate(driver::onTick, tickNanos, tickNanos, TimeUnit.NANOSECONDS);
        return driver;
    }

    // =====================================================================================
    // Public API (any thread)
    // =====================================================================================

    /**
     * Replicate {@code command} and apply it; the future completes with the state machine's result once
     * the entry is committed and applied here. Fails with {@link RaftException}: NOT_LEADER (with the
     * leader's id and address), BUSY, UNAVAILABLE or TIMEOUT (outcome unknown) — see {@link RaftException.Code}.
     */
    @SuppressWarnings("unchecked")
    public CompletableFuture<R> propose(byte[] command, Duration timeout) {
        CompletableFuture<Object> f = new CompletableFuture<>();
        enqueue(new Proposal(command, f, deadline(timeout)), f);
        return (CompletableFuture<R>) (CompletableFuture<?>) f;
    }

    /**
     * A linearizable read (§6.4): {@code query} runs on the driver thread once this node's state machine
     * has applied everything committed before the call — so it sees every write acknowledged before it.
     */
    @SuppressWarnings("unchecked")
    public <T> CompletableFuture<T> read(Supplier<T> query, Duration timeout) {
        CompletableFuture<Object> f = new CompletableFuture<>();
        enqueue(new Read(query, f, deadline(timeout)), f);
        return (CompletableFuture<T>) (CompletableFuture<?>) f;
    }

    /**
     * A serializable read: {@code query} runs on the driver thread against what this node has applied so
     * far, without asking the leader. Fast, but possibly stale (etcd's "serializable" reads).
     */
    @SuppressWarnings("unchecked")
    public <T> CompletableFuture<T> readLocal(Supplier<T> query) {
        CompletableFuture<Object> f = new CompletableFuture<>();
        enqueue(new LocalRead(query, f), f);
        return (CompletableFuture<T>) (CompletableFuture<?>) f;
    }

    /** Ask the leader to hand leadership to {@code target} (§3.10); false if this node is not the leader. */
    public CompletableFuture<Boolean> transferLeadership(long target) {
        CompletableFuture<Boolean> f = new CompletableFuture<>();
        enqueue(new Transfer(target, f), f);
        return f;
    }

    /**
     * Change the membership by one server (§4.1, see {@link ConfChange}). The future completes with the new
     * configuration once its entry is committed and applied here; it fails with
     * {@link ConfChangeRefusedException} if the leader refuses the change (the reason says whether to retry),
     * or with {@link RaftException} as {@link #propose} does: NOT_LEADER, BUSY, UNAVAILABLE, TIMEOUT.
     * Strict: a change whose new configuration has too few voters that answer the leader is refused
     * QUORUM_AT_RISK (see {@link io.rota.raft.core.RaftNode#proposeConfChange(ConfChange, boolean)}).
     */
    public CompletableFuture<Configuration> changeMembership(ConfChange change, Duration timeout) {
        return changeMembership(change, false, timeout);
    }

    /**
     * {@link #changeMembership(ConfChange, Duration)}; {@code force} skips the strict quorum check only, for
     * an operator who knows the silent members will not come back (design MF2).
     */
    public CompletableFuture<Configuration> changeMembership(ConfChange change, boolean force, Duration timeout) {
        CompletableFuture<Configuration> f = new CompletableFuture<>();
        enqueue(new MembershipChange(change, force, f, deadline(timeout)), f);
        return f;
    }

    /**
     * The last {@code max} entries of this node's in-memory log (those after its latest snapshot), oldest
     * first: for a picture of the log (the paper's Figures 6 and 7). Read on the driver thread; the entries
     * are immutable and must be treated as read-only.
     */
    public CompletableFuture<List<Entry>> logTail(int max) {
        return readLocal(() -> {
            List<Entry> log = core.logEntries();
            return List.copyOf(log.subList(Math.max(0, log.size() - max), log.size()));
        });
    }

    /** The node's current state, read on the driver thread. */
    public CompletableFuture<NodeStatus> status() {
        CompletableFuture<NodeStatus> f = new CompletableFuture<>();
        enqueue(new StatusQuery(f), f);
        return f;
    }

    /**
     * Tell {@code listener} this member's role, term and leader now, then every change, in order, each as
     * a task on {@code executor} (in order as long as the executor runs its tasks one at a time). Changes
     * are seen per Ready: a role that comes and goes within one turn is seen only by its outcome.
     *
     * <p>Why an executor, and not the driver thread: the driver thread runs no listener code, so a slow
     * listener cannot delay a heartbeat; and a listener (the cluster view, the lease keeper) keeps its state
     * on its own thread anyway. Call from any thread; nothing is told after the driver stops.
     */
    public void addRoleListener(RoleListener listener, Executor executor) {
        newSubscriptions.add(new Subscription(listener, executor));
        offer(WAKEUP);
    }

    public long id() {
        return config.raft().id();
    }

    /** Whether the driver is running; false after close or a fail-stop (see {@link #failure()}). */
    public boolean isRunning() {
        return running && (thread == null || thread.isAlive());
    }

    /**
     * This member's leadership as of the driver's last turn, or null if it does not lead: what a command's
     * log-time stamp is taken from (see {@link Leadership}). Any thread.
     */
    public Leadership leadership() {
        return leadership;
    }

    /** The clock this driver reads its deadlines from. */
    public Clock clock() {
        return clock;
    }

    /** The error that stopped the node, if it stopped itself (e.g. a storage failure). */
    public Throwable failure() {
        return failure;
    }

    /**
     * Completes with the error when the node stops itself (a storage failure, a broken invariant, a state
     * machine that cannot apply or restore, an OutOfMemoryError), on the driver's thread; never completes on a
     * normal {@link #close()}. A node that stopped serves nothing more, so the process hosting it should exit
     * and let its supervisor restart it from its durable log and snapshot, rather than linger half alive.
     */
    public CompletableFuture<Throwable> failStopped() {
        return failStopped;
    }

    /**
     * Completes, with the commit index at which it learnt it, once this node knows the cluster removed it for
     * good ({@link RaftNode#removedFromConfiguration()}): it takes no further part, and a process hosting it
     * should say so and exit rather than linger (issue 32, item 6).
     */
    public CompletableFuture<Long> removed() {
        return removed;
    }

    /** Stop the driver, fail what is pending with STOPPED, close the transport and the store. */
    @Override
    public void close() {
        if (thread == null) {
            stopOnScheduler();
            if (ownedSnapshotThread != null) {
                stopSnapshots(ownedSnapshotThread);
            }
        } else {
            running = false;
            leadership = null;
            ticker.shutdownNow();
            inbox.offer(WAKEUP);
            try {
                thread.join(10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            // After the loop, which may still hand it a capture.
            stopSnapshots((ExecutorService) snapshotExecutor);
        }
        transport.close();
        store.close();
    }

    /** A snapshot being written is abandoned: the log never referred to it, so a restart ignores it. */
    private static void stopSnapshots(ExecutorService snapshots) {
        snapshots.shutdownNow();
        try {
            snapshots.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Scheduler mode: stop between turns. On the scheduler's thread (the simulator), at once; from any other
     * thread (a server's shutdown, with the driver on its transport's loop, design.md P11), as a task on the
     * scheduler, waited for: a turn may be running there, in the middle of an fsync, and the store must not
     * close under it. A scheduler that no longer runs tasks runs no turn either.
     */
    private void stopOnScheduler() {
        Runnable stop = () -> {
            running = false;
            leadership = null;
            tickTask.cancel(false);
            failEverything(new RaftException(RaftException.Code.STOPPED, "node " + id() + " stopped"));
        };
        Thread turns = schedulerThread;
        if (turns == null || turns == Thread.currentThread()) {
            stop.run();
            return;
        }
        try {
            ticker.submit(stop).get(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            stop.run();
        } catch (RejectedExecutionException | ExecutionException | TimeoutException e) {
            log.warn("node {}: could not stop between turns ({}); stopping anyway", id(), e.toString());
            stop.run();
        }
    }

    private void enqueue(Input input, CompletableFuture<?> f) {
        if (!running) {
            f.completeExceptionally(new RaftException(RaftException.Code.STOPPED, "node " + id() + " is stopped"));
        } else if (!offer(input)) {
            f.completeExceptionally(new RaftException(RaftException.Code.BUSY, "node " + id()
                    + " is overloaded: its inbox of " + config.inboxCapacity() + " requests is full; retry later"));
        }
    }

    private void onPeerMessage(Message m) {
        // Raft tolerates lost messages; a full inbox drops rather than blocking a Netty thread.
        if (!offer(new PeerMessage(m))) {
            log.debug("node {}: inbox full, dropped {}", id(), m.getClass().getSimpleName());
        }
    }

    private void onPeerDown(long peer) {
        if (!offer(new PeerDown(peer))) {
            log.debug("node {}: inbox full, dropped the news that peer {} is down", id(), peer);
        }
    }

    private void onSnapshotFailed(long peer) {
        if (!offer(new SnapshotFailed(peer))) {
            log.debug("node {}: inbox full, dropped the news that a snapshot to peer {} failed", id(), peer);
        }
    }

    private void onTick() {
        pendingTicks.incrementAndGet();
        offer(WAKEUP);
    }

    /** Into the inbox; in scheduler mode also queue a turn to drain it, unless one is queued already. */
    private boolean offer(Input input) {
        boolean accepted = inbox.offer(input);
        if (thread == null && running && turnQueued.compareAndSet(false, true)) {
            ticker.execute(this::scheduledTurn);
        }
        return accepted;
    }

    private long deadline(Duration timeout) {
        return clock.nanoTime() + timeout.toNanos();
    }

    // =====================================================================================
    // The driver thread
    // =====================================================================================

    private void loop() {
        List<Input> batch = new ArrayList<>(config.maxBatch());
        long pollNanos = config.tick().toNanos();
        try {
            while (running) {
                Input first = inbox.poll(pollNanos, TimeUnit.NANOSECONDS);
                if (first != null) {
                    batch.add(first);
                    inbox.drainTo(batch, config.maxBatch() - 1);
                }
                turn(batch);
                batch.clear();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Throwable t) {
            failStop(t);
        } finally {
            running = false;
            failEverything(new RaftException(RaftException.Code.STOPPED, "node " + id() + " stopped"
                    + (failure == null ? "" : ": " + failure)));
        }
    }

    /** Scheduler mode: one batch from the inbox, then another task if more is waiting. */
    private void scheduledTurn() {
        schedulerThread = Thread.currentThread();
        turnQueued.set(false);
        if (!running) {
            return;
        }
        List<Input> batch = new ArrayList<>(Math.min(inbox.size(), config.maxBatch()));
        inbox.drainTo(batch, config.maxBatch());
        try {
            turn(batch);
        } catch (Throwable t) {
            failStop(t);
            running = false;
            tickTask.cancel(false);
            failEverything(new RaftException(RaftException.Code.STOPPED, "node " + id() + " stopped: " + t));
            return;
        }
        if (!inbox.isEmpty() && turnQueued.compareAndSet(false, true)) {
            ticker.execute(this::scheduledTurn);
        }
    }

    /** Storage errors and broken invariants stop the node: serving on could lose acknowledged data. */
    private void failStop(Throwable t) {
        failure = t;
        leadership = null;
        log.error("node {} stopped: {}", id(), t.toString(), t);
        failStopped.complete(t);
    }

    private void turn(List<Input> batch) {
        subscribeNew();
        SnapshotDone done = snapshotDone.getAndSet(null);
        if (done != null) {
            finishSnapshot(done);
        }
        for (int ticks = pendingTicks.getAndSet(0); ticks > 0; ticks--) {
            core.tick();
        }
        noticeLeaderChange();
        Role roleBefore = core.role();
        List<Proposal> proposalBatch = new ArrayList<>();
        for (Input in : batch) {
            if (in instanceof PeerMessage pm) {
                core.step(pm.message());
                noticeLeaderChange();
            } else if (in instanceof PeerDown pd) {
                core.reportPeerDown(pd.peer());
                noticeLeaderChange();
            } else if (in instanceof SnapshotFailed sf) {
                core.reportSnapshotFailure(sf.peer());
            } else if (in instanceof Proposal p) {
                proposalBatch.add(p);
            } else if (in instanceof Read r) {
                startRead(r);
            } else if (in instanceof LocalRead r) {
                runQuery(r.query(), r.future());
            } else if (in instanceof Transfer t) {
                t.future().complete(core.transferLeadership(t.target()));
            } else if (in instanceof StatusQuery q) {
                q.future().complete(status(core));
            } else if (in instanceof MembershipChange c) {
                changeMembership(c);
            }
        }
        if (!proposalBatch.isEmpty()) {
            proposeBatch(proposalBatch);
        }
        handleReadies();
        if (roleBefore == Role.LEADER && core.role() != Role.LEADER) {
            failReads(notLeader("lost leadership before the read was confirmed"));
        }
        sweepDeadlines();
    }

    /**
     * Reads forwarded to a leader that has since been replaced will never be answered: let their callers
     * retry now rather than at their deadline. Checked after every step rather than once per Ready, so that
     * reads started later in the same batch, which go to the new leader, are kept.
     */
    private void noticeLeaderChange() {
        if (core.leaderId() != knownLeader) {
            knownLeader = core.leaderId();
            if (core.role() != Role.LEADER && !reads.isEmpty()) {
                failReads(new RaftException(RaftException.Code.UNAVAILABLE,
                        "the leader changed before the read was confirmed; retry"));
            }
        }
    }

    /**
     * etcd's soft-state check: the core makes a changed role, leader or term a Ready by itself, and here the
     * driver compares it with the last one and acts on a change — the {@link Leadership} that stamps
     * commands, the metrics' timeline, and the role listeners.
     */
    private void observe(Ready rd) {
        SoftState now = rd.softState();
        long vote = rd.hardState() != null ? rd.hardState().votedFor() : reportedVote;
        boolean changed = !now.equals(softState);
        if (!changed && vote == reportedVote) {
            return;
        }
        reportedVote = vote;
        metrics.roleChanged(now.role(), now.currentTerm(), now.leaderId(), vote);
        if (!changed) {
            return;
        }
        softState = now;
        Leadership l = leadership;
        if (now.role() != Role.LEADER) {
            leadership = null;
        } else if (l == null || l.term() != now.currentTerm()) {
            // Read after the core became leader, so no command is stamped with time it did not lead.
            leadership = new Leadership(now.currentTerm(), clock.nanoTime());
        }
        RoleChange change = RoleChange.of(now);
        for (Subscription s : subscriptions) {
            tell(s, change);
        }
    }

    /** New listeners hear the current role first, so each sees one unbroken sequence. */
    private void subscribeNew() {
        for (Subscription s; (s = newSubscriptions.poll()) != null; ) {
            subscriptions.add(s);
            tell(s, RoleChange.of(softState));
        }
    }

    private void tell(Subscription s, RoleChange change) {
        try {
            s.executor().execute(() -> s.listener().onRoleChange(change));
        } catch (RejectedExecutionException e) {
            log.debug("node {}: a role listener's executor is shut down; not told {}", id(), change);
        }
    }

    private void proposeBatch(List<Proposal> batch) {
        List<byte[]> commands = new ArrayList<>(batch.size());
        for (Proposal p : batch) {
            commands.add(p.command());
        }
        ProposalResult result = core.propose(commands);
        if (result instanceof ProposalResult.Accepted a) {
            for (int k = 0; k < batch.size(); k++) {
                Proposal p = batch.get(k);
                track(a.firstIndex() + k, new Pending(a.term(), p.future(), p.deadline()));
            }
            return;
        }
        ProposalResult.Rejected r = (ProposalResult.Rejected) result;
        RaftException e = switch (r.reason()) {
            case NOT_LEADER -> notLeader("only the leader accepts writes");
            case TRANSFERRING_LEADERSHIP -> new RaftException(RaftException.Code.BUSY,
                    "leadership is being transferred; retry in a moment");
            case TOO_MUCH_UNCOMMITTED -> new RaftException(RaftException.Code.BUSY,
                    "too many uncommitted writes; back off and retry");
        };
        for (Proposal p : batch) {
            p.future().completeExceptionally(e);
        }
    }

    /** Wait for the entry appended at {@code index} to be applied (or overwritten). */
    private void track(long index, Pending pending) {
        Pending overwritten = proposals.put(index, pending);
        if (overwritten != null) {
            // This leader's log no longer holds our earlier entry at this index, and a leader's log holds
            // every committed entry (§5.4): it was never applied (issue 11, hole 4).
            overwritten.future().completeExceptionally(
                    notLeader("the write was overwritten by a new leader and not applied"));
        }
    }

    /** The change is tracked like a write: done when its configuration entry is applied here. */
    private void changeMembership(MembershipChange c) {
        ConfChangeResult result = core.proposeConfChange(c.change(), c.force());
        if (result instanceof ConfChangeResult.Accepted a) {
            CompletableFuture<Object> applied = new CompletableFuture<>();
            applied.whenComplete((ignored, e) -> {
                if (e != null) {
                    c.future().completeExceptionally(e);
                } else {
                    c.future().complete(a.configuration());
                }
            });
            track(a.index(), new Pending(a.term(), applied, c.deadline()));
            log.info("node {} proposed {} at index {}: {}", id(), c.change(), a.index(), a.configuration());
            return;
        }
        ConfChangeResult.Refused refused = (ConfChangeResult.Refused) result;
        c.future().completeExceptionally(refused.reason() == ConfChangeResult.Reason.NOT_LEADER
                ? notLeader("only the leader changes the membership")
                : new ConfChangeRefusedException(c.change(), refused.reason(), refused.responding(),
                        core.configuration()));
    }

    private void startRead(Read r) {
        long context = nextReadContext++;
        if (core.readIndex(context)) {
            reads.put(context, r);
        } else {
            r.future().completeExceptionally(new RaftException(RaftException.Code.NO_LEADER,
                    "no leader is known yet; retry shortly"));
        }
    }

    /** Carry out Readies in the order the {@link Ready} contract states. */
    private void handleReadies() {
        Set<Long> unreachable = new TreeSet<>();
        while (core.hasReady()) {
            Ready rd = core.ready();
            observe(rd);
            logEvents(rd);
            send(rd.leaderMessages(), unreachable);       // 1. may overlap our own write (§10.2.1)
            if (rd.hasWrites()) {
                persist(rd);                               // 2. one fsync (none for a commit index alone)
            }
            installSnapshot(rd);                           // 3. before its acknowledgement (issue 32)
            send(rd.messages(), unreachable);              // 4. votes and acks, now that they are true
            apply(rd);                                     // 5.
            core.advance(rd);                              // 6.
            releaseAppliedReads();
            maybeSnapshot();
        }
        for (long peer : unreachable) {
            core.reportUnreachable(peer);
        }
        if (!removed.isDone() && core.removedFromConfiguration()) {
            log.warn("node {}: removed from the cluster's configuration (committed at index {}); it takes no "
                    + "further part", id(), core.commitIndex());
            removed.complete(core.commitIndex());
        }
    }

    /** One line per event the core reported: elections, votes, role and leader changes ({@link EventLog}). */
    private void logEvents(Ready rd) {
        for (RaftEvent event : rd.events()) {
            EventLog.write(log, id(), event);
        }
    }

    /** Only synced writes are timed: an unsynced one costs no fsync, and would hide the ones that do. */
    private void persist(Ready rd) {
        if (!rd.mustSync()) {
            store.persist(rd);
            return;
        }
        long start = clock.nanoTime();
        store.persist(rd);
        metrics.synced(clock.nanoTime() - start);
    }

    private void send(List<Message> messages, Set<Long> unreachable) {
        if (messages.isEmpty()) {
            return;
        }
        for (Message m : messages) {
            if (!transport.send(m)) {
                unreachable.add(m.to());
            }
        }
        transport.flush();  // on the transport's own loop (P11), the batch goes out now: before our fsync
    }

    /**
     * §7: a snapshot from the leader, now durable, replaces the state machine — before the acknowledgement
     * among the Ready's messages leaves. "Has the snapshot" must mean the state machine holds it: the leader
     * counts the acknowledgement toward a learner's catch-up, and a learner still restoring a large image (or
     * one that died restoring it) must not be promoted to a voter as caught up (issue 32, item 5).
     */
    private void installSnapshot(Ready rd) {
        if (rd.snapshot() == null) {
            return;
        }
        restore(stateMachine, rd.snapshot());
        appliedIndex = rd.snapshot().index();
        snapshotIndex = appliedIndex;
        // Proposals at or below the snapshot were decided elsewhere; we cannot tell how.
        failProposalsUpTo(appliedIndex);
        log.info("node {} installed snapshot at {} from the leader", id(), appliedIndex);
    }

    private void apply(Ready rd) {
        for (ReadState rs : rd.readStates()) {
            Read r = reads.remove(rs.context());
            if (r != null) {
                readsAwaitingApply.computeIfAbsent(rs.readIndex(), k -> new ArrayList<>()).add(r);
            }
        }
        List<Entry> committed = rd.committedEntries();
        if (committed.isEmpty()) {
            return;
        }
        List<R> results = stateMachine.apply(committed);
        metrics.applied(committed.size());
        for (int k = 0; k < committed.size(); k++) {
            Entry e = committed.get(k);
            Pending p = proposals.remove(e.index());
            if (p == null) {
                continue;
            }
            if (p.term() == e.term()) {
                p.future().complete(results.get(k));
            } else {
                // Another leader's entry took this index: ours was never committed, and never will be.
                p.future().completeExceptionally(notLeader("the write was overwritten by a new leader and not applied"));
            }
        }
        appliedIndex = committed.get(committed.size() - 1).index();
    }

    private void releaseAppliedReads() {
        while (!readsAwaitingApply.isEmpty() && readsAwaitingApply.firstKey() <= appliedIndex) {
            for (Read r : readsAwaitingApply.pollFirstEntry().getValue()) {
                runQuery(r.query(), r.future());
            }
        }
    }

    private static void runQuery(Supplier<?> query, CompletableFuture<Object> future) {
        try {
            future.complete(query.get());
        } catch (RuntimeException e) {
            future.completeExceptionally(e);
        }
    }

    /**
     * §7, first half: every {@code snapshotCount} entries, capture the state machine here — cheap, between
     * two applies — and hand the capture to the snapshot thread, which serialises it and makes it durable
     * while this thread goes on. At most one is in flight; after a failure the next attempt waits another
     * {@code snapshotCount} entries.
     */
    private void maybeSnapshot() {
        if (snapshotInFlight
                || appliedIndex - Math.max(snapshotIndex, failedSnapshotIndex) < config.snapshotCount()) {
            return;
        }
        long start = clock.nanoTime();
        StateMachine.Capture capture = stateMachine.capture();
        // The configuration at the snapshot's index, not the latest: a change may sit above it, uncommitted
        // (issue 32, item 1).
        SnapshotMetadata metadata = core.snapshotMetadata(appliedIndex);
        long captureNanos = clock.nanoTime() - start;
        snapshotInFlight = true;
        try {
            snapshotExecutor.execute(() -> persistSnapshot(metadata, capture, captureNanos));
        } catch (RejectedExecutionException e) {
            finishSnapshot(new SnapshotDone(metadata, null, captureNanos, 0, e));
        }
    }

    /** Snapshot thread: serialise and write; then tell the driver thread, which alone touches the core. */
    private void persistSnapshot(SnapshotMetadata metadata, StateMachine.Capture capture, long captureNanos) {
        long start = clock.nanoTime();
        SnapshotDone done;
        try {
            SnapshotData data = store.saveSnapshot(metadata, capture::writeTo);
            done = new SnapshotDone(metadata, data, captureNanos, clock.nanoTime() - start, null);
        } catch (RuntimeException e) {
            done = new SnapshotDone(metadata, null, captureNanos, clock.nanoTime() - start, e);
        }
        snapshotDone.set(done);
        offer(WAKEUP);
    }

    /**
     * §7, second half, on the driver thread: only now that the snapshot is durable may the core and the
     * stored log drop the entries it covers — the log is never compacted past a snapshot a crash could lose.
     */
    private void finishSnapshot(SnapshotDone done) {
        snapshotInFlight = false;
        long index = done.metadata().lastIncludedIndex();
        if (done.failure() != null) {
            failedSnapshotIndex = index;
            log.warn("node {}: snapshot at index {} was not persisted ({}); the log is not compacted, and the next "
                    + "attempt comes after {} more entries", id(), index, done.failure().toString(),
                    config.snapshotCount(), done.failure());
            return;
        }
        log.info("node {}: snapshot at index {} (term {}): {} bytes, captured in {} ms on the driver thread, "
                        + "serialised and written in {} ms on the snapshot thread", id(), index,
                done.metadata().lastIncludedTerm(), done.data().size(), millis(done.captureNanos()),
                millis(done.persistNanos()));
        if (index <= snapshotIndex) {
            // A snapshot from the leader was installed meanwhile; it covers this one.
            log.info("node {}: snapshot at index {} superseded by the installed one at {}; log unchanged", id(),
                    index, snapshotIndex);
            return;
        }
        SnapshotMetadata expected = core.snapshotMetadata(index);
        if (!expected.equals(done.metadata())) {
            // Both come from RaftNode.snapshotMetadata, so this is a bug; a wrong snapshot must not replace the
            // log, but it is no reason to stop the member: keep the log and try again later.
            failedSnapshotIndex = index;
            log.error("BUG node {}: snapshot at {} was written as {} but the core records {}; the log is not "
                    + "compacted to it", id(), index, done.metadata(), expected);
            return;
        }
        long start = clock.nanoTime();
        long newFirst = core.compact(index, done.data());
        Snapshot taken = core.latestSnapshot();
        store.compact(taken, newFirst);
        snapshotIndex = index;
        metrics.snapshotted();
        log.info("node {}: log compacted to the snapshot at index {}: entries before {} dropped, in {} ms", id(),
                index, newFirst, millis(clock.nanoTime() - start));
    }

    /** Restores the state machine from a snapshot's image, streamed from its file (or memory). */
    private static void restore(StateMachine<?> stateMachine, Snapshot snapshot) {
        try (InputStream image = SnapshotFile.open(snapshot.data())) {
            stateMachine.restore(image);
        } catch (IOException e) {
            throw new StorageException("cannot read the image of snapshot " + snapshot, e);
        }
    }

    private static String millis(long nanos) {
        return String.format("%.1f", nanos / 1e6);
    }

    private void sweepDeadlines() {
        long now = clock.nanoTime();
        if (now - lastDeadlineSweep < config.tick().toNanos() / 2) {
            return;
        }
        lastDeadlineSweep = now;
        for (Iterator<Pending> it = proposals.values().iterator(); it.hasNext(); ) {
            Pending p = it.next();
            if (now - p.deadline() >= 0) {
                it.remove();
                p.future().completeExceptionally(deadlineError("write"));
            }
        }
        sweepReads(reads.values(), now);
        // Confirmed reads whose index this member has not applied yet (a lagging or cut-off follower) end
        // by their deadline too (issue 11, hole 4).
        for (Iterator<List<Read>> it = readsAwaitingApply.values().iterator(); it.hasNext(); ) {
            List<Read> waiting = it.next();
            sweepReads(waiting, now);
            if (waiting.isEmpty()) {
                it.remove();
            }
        }
    }

    private void sweepReads(Iterable<Read> pending, long now) {
        for (Iterator<Read> it = pending.iterator(); it.hasNext(); ) {
            Read r = it.next();
            if (now - r.deadline() >= 0) {
                it.remove();
                r.future().completeExceptionally(deadlineError("read"));
            }
        }
    }

    private RaftException deadlineError(String what) {
        if (core.leaderId() == RaftNode.NONE) {
            return new RaftException(RaftException.Code.UNAVAILABLE, "no leader with a quorum before the "
                    + what + "'s deadline; the cluster may have lost its majority");
        }
        return new RaftException(RaftException.Code.TIMEOUT, "the " + what + " did not complete before its deadline"
                + ("write".equals(what) ? "; it may or may not have been applied" : ""));
    }

    private RaftException notLeader(String why) {
        long leader = core.leaderId();
        String address = config.memberAddresses().get(leader);
        return new RaftException(RaftException.Code.NOT_LEADER, "node " + id() + " is not the leader: " + why
                + (leader == RaftNode.NONE ? "; no leader is known yet" : "; the leader is node " + leader
                + (address == null ? "" : " at " + address)), leader, address);
    }

    private void failProposalsUpTo(long index) {
        while (!proposals.isEmpty() && proposals.firstKey() <= index) {
            proposals.pollFirstEntry().getValue().future().completeExceptionally(new RaftException(
                    RaftException.Code.TIMEOUT, "outcome unknown: this node caught up by snapshot"));
        }
    }

    private void failReads(RaftException e) {
        reads.values().forEach(r -> r.future().completeExceptionally(e));
        reads.clear();
    }

    private void failEverything(RaftException e) {
        proposals.values().forEach(p -> p.future().completeExceptionally(e));
        proposals.clear();
        failReads(e);
        readsAwaitingApply.values().forEach(list -> list.forEach(r -> r.future().completeExceptionally(e)));
        readsAwaitingApply.clear();
        for (Input in; (in = inbox.poll()) != null; ) {
            if (in instanceof Proposal p) {
                p.future().completeExceptionally(e);
            } else if (in instanceof Read r) {
                r.future().completeExceptionally(e);
            } else if (in instanceof LocalRead r) {
                r.future().completeExceptionally(e);
            } else if (in instanceof Transfer t) {
                t.future().completeExceptionally(e);
            } else if (in instanceof StatusQuery q) {
                q.future().completeExceptionally(e);
            } else if (in instanceof MembershipChange c) {
                c.future().completeExceptionally(e);
            }
        }
    }

    private NodeStatus status(RaftNode n) {
        return new NodeStatus(n.id(), n.role(), n.currentTerm(), n.leaderId(), n.firstIndex(), n.lastIndex(),
                n.commitIndex(), appliedIndex, snapshotIndex, n.progress(), n.configuration());
    }
}
