package io.rota.bench.driver;

import java.util.Arrays;

/**
 * Latency samples of one workload, in microseconds, and their percentiles. Every sample is kept (a run of
 * minutes at tens of thousands of operations per second is a few million longs), so percentiles are exact
 * nearest-rank values rather than bucket estimates. Not thread-safe: each worker records into its own and
 * the workload merges them with {@link #addAll}.
 */
public final class Latencies {

    /** Bounds memory: past this many samples further ones are counted but not kept (about 80 MB). */
    static final int MAX_SAMPLES = 10_000_000;

    private long[] samples = new long[1024];
    private int size;
    private long dropped;
    private boolean sorted = true;

    /**
     * Records one latency.
     *
     * @param micros the latency in microseconds (negative values are clamped to 0)
     */
    public void record(long micros) {
        if (size == MAX_SAMPLES) {
            dropped++;
            return;
        }
        if (size == samples.length) {
            samples = Arrays.copyOf(samples, Math.min(MAX_SAMPLES, samples.length * 2));
        }
        samples[size++] = Math.max(0, micros);
        sorted = false;
    }

    /**
     * Adds all of another recorder's samples.
     *
     * @param other the other recorder
     */
    public void addAll(Latencies other) {
        for (int i = 0; i < other.size; i++) {
            record(other.samples[i]);
        }
        dropped += other.dropped;
    }

    /**
     * How many latencies were recorded (kept or not).
     *
     * @return the count
     */
    public long count() {
        return size + dropped;
    }

    /**
     * The nearest-rank percentile: the smallest sample such that at least {@code percent}% of the samples are
     * at or below it.
     *
     * @param percent in (0, 100]
     * @return the percentile in microseconds, or 0 when there is no sample
     */
    public long percentile(double percent) {
        if (!(percent > 0 && percent <= 100)) {
            throw new IllegalArgumentException("percent must be in (0, 100], got " + percent);
        }
        if (size == 0) {
            return 0;
        }
        if (!sorted) {
            Arrays.sort(samples, 0, size);
            sorted = true;
        }
        // percent * size first: 99.9 / 100 * 1000 is 999.0000000000001 in doubles, and ceil would make it 1000.
        int rank = (int) Math.ceil(percent * size / 100.0 - 1e-9);
        return samples[Math.max(rank, 1) - 1];
    }
}
