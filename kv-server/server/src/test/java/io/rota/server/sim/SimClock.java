package io.rota.server.sim;

import io.rota.raft.node.Clock;

/**
 * One member's (or client's) clocks, derived from the loop's true time:
 * <ul>
 *   <li>monotonic: {@code base + true × (1 + ppm / 10⁶)} — never goes back; its rate drifts within the
 *       bound the lease design assumes ({@link ServerWorld#MAX_DRIFT_PPM});</li>
 *   <li>wall: true time + an offset that the clock faults step forward and back at will.</li>
 * </ul>
 */
final class SimClock implements Clock {

    private final SimLoop loop;
    private long ratePpm;
    private long rateSinceTrue;
    private long rateSinceMono;
    private long wallOffsetMs;

    SimClock(SimLoop loop, long monoBase, long ratePpm, long wallOffsetMs) {
        this.loop = loop;
        this.ratePpm = ratePpm;
        this.rateSinceTrue = loop.now();
        this.rateSinceMono = monoBase;
        this.wallOffsetMs = wallOffsetMs;
    }

    @Override
    public long nanoTime() {
        long elapsed = loop.now() - rateSinceTrue;
        return rateSinceMono + elapsed + elapsed * ratePpm / 1_000_000;
    }

    @Override
    public long wallMillis() {
        return 1_800_000_000_000L + loop.now() / 1_000_000 + wallOffsetMs;
    }

    /** The true time at which this clock's monotonic time reaches {@code localNanos} (rounded up). */
    long trueTimeOf(long localNanos) {
        long localElapsed = localNanos - rateSinceMono;
        // local = true × (1 + ppm/1e6)  ⇒  true = local × 1e6 / (1e6 + ppm)
        double trueElapsed = localElapsed * 1_000_000.0 / (1_000_000.0 + ratePpm);
        return rateSinceTrue + (long) Math.ceil(trueElapsed);
    }

    void setRatePpm(long ppm) {
        long mono = nanoTime();
        rateSinceTrue = loop.now();
        rateSinceMono = mono;
        ratePpm = ppm;
    }

    void stepWall(long deltaMs) {
        wallOffsetMs += deltaMs;
    }
}
