package io.rota.server.api;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The dashboard's writes/s and p99: over the window only, and over what the bounded ring still holds. */
class RecentWritesTest {

    private static final long MS = 1_000_000;
    private static final long S = 1_000 * MS;

    @Test
    void rateAndP99OverTheWindow() {
        RecentWrites w = new RecentWrites();
        w.record(0, 500 * MS);                          // outside the 10 s window below
        for (int i = 1; i <= 100; i++) {
            w.record(10 * S + i * 10 * MS, i * MS);     // 100 writes of 1..100 ms within one second
        }
        RecentWrites.Summary s = w.summarize(11 * S, 10 * S);
        assertEquals(100, s.count());
        assertEquals(10.0, s.perSecond(), 1e-9);
        assertEquals(99.0, s.p99Millis(), 1e-9);
        assertEquals(0, w.summarize(100 * S, 10 * S).count());
    }

    @Test
    void aFullRingCountsOverTheTimeItCovers() {
        RecentWrites w = new RecentWrites();
        for (int i = 0; i < RecentWrites.CAPACITY * 2; i++) {
            w.record(i * MS, MS);                       // 1000 writes/s
        }
        RecentWrites.Summary s = w.summarize(RecentWrites.CAPACITY * 2 * MS, 60 * S);
        assertEquals(RecentWrites.CAPACITY, s.count());
        assertEquals(1000, s.perSecond(), 1.0);
    }
}
