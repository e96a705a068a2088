package io.rota.bench;

import io.rota.bench.driver.DriverMain;

import java.util.List;

/**
 * What one compare pass runs: which systems, which workloads, and how long each. Configuration style of
 * design.md H5: named defaults, a builder, checks in the compact constructor that name the option.
 *
 * @param systems          driver names in the order they run (rota, etcd, zookeeper)
 * @param workloads        DriverMain workload names, in order (failover, if present, last)
 * @param warmupMs         warm-up per workload, not measured
 * @param measureMs        measured window per workload
 * @param failoverBeforeMs steady writing before the leader is killed
 * @param failoverAfterMs  writing after the kill: must cover the peers' elections and reconnections
 * @param quick            whether this is the short pass (for the report's method line)
 */
record Plan(List<String> systems, List<String> workloads, long warmupMs, long measureMs, long failoverBeforeMs,
            long failoverAfterMs, boolean quick) {

    /** Every system, Rota first (the ratio's numerator). */
    static final List<String> DEFAULT_SYSTEMS = List.of("rota", "etcd", "zookeeper");
    /**
     * Systems a pass may name: the defaults and rota-etcd (Rota's etcd port driven by etcd's jetcd driver: the
     * same client against both servers). Opt-in: {@code --systems rota,rota-etcd,etcd}.
     */
    static final List<String> KNOWN_SYSTEMS = List.of("rota", "rota-etcd", "etcd", "zookeeper");
    /** Full pass: 5 s lets every JVM (three ZooKeeper members, three Rota members, the driver) compile its hot path. */
    static final long DEFAULT_WARMUP_MS = 5_000;
    /** Full pass: 10 s per row keeps a whole pass of three systems under 15 minutes. */
    static final long DEFAULT_MEASURE_MS = 10_000;
    /** --quick: enough to see the shape, not to publish (the whole pass stays under 4 minutes). */
    static final long QUICK_WARMUP_MS = 1_000;
    /** --quick measured window. */
    static final long QUICK_MEASURE_MS = 3_000;
    /** Steady writing before the kill: the writer's rate is established. */
    static final long DEFAULT_FAILOVER_BEFORE_MS = 3_000;
    /** After the kill: etcd's election timeout is 1 s, ZooKeeper's session reconnect a few; 7 s covers both. */
    static final long DEFAULT_FAILOVER_AFTER_MS = 7_000;
    /** --quick failover windows. */
    static final long QUICK_FAILOVER_BEFORE_MS = 2_000;
    /** --quick: still longer than any of the three systems' failover seen here (about 1.3 s). */
    static final long QUICK_FAILOVER_AFTER_MS = 5_000;

    Plan {
        systems = List.copyOf(systems);
        workloads = List.copyOf(workloads);
        if (systems.isEmpty()) {
            throw new IllegalArgumentException("--systems names no system: give some of rota,rota-etcd,etcd,zk");
        }
        for (String s : systems) {
            if (!KNOWN_SYSTEMS.contains(s)) {
                throw new IllegalArgumentException("--systems: unknown system '" + s + "': use rota, rota-etcd, etcd, zk");
            }
        }
        if (systems.stream().distinct().count() != systems.size()) {
            throw new IllegalArgumentException("--systems names a system twice: " + systems);
        }
        if (workloads.isEmpty()) {
            throw new IllegalArgumentException("--workloads names no workload: give some of " + DriverMain.WORKLOADS);
        }
        for (String w : workloads) {
            if (!DriverMain.WORKLOADS.contains(w)) {
                throw new IllegalArgumentException("--workloads: unknown workload '" + w + "': use "
                        + String.join(",", DriverMain.WORKLOADS));
            }
        }
        if (workloads.contains("failover") && !workloads.get(workloads.size() - 1).equals("failover")) {
            throw new IllegalArgumentException("--workloads: failover must come last (it leaves a member dead)");
        }
        if (warmupMs < 0) {
            throw new IllegalArgumentException("--warmup must not be negative, got " + warmupMs + " ms");
        }
        if (measureMs < 500) {
            throw new IllegalArgumentException("--measure must be at least 0.5 s, got " + measureMs + " ms");
        }
        if (failoverBeforeMs < 500 || failoverAfterMs < 1_000) {
            throw new IllegalArgumentException("the failover windows must be at least 0.5 s before and 1 s after "
                    + "the kill, got " + failoverBeforeMs + " and " + failoverAfterMs + " ms");
        }
    }

    /** A builder with the full pass's defaults. */
    static Builder builder() {
        return new Builder();
    }

    /** A builder holding this plan's values. */
    Builder toBuilder() {
        return new Builder().quick(quick).systems(systems).workloads(workloads).warmupMs(warmupMs)
                .measureMs(measureMs).failoverBeforeMs(failoverBeforeMs).failoverAfterMs(failoverAfterMs);
    }

    /**
     * The longest a driver may run before it is considered hung: every workload's windows, plus a minute per
     * workload for connecting, draining and opening 64 lock sessions.
     */
    long driverDeadlineMs() {
        return workloads.size() * (warmupMs + measureMs + 60_000) + failoverBeforeMs + failoverAfterMs;
    }

    /** Builds a {@link Plan}. */
    static final class Builder {
        private List<String> systems = DEFAULT_SYSTEMS;
        private List<String> workloads = DriverMain.WORKLOADS;
        private long warmupMs = DEFAULT_WARMUP_MS;
        private long measureMs = DEFAULT_MEASURE_MS;
        private long failoverBeforeMs = DEFAULT_FAILOVER_BEFORE_MS;
        private long failoverAfterMs = DEFAULT_FAILOVER_AFTER_MS;
        private boolean quick;

        Builder systems(List<String> v) {
            systems = v;
            return this;
        }

        Builder workloads(List<String> v) {
            workloads = v;
            return this;
        }

        Builder warmupMs(long v) {
            warmupMs = v;
            return this;
        }

        Builder measureMs(long v) {
            measureMs = v;
            return this;
        }

        Builder failoverBeforeMs(long v) {
            failoverBeforeMs = v;
            return this;
        }

        Builder failoverAfterMs(long v) {
            failoverAfterMs = v;
            return this;
        }

        /** The quick pass's windows (set explicit windows after this to override them). */
        Builder quick(boolean v) {
            quick = v;
            if (v) {
                warmupMs = QUICK_WARMUP_MS;
                measureMs = QUICK_MEASURE_MS;
                failoverBeforeMs = QUICK_FAILOVER_BEFORE_MS;
                failoverAfterMs = QUICK_FAILOVER_AFTER_MS;
            }
            return this;
        }

        Plan build() {
            return new Plan(systems, workloads, warmupMs, measureMs, failoverBeforeMs, failoverAfterMs, quick);
        }
    }
}
