package io.rota.client;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The SDK's one backoff: bounds, doubling, jitter, and the server's retry-after as a floor. */
class BackoffTest {

    @Test
    @DisplayName("20 ms after the first failure, doubling, at most 1 s (also for nonsense counts)")
    void boundsAndDoubling() {
        assertEquals(20, Backoff.delayMs(1));
        assertEquals(40, Backoff.delayMs(2));
        assertEquals(80, Backoff.delayMs(3));
        assertEquals(640, Backoff.delayMs(6));
        assertEquals(Backoff.MAX_MS, Backoff.delayMs(7));
        assertEquals(Backoff.MAX_MS, Backoff.delayMs(Integer.MAX_VALUE));
        assertEquals(Backoff.MIN_MS, Backoff.delayMs(0));
        assertEquals(Backoff.MIN_MS, Backoff.delayMs(-5));
    }

    @Test
    @DisplayName("a call's jittered delay lies in [backoff/2, backoff] and varies (seeded)")
    void jitterStaysWithinHalfAndWhole() {
        SplittableRandom random = new SplittableRandom(42);
        for (int failures = 1; failures <= 12; failures++) {
            long backoff = Backoff.delayMs(failures);
            long min = Long.MAX_VALUE;
            long max = 0;
            for (int i = 0; i < 200; i++) {
                long d = Backoff.jitteredMs(failures, 0, random);
                assertTrue(d >= backoff / 2 && d <= backoff, failures + " failures: " + d + " ms");
                min = Math.min(min, d);
                max = Math.max(max, d);
            }
            assertTrue(max > min, "jittered, not fixed, after " + failures + " failures");
        }
    }

    @Test
    @DisplayName("a server's retry-after is a floor under the backoff, never a ceiling")
    void retryAfterIsAFloor() {
        SplittableRandom random = new SplittableRandom(7);
        assertEquals(300, Backoff.jitteredMs(1, 300, random));
        assertEquals(300, Backoff.delayMs(1, 300));
        assertEquals(Backoff.MAX_MS, Backoff.delayMs(10, 300), "a longer backoff stands");
        long d = Backoff.jitteredMs(10, 300, random);
        assertTrue(d >= Backoff.MAX_MS / 2 && d <= Backoff.MAX_MS, d + " ms");
    }
}
