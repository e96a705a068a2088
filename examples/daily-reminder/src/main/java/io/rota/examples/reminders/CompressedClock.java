package io.rota.examples.reminders;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/**
 * A wall clock that runs {@code speed} times faster than real time from a shared origin, so that a
 * day passes in a few seconds and every process given the same origin agrees on the simulated time.
 * Used only by the demo: the singleton job's schedule is the real {@code daily(08:00)} one.
 */
final class CompressedClock extends Clock {

    private final long realOriginMs;
    private final Instant simOrigin;
    private final double speed;

    /**
     * @param realOriginMs the real wall-clock time (epoch ms) at which simulated time is {@code simOrigin}
     * @param simOrigin    the simulated instant at the origin
     * @param speed        simulated milliseconds per real millisecond
     */
    CompressedClock(long realOriginMs, Instant simOrigin, double speed) {
        this.realOriginMs = realOriginMs;
        this.simOrigin = simOrigin;
        this.speed = speed;
    }

    /** Simulated milliseconds per real millisecond. */
    double speed() {
        return speed;
    }

    @Override
    public Instant instant() {
        return simOrigin.plusMillis((long) ((System.currentTimeMillis() - realOriginMs) * speed));
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        throw new UnsupportedOperationException("the demo clock is UTC only");
    }
}
