package io.rota.server.api;

import java.math.BigDecimal;
import java.util.concurrent.atomic.LongAdder;

/**
 * A Prometheus histogram of durations with fixed buckets. Recording is two adder bumps, cheap enough for
 * the Raft driver thread; the buckets are kept non-cumulative and summed on export, so a scrape racing a
 * record still sees counts that never decrease from bucket to bucket.
 */
public final class Histogram {

    private final long[] boundsNanos;
    /** counts[i]: observations in (bound[i-1], bound[i]]; the last one is +Inf. */
    private final LongAdder[] counts;
    private final LongAdder sumNanos = new LongAdder();

    /** Upper bounds in seconds, strictly increasing; +Inf is implied. */
    public Histogram(double... boundsSeconds) {
        boundsNanos = new long[boundsSeconds.length];
        for (int i = 0; i < boundsSeconds.length; i++) {
            boundsNanos[i] = Math.round(boundsSeconds[i] * 1e9);
            if (i > 0 && boundsNanos[i] <= boundsNanos[i - 1]) {
                throw new IllegalArgumentException("bucket bounds must increase: " + boundsSeconds[i]);
            }
        }
        counts = new LongAdder[boundsSeconds.length + 1];
        for (int i = 0; i < counts.length; i++) {
            counts[i] = new LongAdder();
        }
    }

    public void record(long nanos) {
        int i = 0;
        while (i < boundsNanos.length && nanos > boundsNanos[i]) {
            i++;
        }
        counts[i].increment();
        sumNanos.add(nanos);
    }

    /** Appends HELP, TYPE, one {@code _bucket} line per bound and +Inf, {@code _sum} (seconds) and {@code _count}. */
    public void writeTo(StringBuilder out, String name, String help) {
        out.append("# HELP ").append(name).append(' ').append(help).append('\n')
                .append("# TYPE ").append(name).append(" histogram\n");
        long cumulative = 0;
        for (int i = 0; i < counts.length; i++) {
            cumulative += counts[i].sum();
            String le = i < boundsNanos.length ? seconds(boundsNanos[i]) : "+Inf";
            out.append(name).append("_bucket{le=\"").append(le).append("\"} ").append(cumulative).append('\n');
        }
        out.append(name).append("_sum ").append(seconds(sumNanos.sum())).append('\n')
                .append(name).append("_count ").append(cumulative).append('\n');
    }

    /** Plain decimal seconds ("0.00025", "1"): exact, and what Prometheus client libraries print. */
    private static String seconds(long nanos) {
        return BigDecimal.valueOf(nanos, 9).stripTrailingZeros().toPlainString();
    }
}
