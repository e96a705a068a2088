package io.rota.server.fault;

import io.rota.raft.node.Clock;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The chaos clock: wall-clock steps either way; a monotonic clock that drifts but never goes back. */
class FaultClockTest {

    /** A hand-driven clock. */
    private static final class Manual implements Clock {
        long nanos = 1_000_000_000L;
        long millis = 1_700_000_000_000L;

        @Override
        public long nanoTime() {
            return nanos;
        }

        @Override
        public long wallMillis() {
            return millis;
        }
    }

    @Test
    void wallClockStepsForwardAndBackMonotonicClockDoesNot() {
        Manual real = new Manual();
        FaultClock clock = new FaultClock(real);
        long mono = clock.nanoTime();
        clock.set(3_600_000, 0);
        assertEquals(real.millis + 3_600_000, clock.wallMillis());
        clock.set(-60_000, 0);
        assertEquals(real.millis - 60_000, clock.wallMillis());
        assertEquals(mono, clock.nanoTime(), "a wall-clock step moves no duration");
    }

    @Test
    void monotonicRateDriftsWithinTheBoundAndStaysMonotonicAcrossChanges() {
        Manual real = new Manual();
        FaultClock clock = new FaultClock(real);
        clock.set(0, 1_000);
        long before = clock.nanoTime();
        real.nanos += 1_000_000_000L;
        assertEquals(1_001_000_000L, clock.nanoTime() - before, "+1000 ppm: 1 s reads 1.001 s");
        long atChange = clock.nanoTime();
        clock.set(0, -1_000);
        assertTrue(clock.nanoTime() >= atChange, "monotonic across a rate change");
        real.nanos += 1_000_000_000L;
        assertEquals(999_000_000L, clock.nanoTime() - atChange);
        assertThrows(IllegalArgumentException.class, () -> clock.set(0, 1_001));
    }
}
