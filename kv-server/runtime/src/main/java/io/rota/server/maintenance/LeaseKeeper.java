package io.rota.server.maintenance;

import io.rota.proto.Command;
import io.rota.proto.CommandResult;
import io.rota.proto.LeaseCheckpointRequest;
import io.rota.proto.LeaseExpireRequest;
import io.rota.proto.StoreSnapshot;
import io.rota.raft.node.Clock;
import io.rota.raft.node.RaftDriver;
import io.rota.raft.node.RoleChange;
import io.rota.raft.node.RoleListener;
import io.rota.server.lease.LeaseListener;
import io.rota.server.lease.LogClock;
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
import java.util.function.Supplier;

/**
 * The leader's lease clock (etcd's lessor). Only the leader decides that a lease expired, and it decides
 * on its MONOTONIC clock; the decision travels through the log as a LeaseExpire naming the renewal it
 * timed, so every replica deletes the lease's keys at the same revision — or, if a keep-alive renewed the
 * lease in the log first, none does.
 *
 * <p>Timing, on this member's monotonic {@link Clock}:
 * <ul>
 *   <li>When this member becomes leader it starts each lease at the remaining time the log holds (deadline
 *       minus log time, see {@code LogClock}). Log time never runs ahead of real time, so this is never
 *       earlier than the old leader would have expired it; no wall clock takes part (issue 11, hole 2).</li>
 *   <li>A grant or keep-alive applied here (whoever proposed it) restarts the lease at its full TTL from
 *       the moment it applied, which is after its client sent it: the holder's safe-until (send + TTL)
 *       comes first.</li>
 *   <li>Every {@code checkpointInterval} the leader proposes a LeaseCheckpoint with each lease's remaining
 *       time, so the remaining time survives failovers.</li>
 *   <li>An expiry carries the renewal it judged; the state machine drops it if the lease was renewed
 *       since (issue 11, hole 1: a keep-alive answered TTL &gt; 0 is never followed by the keys' deletion).</li>
 * </ul>
 * A dead holder's last keep-alive at t0 puts the deadline at t0 + TTL in the log. Log time does not move
 * while there is no leader, so a new leader's deadline lands up to (the election's duration) + one
 * checkpoint interval after t0 + TTL: late, never early (docs/design.md S7, S8).
 *
 * <p>Leadership is pushed, not polled: the driver tells this keeper of every role change
 * ({@link RoleListener}, on the timer thread). The keeper still ticks, to time the leases.
 *
 * <p>All state lives on the timer thread: driver callbacks only post to it.
 */
