package io.rota.server.maintenance;

import io.rota.proto.Command;
import io.rota.proto.CommandResult;
import io.rota.proto.CompactionRequest;
import io.rota.raft.node.Clock;
import io.rota.raft.node.RaftDriver;
import io.rota.server.kv.CoordinationStateMachine;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Auto-compaction of the revision history (etcd's {@code --auto-compaction-mode/-retention}): the leader
 * proposes a Compaction now and then, and every member applies it.
 * <ul>
 *   <li><b>revision</b>: every {@link #REVISION_CHECK_INTERVAL}, compact at (current revision − retention),
 *       keeping the latest {@code retention} revisions;</li>
 *   <li><b>periodic</b>: every tenth of the retention (at most hourly), sample the revision on the leader's
 *       monotonic clock, and compact at the revision sampled one retention ago — history younger than the
 *       retention is kept. The samples are the leader's own and are dropped when it loses leadership: a new
 *       leader compacts only once it has led for one retention, later than the old one would have, never
 *       earlier (docs/design.md O4 explains why not the log clock or the wall clock).</li>
 * </ul>
 */
public final class AutoCompaction implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(AutoCompaction.class);
    /** etcd checks its revision mode every 5 minutes; a minute keeps the history nearer its bound. */
    public static final Duration REVISION_CHECK_INTERVAL = Duration.ofMinutes(1);

    private final RaftDriver<CommandResult> driver;
    private final CoordinationStateMachine stateMachine;
    private final Proposer proposer;
    private final Schedule schedule;
    private final ScheduledExecutorService timer;
    private final Clock clock;
    private ScheduledFuture<?> task;

    /**
     * @param retentionPeriod    periodic mode: the history to keep; null for revision mode
     * @param retentionRevisions revision mode: the revisions to keep
     */
    public AutoCompaction(RaftDriver<CommandResult> driver, CoordinationStateMachine stateMachine,
                          Duration retentionPeriod, long retentionRevisions, ScheduledExecutorService timer,
                          Clock clock, Duration requestTimeout) {
        this.driver = driver;
        this.stateMachine = stateMachine;
        this.proposer = new Proposer(driver, clock, requestTimeout);
        this.schedule = new Schedule(retentionPeriod, retentionRevisions);
        this.timer = timer;
        this.clock = clock;
    }

    public void start() {
        long ms = schedule.interval().toMillis();
        task = timer.scheduleWithFixedDelay(this::check, ms, ms, TimeUnit.MILLISECONDS);
    }

    /** One check (timer thread): read the revisions on the driver thread, decide back on the timer thread. */
    void check() {
        if (!proposer.leading() || proposer.inFlight()) {
            schedule.reset();
            return;
        }
        driver.readLocal(() -> new long[] {stateMachine.revision(), stateMachine.compactRevision()})
                .thenAcceptAsync(revs -> {
                    long target = schedule.due(proposer.term(), clock.nanoTime(), revs[0]);
                    if (target <= revs[1] || proposer.inFlight()) {
                        return;
                    }
                    log.info("auto-compaction: compacting the history at revision {} (current {})", target, revs[0]);
                    proposer.propose(Command.newBuilder().setCompaction(CompactionRequest.newBuilder().setRevision(target)))
                            .whenComplete((r, e) -> {
                                if (e != null) {
                                    log.info("auto-compaction at {} did not commit ({}); the next check tries again",
                                            target, e.toString());
                                }
                            });
                }, timer);
    }

    @Override
    public void close() {
        if (task != null) {
            task.cancel(false);
        }
    }

    /** The decision, without threads or clocks of its own (unit-tested with made-up times). */
    static final class Schedule {

        private final Duration retentionPeriod;
        private final long retentionRevisions;
        /** Periodic: (monotonic nanos, revision) samples of this leadership, oldest first. */
        private final ArrayDeque<long[]> samples = new ArrayDeque<>();
        private long term;

        Schedule(Duration retentionPeriod, long retentionRevisions) {
            this.retentionPeriod = retentionPeriod;
            this.retentionRevisions = retentionRevisions;
        }

        /** How often to check: revision mode every minute; periodic every tenth of the retention, 1 s to 1 h. */
        Duration interval() {
            if (retentionPeriod == null) {
                return REVISION_CHECK_INTERVAL;
            }
            Duration tenth = retentionPeriod.dividedBy(10);
            Duration hour = Duration.ofHours(1);
            return tenth.compareTo(Duration.ofSeconds(1)) < 0 ? Duration.ofSeconds(1)
                    : tenth.compareTo(hour) > 0 ? hour : tenth;
        }

        /** Forget the samples: this member does not lead (or leads anew). */
        void reset() {
            samples.clear();
            term = 0;
        }

        /**
         * The revision to compact at now, given the leader's term, its monotonic time and the current revision;
         * 0 for none yet.
         */
        long due(long leaderTerm, long nowNanos, long revision) {
            if (retentionPeriod == null) {
                return Math.max(0, revision - retentionRevisions);
            }
            if (leaderTerm != term) {
                reset();
                term = leaderTerm;
            }
            samples.addLast(new long[] {nowNanos, revision});
            long due = 0;
            // The newest sample at least one retention old; older ones are no longer needed.
            while (!samples.isEmpty() && nowNanos - samples.peekFirst()[0] >= retentionPeriod.toNanos()) {
                due = samples.pollFirst()[1];
            }
            return due;
        }
    }
}
