package io.rota.server.lease;

import io.rota.proto.Command;
import io.rota.proto.CommandResult;
import io.rota.proto.LeaseCheckpointRequest;
import io.rota.proto.LeaseExpireRequest;
import io.rota.proto.StoreSnapshot;
import io.rota.raft.core.Role;
import io.rota.raft.node.NodeStatus;
import io.rota.raft.node.RaftDriver;
import io.rota.server.cluster.ClusterView;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongFunction;

/**
 * The leader's lease clock (etcd's lessor). Only the leader decides that a lease expired, and it decides
 * on its MONOTONIC clock ({@link System#nanoTime}); the decision travels through the log as a
 * LeaseExpire command, so every replica deletes the lease's keys at the same revision.
 *
 * <p>Timing, with E = the election timeout:
 * <ul>
 *   <li>When this member becomes leader it starts each lease at min(TTL, remaining + E), where remaining
 *       is what the log says is left (the last keep-alive or checkpoint, minus the log time since): never
 *       earlier than the old leader would have expired it, so a new leader does not expire leases early.</li>
 *   <li>A committed keep-alive or grant restarts the lease at its full TTL.</li>
 *   <li>Every {@code checkpointInterval} the leader proposes a LeaseCheckpoint with each lease's remaining
 *       time, so the remaining time survives failovers.</li>
 * </ul>
 * A dead holder's last keep-alive at t0 puts the deadline at t0 + TTL in the log. Log time does not move
 * while there is no leader, so a new leader's deadline lands up to E + (the election's duration) + one
 * checkpoint interval after t0 + TTL: late, never early (docs/server.md has the bound per failure kind).
 *
 * <p>All state lives on the timer thread: driver callbacks only post to it.
 */