public final class LeaseKeeper implements RoleListener, LeaseListener, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(LeaseKeeper.class);
    /** Checkpoints per LeaseCheckpoint command: bounds the size of one log entry. */
    static final int MAX_CHECKPOINTS_PER_COMMAND = 1_000;

    /**
     * A lease's deadline on this member's monotonic clock, the renewal (log index) it stems from, and its
     * granted TTL (for the expiry's log line).
     */
    private record Timed(long deadlineNanos, long renewal, long ttlSeconds) {
    }

    private final RaftDriver<CommandResult> driver;
    private final Supplier<List<StoreSnapshot.LeaseImage>> leaseImages;
    private final ScheduledExecutorService timer;
    private final Clock clock;
    private final Duration checkpointInterval;
    private final Duration requestTimeout;
    /** Read on the driver thread: whether renewals are worth posting to the timer thread at all. */
    private volatile boolean leadingHint;

    // --- timer thread only ---
    /** Lease id → deadline. Empty unless leading. */
    private final Map<Long, Timed> deadlines = new HashMap<>();
    private final Set<Long> expiring = new HashSet<>();
    /** Keys each applied expiry deleted, from {@link #ended} to the expiry's answer, queued right behind it. */
    private final Map<Long, Integer> keysDeletedByExpiry = new HashMap<>();
    /** The role the driver last pushed, or null before the first. */
    private RoleChange role;
    private boolean leading;
    /** The term this keeper times leases for, while {@link #leading}. */
    private long leadingTerm;
    /** +1 per leadership gained, so a late lease read from an older term is ignored. */
    private long epoch;
    private long lastCheckpoint;
    private ScheduledFuture<?> task;

    /**
     * @param leaseImages runs on the driver thread after a ReadIndex: the state machine's leases
     */
    public LeaseKeeper(RaftDriver<CommandResult> driver, Supplier<List<StoreSnapshot.LeaseImage>> leaseImages,
                       ScheduledExecutorService timer, Clock clock, Duration checkpointInterval,
                       Duration requestTimeout) {
        this.driver = driver;
        this.leaseImages = leaseImages;
        this.timer = timer;
        this.clock = clock;
        this.checkpointInterval = checkpointInterval;
        this.requestTimeout = requestTimeout;
    }

    /** Hear of role changes from the driver, and check deadlines every {@code checkEvery}. */
    public void start(Duration checkEvery) {
        driver.addRoleListener(this, timer);
        task = timer.scheduleWithFixedDelay(this::check, checkEvery.toMillis(), checkEvery.toMillis(),
                TimeUnit.MILLISECONDS);
    }

    /** Timer thread: pushed by the driver when this member's role, term or leader changes. */
    @Override
    public void onRoleChange(RoleChange change) {
        role = change;
        if (change.isLeader() && (!leading || change.term() != leadingTerm)) {
            becomeLeader(change.term());
        } else if (!change.isLeader() && leading) {
            stopLeading();
            log.info("stopped timing leases: no longer the leader (term {})", change.term());
        }
    }

    private void stopLeading() {
        leading = false;
        leadingHint = false;
        deadlines.clear();
        expiring.clear();
        keysDeletedByExpiry.clear();
    }

    private void becomeLeader(long term) {
        stopLeading();
        leading = true;
        leadingTerm = term;
        leadingHint = true;
        long myEpoch = ++epoch;
        // A linearizable read: it runs once this leader has applied everything committed before it. Renewals
        // applied after it reach renewed() (posted behind this read's answer, in apply order).
        driver.read(leaseImages, requestTimeout).whenCompleteAsync((images, e) -> {
            if (myEpoch != epoch || !leading) {
                return;
            }
            if (e != null) {
                // Not timing anything yet: the next check (one tick) tries again.
                log.warn("could not read the leases after becoming leader ({}); retrying", e.toString());
                stopLeading();
                return;
            }
            long now = clock.nanoTime();
            for (StoreSnapshot.LeaseImage l : images) {
                deadlines.putIfAbsent(l.getID(), new Timed(now + TimeUnit.MILLISECONDS.toNanos(l.getRemainingMs()),
                        l.getRenewal(), l.getTTL()));
            }
            lastCheckpoint = now;
            log.info("timing {} leases as the new leader", images.size());
        }, timer);
    }

    /** A grant or keep-alive was applied (driver thread): restart the lease at its full TTL from now. */
    @Override
    public void renewed(long id, long ttlSeconds, long renewal) {
        if (!leadingHint) {
            return;
        }
        long deadline = clock.nanoTime() + TimeUnit.SECONDS.toNanos(ttlSeconds);
        timer.execute(() -> {
            if (leading) {
                deadlines.put(id, new Timed(deadline, renewal, ttlSeconds));
                expiring.remove(id); // an expiry in flight for the old renewal will be dropped by the log
            }
        });
    }

    /** A revoke or expiry was applied (driver thread). */
    @Override
    public void ended(long id, int keysDeleted) {
        if (!leadingHint) {
            return;
        }
        timer.execute(() -> {
            deadlines.remove(id);
            if (expiring.remove(id)) {
                keysDeletedByExpiry.put(id, keysDeleted);
            }
        });
    }

    private void check() {
        if (!driver.isRunning()) {
            return;
        }
        if (!leading && role != null && role.isLeader()) {
            becomeLeader(role.term()); // the lease read after the last push failed: try again
        }
        if (!leading) {
            return;
        }
        long now = clock.nanoTime();
        deadlines.forEach((id, timed) -> {
            if (now - timed.deadlineNanos() >= 0 && expiring.add(id)) {
                expire(id, timed);
            }
        });
        if (now - lastCheckpoint >= checkpointInterval.toNanos() && !deadlines.isEmpty()) {
            lastCheckpoint = now;
            checkpoint(now);
        }
    }

    private void expire(long id, Timed timed) {
        Command c = stamped().setLeaseExpire(LeaseExpireRequest.newBuilder().setID(id).setRenewal(timed.renewal()))
                .build();
        long myEpoch = epoch;
        driver.propose(c.toByteArray(), requestTimeout).whenCompleteAsync((r, e) -> {
            if (myEpoch != epoch) {
                return;
            }
            Integer keysDeleted = keysDeletedByExpiry.remove(id);
            if (e == null && r.hasLeaseExpire() && !r.getLeaseExpire().getRenewedSince()) {
                // ended() has forgotten it, and counted the keys its revoke deleted.
                log.info("lease {} expired: TTL {} s, renewal {}, {} keys deleted at revision {}", id,
                        timed.ttlSeconds(), timed.renewal(), keysDeleted == null ? "?" : keysDeleted,
                        r.getLeaseExpire().getHeader().getRevision());
            } else if (e != null) {
                expiring.remove(id); // not applied (or unknown): the next check proposes it again
            }
        }, timer);
    }

    /**
     * Each remaining time is read before the command is stamped, so the log's deadline (stamp time +
     * remaining) is never earlier than this leader's.
     */
    private void checkpoint(long now) {
        LeaseCheckpointRequest.Builder batch = LeaseCheckpointRequest.newBuilder();
        for (Map.Entry<Long, Timed> d : deadlines.entrySet()) {
            long remainingMs = Math.max(0, TimeUnit.NANOSECONDS.toMillis(d.getValue().deadlineNanos() - now));
            batch.addCheckpoints(LeaseCheckpointRequest.Checkpoint.newBuilder().setID(d.getKey())
                    .setRemainingMs(remainingMs).setRenewal(d.getValue().renewal()));
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
        Command c = stamped().setLeaseCheckpoint(checkpoints).build();
        driver.propose(c.toByteArray(), requestTimeout).exceptionally(e -> {
            log.debug("lease checkpoint not committed: {}", e.toString());
            return null;
        });
    }

    private Command.Builder stamped() {
        return Command.newBuilder().setStamp(LogClock.stamp(driver.leadership(), clock.nanoTime()));
    }

    @Override
    public void close() {
        if (task != null) {
            task.cancel(false);
        }
    }
}
