package io.rota.bench.driver;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class LatenciesTest {

    @Test
    void nearestRankPercentilesOfOneToAThousand() {
        Latencies l = new Latencies();
        for (int v = 1000; v >= 1; v--) {   // recorded out of order: percentiles sort
            l.record(v);
        }
        assertEquals(1000, l.count());
        assertEquals(500, l.percentile(50));
        assertEquals(990, l.percentile(99));
        assertEquals(999, l.percentile(99.9));
        assertEquals(1000, l.percentile(100));
        assertEquals(1, l.percentile(0.01));
    }

    @Test
    void fewSamplesRoundTheRankUp() {
        Latencies l = new Latencies();
        l.record(10);
        l.record(20);
        l.record(30);
        assertEquals(20, l.percentile(50));     // rank ceil(1.5) = 2
        assertEquals(30, l.percentile(99));     // rank ceil(2.97) = 3
    }

    @Test
    void noSampleIsZeroAndBadPercentIsRefused() {
        Latencies l = new Latencies();
        assertEquals(0, l.percentile(99));
        assertThrows(IllegalArgumentException.class, () -> l.percentile(0));
        assertThrows(IllegalArgumentException.class, () -> l.percentile(100.5));
    }

    @Test
    void recordingAfterAPercentileStillCountsAndMergesAddEverything() {
        Latencies a = new Latencies();
        a.record(5);
        assertEquals(5, a.percentile(50));
        a.record(1);
        a.record(-3);                          // a clock step backwards is clamped to 0, not kept negative
        assertEquals(0, a.percentile(1));
        Latencies b = new Latencies();
        for (int i = 0; i < 2000; i++) {      // past the first array's size: it grows
            b.record(100);
        }
        b.addAll(a);
        assertEquals(2003, b.count());
        assertEquals(100, b.percentile(50));
        assertEquals(0, b.percentile(0.01));
    }
}
