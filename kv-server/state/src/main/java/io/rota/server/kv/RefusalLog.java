package io.rota.server.kv;

import io.rota.raft.core.LogBudget;
import org.slf4j.Logger;

/**
 * Bounds the log lines of refused entries, which any client can cause at will: at most {@code perSecond} lines
 * a second of log time pass; the others are counted, and the next line that passes says how many were
 * suppressed. The same budget as the runtime's {@code LogLimiter} (the core's {@link LogBudget}; issue 34, design
 * HS12), but it reads no clock:
 * the caller passes the entry's log time ({@code LogClock}), so the state module stays free of clocks. Used on
 * the apply thread; synchronized all the same (a state machine may be applied from a test's thread).
 */
final class RefusalLog {

    private static final long WINDOW_MS = 1_000;

    private final Logger log;
    private final LogBudget budget;

    RefusalLog(Logger log, int perSecond) {
        this.budget = new LogBudget(perSecond, WINDOW_MS);
        this.log = log;
    }

    /** An INFO line at log time {@code nowMs}, unless that second's budget is spent. */
    void info(long nowMs, String format, Object... args) {
        long earlier = admit(nowMs);
        if (earlier >= 0 && log.isInfoEnabled()) {
            log.info(LogBudget.format(format, earlier), LogBudget.arguments(args, earlier));
        }
    }

    /** -1 if the line is suppressed; else how many were suppressed since the last line that passed. */
    private synchronized long admit(long nowMs) {
        // Log time never goes back on one member, but a restored snapshot may start it anywhere: the budget opens
        // a new window on any step back.
        return budget.admit(nowMs);
    }
}
