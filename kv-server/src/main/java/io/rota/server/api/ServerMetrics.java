package io.rota.server.api;

import java.util.concurrent.atomic.LongAdder;

/** Counters of the client API, exported by /metrics. Cheap to bump from any thread. */
public final class ServerMetrics {

    public final LongAdder proposalsOk = new LongAdder();
    public final LongAdder proposalsFailed = new LongAdder();
    public final LongAdder forwarded = new LongAdder();
    public final LongAdder readsOk = new LongAdder();
    public final LongAdder readsFailed = new LongAdder();
    public final LongAdder connections = new LongAdder();
    public final LongAdder malformedFrames = new LongAdder();
}
