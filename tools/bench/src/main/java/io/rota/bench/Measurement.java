package io.rota.bench;

import java.util.Map;

/**
 * One workload's figures on one system, from the driver's result line plus the orchestrator's CPU sample.
 *
 * @param workload     the workload's name (write-64, lock-8x1, failover, ...)
 * @param ops          operations (or lock cycles, or acknowledged failover writes) in the measured window
 * @param seconds      the window's length
 * @param p50Micros    median latency, µs (acquire latency for locks)
 * @param p99Micros    99th percentile, µs
 * @param p999Micros   99.9th percentile, µs
 * @param errors       failed operations in the window
 * @param gapMillis    failover only: the longest time between two acknowledged writes, ms; -1 otherwise
 * @param acksAfterKill failover only: writes acknowledged after the kill (0: the system never recovered in the
 *                     window, and the gap is a lower bound); -1 otherwise
 * @param cpuMicrosPerOp the members' CPU per operation, µs; -1 when not sampled
 */
record Measurement(String workload, long ops, double seconds, long p50Micros, long p99Micros, long p999Micros,
                   long errors, long gapMillis, long acksAfterKill, double cpuMicrosPerOp) {

    /** Operations per second in the window. */
    double opsPerSecond() {
        return seconds > 0 ? ops / seconds : 0;
    }

    /** The same figures with the CPU per operation set. */
    Measurement withCpu(double micros) {
        return new Measurement(workload, ops, seconds, p50Micros, p99Micros, p999Micros, errors, gapMillis,
                acksAfterKill, micros);
    }

    /**
     * Reads a driver's {@code @result} fields.
     *
     * @param f the fields
     * @return the measurement (no CPU yet)
     * @throws IllegalArgumentException if a required field is missing or not a number
     */
    static Measurement of(Map<String, String> f) {
        try {
            return new Measurement(required(f, "workload"), Long.parseLong(required(f, "ops")),
                    Double.parseDouble(required(f, "seconds")), Long.parseLong(f.getOrDefault("p50", "-1")),
                    Long.parseLong(f.getOrDefault("p99", "-1")), Long.parseLong(f.getOrDefault("p999", "-1")),
                    Long.parseLong(f.getOrDefault("errors", "0")), Long.parseLong(f.getOrDefault("gap_ms", "-1")),
                    Long.parseLong(f.getOrDefault("acks_after_kill", "-1")), -1);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("a number field of the driver's result is not a number: " + f, e);
        }
    }

    private static String required(Map<String, String> f, String key) {
        String v = f.get(key);
        if (v == null) {
            throw new IllegalArgumentException("the driver's result has no '" + key + "': " + f);
        }
        return v;
    }
}