public final class LeaseKeeper implements ClusterView.Listener, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(LeaseKeeper.class);
    /** Checkpoints per LeaseCheckpoint command: bounds the size of one log entry. */
    static final int MAX_CHECKPOINTS_PER_COMMAND = 1_000;

    private final RaftDriver<CommandResult> driver;
    private final LongFunction<List<StoreSnapshot.LeaseImage>> leaseImages;
    private final ScheduledExecutorService timer;
    private final Duration electionTimeout;
    private final Duration checkpointInterval;
    private final Duration requestTimeout;

    // --- timer thread only ---
    /** Lease id → deadline on this member's monotonic clock (nanos). Empty unless leading. */
    private final Map<Long, Long> deadlines = new HashMap<>();
    private final Set<Long> expiring = new HashSet<>();
    private boolean leading;
    /** +1 per leadership gained, so a late lease read from an older term is ignored. */
    private long epoch;
    private long lastCheckpoint;
    private ScheduledFuture<?> task;

    /**
     * @param leaseImages runs on the driver thread after a ReadIndex: the state machine's leases at a time
     */
    public LeaseKeeper(RaftDriver<CommandResult> driver, LongFunction<List<StoreSnapshot.LeaseImage>> leaseImages,
                       ScheduledExecutorService timer, Duration electionTimeout, Duration checkpointInterval,
                       Duration requestTimeout) {
        this.driver = driver;
        this.leaseImages = leaseImages;
        this.timer = timer;
        this.electionTimeout = electionTimeout;
        this.checkpointInterval = checkpointInterval;
        this.requestTimeout = requestTimeout;
    }

    /** Check deadlines every {@code checkEvery}. */
    public void start(Duration checkEvery) {
        task = timer.scheduleWithFixedDelay(this::check, checkEvery.toMillis(), checkEvery.toMillis(),
                TimeUnit.MILLISECONDS);
    }

    /** Runs on the timer thread after each status refresh. */
    @Override
    public void onRefresh(NodeStatus previous, NodeStatus current) {
        boolean leaderNow = current.role() == Role.LEADER;
        boolean newTerm = previous != null && previous.term() != current.term();
        if (leaderNow && (!leading || newTerm)) {
            becomeLeader();
        } else if (!leaderNow && leading) {
            leading = false;
            deadlines.clear();
            expiring.clear();
            log.info("stopped timing leases: no longer the leader");
        }
    }

    private void becomeLeader() {
        leading = true;
        long myEpoch = ++epoch;
        deadlines.clear();
        expiring.clear();
        long wallNow = System.currentTimeMillis();
        // A linearizable read: it runs once this leader has applied everything committed before it.
        driver.read(() -> leaseImages.apply(wallNow), requestTimeout).whenCompleteAsync((images, e) -> {
            if (myEpoch != epoch || !leading) {
                return;
            }
            if (e != null) {
                // Not timing anything yet: the next status refresh (one tick) tries again.
                log.warn("could not read the leases after becoming leader ({}); retrying", e.toString());
                leading = false;
                return;
            }
            long now = System.nanoTime();
            for (StoreSnapshot.LeaseImage l : images) {
                long startMs = Math.min(l.getTTL() * 1000, l.getRemainingMs() + electionTimeout.toMillis());
                deadlines.putIfAbsent(l.getID(), now + TimeUnit.MILLISECONDS.toNanos(startMs));
            }
            lastCheckpoint = now;
            log.info("timing {} leases as the new leader", images.size());
        }, timer);
    }

    /**
     * A command this member proposed was applied: grants and keep-alives restart a lease at its full TTL,
     * revokes and expiries forget it. Called on the driver thread; posts to the timer thread.
     */
    public void onApplied(Command command, CommandResult result) {
        boolean aboutLeases = switch (command.getOpCase()) {
            case LEASE_GRANT, LEASE_KEEP_ALIVE, LEASE_REVOKE, LEASE_EXPIRE -> true;
            default -> false;
        };
        if (!aboutLeases) {
            return;
        }
        long now = System.nanoTime();
        timer.execute(() -> {
            if (!leading) {
                return;
            }
            switch (result.getResultCase()) {
                case LEASE_GRANT -> restart(result.getLeaseGrant().getID(), result.getLeaseGrant().getTTL(), now);
                case LEASE_KEEP_ALIVE -> restart(result.getLeaseKeepAlive().getID(),
                        result.getLeaseKeepAlive().getTTL(), now);
                case LEASE_REVOKE -> forget(command.getLeaseRevoke().getID());
                case LEASE_EXPIRE -> forget(command.getLeaseExpire().getID());
                case ERROR -> {
                    if (command.hasLeaseKeepAlive()) {
                        forget(command.getLeaseKeepAlive().getID());
                    }
                }
                default -> { }
            }
        });
    }

    private void restart(long id, long ttlSeconds, long now) {
        deadlines.put(id, now + TimeUnit.SECONDS.toNanos(ttlSeconds));
    }

    private void forget(long id) {
        deadlines.remove(id);
        expiring.remove(id);
    }

    private void check() {
        if (!leading || !driver.isRunning()) {
            return;
        }
        long now = System.nanoTime();
        deadlines.forEach((id, deadline) -> {
            if (now - deadline >= 0 && expiring.add(id)) {
                expire(id);
            }
        });
        if (now - lastCheckpoint >= checkpointInterval.toNanos() && !deadlines.isEmpty()) {
            lastCheckpoint = now;
            checkpoint(now);
        }
    }

    private void expire(long id) {
        Command c = Command.newBuilder().setNowUnixMs(System.currentTimeMillis())
                .setLeaseExpire(LeaseExpireRequest.newBuilder().setID(id)).build();
        long myEpoch = epoch;
        driver.propose(c.toByteArray(), requestTimeout).whenCompleteAsync((r, e) -> {
            if (myEpoch != epoch) {
                return;
            }
            if (e == null) {
                log.info("lease {} expired", id);
                forget(id);
            } else {
                expiring.remove(id); // not applied (or unknown): the next check proposes it again
            }
        }, timer);
    }

    private void checkpoint(long now) {
        LeaseCheckpointRequest.Builder batch = LeaseCheckpointRequest.newBuilder();
        for (Map.Entry<Long, Long> d : deadlines.entrySet()) {
            long remainingMs = Math.max(0, TimeUnit.NANOSECONDS.toMillis(d.getValue() - now));
            batch.addCheckpoints(LeaseCheckpointRequest.Checkpoint.newBuilder().setID(d.getKey())
                    .setRemainingMs(remainingMs));
            if (batch.getCheckpointsCount() == MAX_CHECKPOINTS_PER_COMMAND) {
                proposeCheckpoint(batch.build());
                batch.clear();
            }
        }
        if (batch.getCheckpointsCount() > 0) {
            proposeCheckpoint(batch.build());
        }
    }

    private void proposeCheckpoint(LeaseCheckpointRequest checkpoints) {
        Command c = Command.newBuilder().setNowUnixMs(System.currentTimeMillis()).setLeaseCheckpoint(checkpoints).build();
        driver.propose(c.toByteArray(), requestTimeout).exceptionally(e -> {
            log.debug("lease checkpoint not committed: {}", e.toString());
            return null;
        });
    }

    @Override
    public void close() {
        if (task != null) {
            task.cancel(false);
        }
    }
}
