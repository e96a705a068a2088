package io.rota.server.api;

import io.rota.raft.core.Role;
import io.rota.raft.node.Clock;
import io.rota.raft.node.DriverMetrics;
import io.rota.server.cluster.Timeline;

import java.util.concurrent.atomic.LongAdder;

/**
 * Counters of the client API and of the Raft driver, exported by /metrics. Cheap to bump from any thread
 * (the driver thread included: nothing here blocks).
 */
public final class ServerMetrics implements DriverMetrics {

    public final LongAdder proposalsOk = new LongAdder();
    public final LongAdder proposalsFailed = new LongAdder();
    public final LongAdder forwarded = new LongAdder();
    public final LongAdder readsOk = new LongAdder();
    public final LongAdder readsFailed = new LongAdder();
    public final LongAdder connections = new LongAdder();
    public final LongAdder malformedFrames = new LongAdder();
    public final LongAdder entriesApplied = new LongAdder();
    public final LongAdder snapshots = new LongAdder();
    /** 100 µs to 1 s: a healthy SSD fsyncs in well under a millisecond, a struggling disk in hundreds. */
    public final Histogram fsync = new Histogram(0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
            0.05, 0.1, 0.25, 0.5, 1);
    /** Client writes answered OK, with their latency: the dashboard's writes/s and p99. */
    public final RecentWrites writes = new RecentWrites();
    /** Role, term, leader and vote changes with their times, and other events: the dashboard's timeline. */
    public final Timeline timeline;

    public ServerMetrics() {
        this(Clock.SYSTEM);
    }

    /** @param clock the wall clock the timeline stamps events with */
    public ServerMetrics(Clock clock) {
        timeline = new Timeline(256, clock);
    }

    @Override
    public void synced(long nanos) {
        fsync.record(nanos);
    }

    @Override
    public void applied(int entries) {
        entriesApplied.add(entries);
    }

    @Override
    public void snapshotted() {
        snapshots.increment();
    }

    @Override
    public void roleChanged(Role role, long term, long leaderId, long votedFor) {
        timeline.role(role, term, leaderId, votedFor);
    }
}
