package io.rota.server.authgate;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

class FailureLimiterTest {

    @Test
    @DisplayName("three failures are free, then the wait doubles from 500 ms up to 30 s; a success clears it")
    void exponentialDelay() {
        FailureLimiter limiter = new FailureLimiter(10);
        long now = 1_000;
        for (int i = 0; i < FailureLimiter.FREE_FAILURES; i++) {
            assertEquals(0, limiter.failed("u", now));
        }
        assertEquals(500, limiter.failed("u", now));
        assertEquals(500, limiter.waitMs("u", now));
        assertEquals(200, limiter.waitMs("u", now + 300));
        assertEquals(1_000, limiter.failed("u", now + 500));
        assertEquals(0, limiter.waitMs("other", now), "keys are independent");
        for (int i = 0; i < 20; i++) {
            limiter.failed("u", now);
        }
        assertEquals(FailureLimiter.MAX_DELAY_MS, limiter.waitMs("u", now));
        limiter.succeeded("u");
        assertEquals(0, limiter.waitMs("u", now));
    }

    @Test
    @DisplayName("bounded: the least recently failed key is forgotten beyond the limit")
    void bounded() {
        FailureLimiter limiter = new FailureLimiter(2);
        for (String k : new String[] {"a", "b", "c"}) {
            for (int i = 0; i <= FailureLimiter.FREE_FAILURES; i++) {
                limiter.failed(k, 0);
            }
        }
        assertEquals(0, limiter.waitMs("a", 0));
        assertEquals(500, limiter.waitMs("c", 0));
    }
}
