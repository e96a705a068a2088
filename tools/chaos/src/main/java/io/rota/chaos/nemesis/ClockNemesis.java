package io.rota.chaos.nemesis;

import io.rota.testkit.ProcessCluster;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntSupplier;

/**
 * Clock faults through the members' fault-injection endpoint ({@link ClockControl}). A fault picks one
 * member (half the time the leader), sometimes two or all three, and gives each its own wall-clock offset —
 * forward or back, log-uniform from {@link #MIN_JUMP_MS} to {@link #MAX_JUMP_MS} (a tenth of a second to an
 * hour) — and its own monotonic-rate drift, uniform within ±{@link #MAX_DRIFT_PPM} ppm. Setting an offset is
 * a jump of the member's wall clock; heal sets every touched member back to 0 (a jump the other way).
 *
 * <p>What it tests: Raft's safety never reads a clock, but leases, session expiry and whatever the server
 * stamps with wall time do; a wall jump must not expire a lease before its holder's safe-until, and a
 * monotonic clock running fast by the drift the SDK's margin allows must not either.
 */
public final class ClockNemesis implements Nemesis {

    /** The smallest wall-clock jump, milliseconds. */
    static final long MIN_JUMP_MS = 100;
    /** The largest wall-clock jump: an hour. */
    static final long MAX_JUMP_MS = TimeUnit.HOURS.toMillis(1);
    /** The largest monotonic-rate drift, parts per million (a good quartz crystal is within ±50). */
    static final long MAX_DRIFT_PPM = 200;
    /** How long heal keeps trying a member that does not answer (it may be busy). */
    private static final long HEAL_RETRY_NANOS = TimeUnit.SECONDS.toNanos(20);

    private final ClockControl clocks;
    private final IntSupplier leader;
    private final TreeSet<Integer> touched = new TreeSet<>();

    /**
     * A clock nemesis.
     *
     * @param clocks the members' clock controls
     * @param leader the current leader's index, or -1 if none is known
     */
    public ClockNemesis(ClockControl clocks, IntSupplier leader) {
        this.clocks = clocks;
        this.leader = leader;
    }

    @Override
    public String name() {
        return "clock";
    }

    @Override
    public String fault(Random random) {
        int n = clocks.size();
        int lead = leader.getAsInt();
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            order.add(i);
        }
        Collections.shuffle(order, random);
        if (lead >= 0 && random.nextBoolean()) {
            order.remove(Integer.valueOf(lead));
            order.add(0, lead);
        }
        int dice = random.nextInt(10);
        int count = dice < 6 ? 1 : dice < 9 ? Math.min(2, n) : n;
        List<String> done = new ArrayList<>();
        for (int k = 0; k < count; k++) {
            int member = order.get(k);
            ClockControl.Setting s = draw(random);
            touched.add(member);
            clocks.set(member, s);
            done.add(String.format(Locale.ROOT, "%s wall %s rate %+d ppm", Faults.label(member, lead),
                    offset(s.wallOffsetMs()), s.monoRatePpm()));
        }
        return "clock " + String.join("; ", done);
    }

    /** A random setting: a wall offset of either sign, log-uniform in [MIN_JUMP_MS, MAX_JUMP_MS], and a drift. */
    static ClockControl.Setting draw(Random random) {
        double logMin = Math.log(MIN_JUMP_MS);
        double logMax = Math.log(MAX_JUMP_MS);
        long magnitude = Math.round(Math.exp(logMin + random.nextDouble() * (logMax - logMin)));
        long wall = random.nextBoolean() ? magnitude : -magnitude;
        long ppm = random.nextInt((int) (2 * MAX_DRIFT_PPM + 1)) - MAX_DRIFT_PPM;
        return new ClockControl.Setting(wall, ppm);
    }

    /** Sets every member this nemesis touched back to the real clock. */
    @Override
    public String heal() {
        if (touched.isEmpty()) {
            return "clocks already true";
        }
        List<String> names = new ArrayList<>();
        for (int member : touched) {
            reset(member);
            names.add(ProcessCluster.name(member));
        }
        touched.clear();
        return "clocks reset on " + String.join(", ", names);
    }

    private void reset(int member) {
        long deadline = System.nanoTime() + HEAL_RETRY_NANOS;
        while (true) {
            try {
                clocks.set(member, ClockControl.Setting.NONE);
                return;
            } catch (IllegalStateException e) {
                if (System.nanoTime() - deadline > 0) {
                    throw e;
                }
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(250));
            }
        }
    }

    /** {@code +1834 ms}, {@code -42.5 s}, {@code +58.3 min}. */
    static String offset(long ms) {
        long abs = Math.abs(ms);
        String sign = ms < 0 ? "-" : "+";
        if (abs < 10_000) {
            return sign + abs + " ms";
        }
        if (abs < 600_000) {
            return String.format(Locale.ROOT, "%s%.1f s", sign, abs / 1e3);
        }
        return String.format(Locale.ROOT, "%s%.1f min", sign, abs / 60e3);
    }
}
