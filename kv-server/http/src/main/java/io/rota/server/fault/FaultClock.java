package io.rota.server.fault;

import io.rota.raft.node.Clock;

/**
 * A {@link Clock} whose faults can be set while the member runs — for chaos tests only (the clock nemesis,
 * {@code rota server --unsafe-fault-injection}). Two faults, as real machines have them:
 * <ul>
 *   <li>a wall-clock offset, set at any moment (a step forward or back, as NTP or an operator makes);</li>
 *   <li>a monotonic rate error in parts per million (a crystal that runs fast or slow). The monotonic
 *       clock stays monotonic across a change of rate: it is re-based at the moment of the change.</li>
 * </ul>
 */
public final class FaultClock implements Clock {

    /** Larger rate errors than this are refused: no real clock is that bad, and the lease bound assumes less. */
    public static final long MAX_RATE_PPM = 1_000;

    private final Clock real;
    private volatile long wallOffsetMs;
    private long ratePpm;
    private long realBase;
    private long skewedBase;

    public FaultClock(Clock real) {
        this.real = real;
        this.realBase = real.nanoTime();
        this.skewedBase = realBase;
    }

    @Override
    public synchronized long nanoTime() {
        long elapsed = real.nanoTime() - realBase;
        return skewedBase + elapsed + elapsed / 1_000_000 * ratePpm;
    }

    @Override
    public long wallMillis() {
        return real.wallMillis() + wallOffsetMs;
    }

    /**
     * Set both faults (absolute, not cumulative).
     *
     * @throws IllegalArgumentException if |ratePpm| exceeds {@link #MAX_RATE_PPM}
     */
    public synchronized void set(long wallOffsetMs, long ratePpm) {
        if (Math.abs(ratePpm) > MAX_RATE_PPM) {
            throw new IllegalArgumentException("mono-rate-ppm must be within ±" + MAX_RATE_PPM + ", got " + ratePpm);
        }
        long now = nanoTime();
        this.realBase = real.nanoTime();
        this.skewedBase = now;
        this.ratePpm = ratePpm;
        this.wallOffsetMs = wallOffsetMs;
    }

    public long wallOffsetMs() {
        return wallOffsetMs;
    }

    public synchronized long ratePpm() {
        return ratePpm;
    }
}
