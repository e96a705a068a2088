package io.rota.server.api;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class HistogramTest {

    @Test
    void writesCumulativeBucketsSumAndCountInPrometheusTextFormat() {
        Histogram h = new Histogram(0.0001, 0.001, 1);
        h.record(50_000);          // 50 µs: first bucket
        h.record(100_000);         // exactly on a bound: that bucket (le is "less or equal")
        h.record(700_000);         // 0.7 ms
        h.record(3_000_000_000L);  // 3 s: only +Inf
        StringBuilder out = new StringBuilder();
        h.writeTo(out, "rota_fsync_duration_seconds", "fsync time");
        assertEquals("""
                # HELP rota_fsync_duration_seconds fsync time
                # TYPE rota_fsync_duration_seconds histogram
                rota_fsync_duration_seconds_bucket{le="0.0001"} 2
                rota_fsync_duration_seconds_bucket{le="0.001"} 3
                rota_fsync_duration_seconds_bucket{le="1"} 3
                rota_fsync_duration_seconds_bucket{le="+Inf"} 4
                rota_fsync_duration_seconds_sum 3.00085
                rota_fsync_duration_seconds_count 4
                """, out.toString());
    }

    @Test
    void anEmptyHistogramHasZeroBucketsSumAndCount() {
        StringBuilder out = new StringBuilder();
        new Histogram(0.5).writeTo(out, "h", "x");
        assertEquals("""
                # HELP h x
                # TYPE h histogram
                h_bucket{le="0.5"} 0
                h_bucket{le="+Inf"} 0
                h_sum 0
                h_count 0
                """, out.toString());
    }

    @Test
    void boundsMustIncrease() {
        assertThrows(IllegalArgumentException.class, () -> new Histogram(0.1, 0.1));
    }
}
