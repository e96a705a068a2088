package io.rota.server.lease;

import io.rota.proto.ClockStamp;
import io.rota.raft.core.Leadership;

/**
 * The state machine's clock: "log time", in milliseconds, the same on every replica at the same log
 * position. Lease deadlines and session idleness are measured on it.
 *
 * <p>It advances only by what a leader measured on its own monotonic clock: each command carries a
 * {@link ClockStamp} (term, milliseconds that leader had led), and a stamp counts only if its term is the
 * term of the entry carrying it — only that term's leader appends such entries, so every counted stamp
 * of a term comes from one monotonic clock. Within a term, log time advances by the growth of the
 * stamps; at a new term it advances by the new leader's first stamp (the time it has led), never by the
 * gap between two leaders. Hence two consequences, both deliberate:
 * <ul>
 *   <li>log time never runs ahead of real time (up to the leaders' clock-rate drift): a duration measured
 *       on it — a lease's TTL, a session's idleness — may come out longer than real, never shorter;</li>
 *   <li>no wall clock takes part: a member whose wall clock steps an hour ahead shortens nothing
 *       (issue 11, hole 2; the old {@code now_unix_ms} did).</li>
 * </ul>
 * Deterministic and not thread-safe, like the state machine that owns it.
 *
 * <p>It lives beside the leases whose deadlines are measured on it: the state machine ({@code kv}) uses
 * the lease package, and the lease keeper's stamps would otherwise make {@code lease} depend back on
 * {@code kv}, a package cycle (design.md H2).
 */
public final class LogClock {

    private long timeMs;
    private long term;
    private long termElapsedMs;

    /** The stamp a leader puts on a command it proposes now; a non-leader's stamp counts for nothing. */
    public static ClockStamp stamp(Leadership leadership, long nowNanos) {
        if (leadership == null) {
            return ClockStamp.getDefaultInstance();
        }
        return ClockStamp.newBuilder().setTerm(leadership.term())
                .setElapsedMs(leadership.elapsedMillis(nowNanos)).build();
    }

    /**
     * Apply the stamp of a command found in an entry of {@code entryTerm}.
     *
     * @return whether the stamp counted: false when it was stamped in another term or by no leader — then log
     *         time stays where it was and may lag real time, so nothing may be timed from it (a lease's TTL)
     */
    public boolean advance(long entryTerm, ClockStamp stamp) {
        if (stamp.getTerm() != entryTerm || entryTerm == 0) {
            return false; // stamped in another term, or by no leader: its elapsed time is not this entry's
        }
        if (entryTerm != term) {
            term = entryTerm;
            termElapsedMs = 0;
        }
        long elapsed = stamp.getElapsedMs();
        if (elapsed > termElapsedMs) {
            timeMs += elapsed - termElapsedMs;
            termElapsedMs = elapsed;
        }
        return true;
    }

    /** Log time now, in milliseconds since the log began (not a date). */
    public long nowMs() {
        return timeMs;
    }

    public long term() {
        return term;
    }

    public long termElapsedMs() {
        return termElapsedMs;
    }

    public void restore(long timeMs, long term, long termElapsedMs) {
        this.timeMs = timeMs;
        this.term = term;
        this.termElapsedMs = termElapsedMs;
    }
}
