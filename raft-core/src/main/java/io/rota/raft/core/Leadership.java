package io.rota.raft.core;

/**
 * This member leads in {@code term}, and has since {@code sinceNanos} on its monotonic clock
 * (the runtime's {@code io.rota.raft.node.Clock}).
 *
 * <p>Why it exists: the coordination layer measures durations (lease TTLs, session idleness) in "log
 * time", which advances only by what one leader measured on its own monotonic clock since it began to
 * lead. A command stamped with {@link #elapsedMillis} counts only if it lands in a log entry of the same
 * term — and only this term's leader appends entries of this term — so no member's wall clock, and no
 * gap between two leaders, ever shortens a duration. {@code sinceNanos} is read when the driver sees the
 * core lead (the first Ready after it won), so elapsed time is never over-counted.
 */
public record Leadership(long term, long sinceNanos) {

    /** Milliseconds this member has led in {@link #term}, at monotonic time {@code nowNanos}. */
    public long elapsedMillis(long nowNanos) {
        return Math.max(0, (nowNanos - sinceNanos) / 1_000_000);
    }
}
