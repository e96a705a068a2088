package io.rota.server.api;

import io.rota.raft.node.DriverMetrics;

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
}
