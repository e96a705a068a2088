package io.rota.server.api;

import java.util.Arrays;

/**
 * The latencies of the most recent client writes this member took (forwarded or not), for the dashboard's
 * writes/s and p99: a ring of the last {@link #CAPACITY} (time, latency) pairs. Display only; nothing
 * decides on it. Thread-safe.
 */
public final class RecentWrites {

    static final int CAPACITY = 4096;

    /** Writes per second over the window, and the 99th percentile latency of those writes (0 if none). */
    public record Summary(double perSecond, double p99Millis, int count) {
    }

    private final long[] at = new long[CAPACITY];
    private final long[] latency = new long[CAPACITY];
    private long written;

    /** A write that answered OK after {@code latencyNanos}, at {@code nowNanos} (monotonic). */
    public synchronized void record(long nowNanos, long latencyNanos) {
        int slot = (int) (written++ % CAPACITY);
        at[slot] = nowNanos;
        latency[slot] = latencyNanos;
    }

    /** The writes that ended within {@code windowNanos} before {@code nowNanos} (at most the ring's). */
    public synchronized Summary summarize(long nowNanos, long windowNanos) {
        int n = (int) Math.min(written, CAPACITY);
        long[] inWindow = new long[n];
        int count = 0;
        long oldest = nowNanos;
        for (int i = 0; i < n; i++) {
            if (nowNanos - at[i] <= windowNanos) {
                inWindow[count++] = latency[i];
                oldest = Math.min(oldest, at[i]);
            }
        }
        if (count == 0) {
            return new Summary(0, 0, 0);
        }
        Arrays.sort(inWindow, 0, count);
        // A full ring may cover less than the window: divide by the time it does cover.
        long span = count == CAPACITY ? Math.max(1, nowNanos - oldest) : windowNanos;
        double p99 = inWindow[Math.min(count - 1, (int) Math.ceil(count * 0.99) - 1)] / 1e6;
        return new Summary(count * 1e9 / span, p99, count);
    }
}
