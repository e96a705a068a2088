package io.rota.raft.node;

/**
 * A member's time source (MicroRaft's injected {@code Clock}). Everything above the pure core that decides
 * in time — the driver's deadlines, the lease keeper, the request router — reads time only through this
 * port, so the deterministic simulator can give each member a clock of its own that drifts and jumps.
 *
 * <p>The two clocks have different contracts, and only the first may decide anything that another member
 * or a client relies on:
 * <ul>
 *   <li>{@link #nanoTime()} is monotonic (never goes back; its rate may drift from true time by a small
 *       bound) — deadlines, timers, lease durations;</li>
 *   <li>{@link #wallMillis()} is the wall clock (may be stepped forward or back at any moment, e.g. by
 *       NTP) — only for what people read: log lines, timestamps shown in status pages.</li>
 * </ul>
 */
public interface Clock {

    /** Monotonic nanoseconds from an arbitrary origin; differences are durations. */
    long nanoTime();

    /** Wall-clock milliseconds since the Unix epoch; never a basis for a duration. */
    long wallMillis();

    /** The JVM's clocks. */
    Clock SYSTEM = new Clock() {
        @Override
        public long nanoTime() {
            return System.nanoTime();
        }

        @Override
        public long wallMillis() {
            return System.currentTimeMillis();
        }

        @Override
        public String toString() {
            return "system clock";
        }
    };
}
