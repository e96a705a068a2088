package io.rota.server.kv;

import org.slf4j.Logger;

import java.util.Arrays;

/**
 * Bounds the log lines of refused entries, which any client can cause at will: at most {@code perSecond} lines
 * a second of log time pass; the others are counted, and the next line that passes says how many were
 * suppressed. The same budget as the runtime's {@code LogLimiter} (issue 34, design HS12), but it reads no clock:
 * the caller passes the entry's log time ({@code LogClock}), so the state module stays free of clocks. Used on
 * the apply thread; synchronized all the same (a state machine may be applied from a test's thread).
 */
final class RefusalLog {

    private static final long WINDOW_MS = 1_000;

    private final Logger log;
    private final int perSecond;
    private long windowStart = Long.MIN_VALUE;
    private int passedInWindow;
    private long suppressed;

    RefusalLog(Logger log, int perSecond) {
        if (perSecond < 1) {
            throw new IllegalArgumentException("perSecond must be at least 1, got " + perSecond);
        }
        this.log = log;
        this.perSecond = perSecond;
    }

    /** An INFO line at log time {@code nowMs}, unless that second's budget is spent. */
    void info(long nowMs, String format, Object... args) {
        long earlier = admit(nowMs);
        if (earlier >= 0 && log.isInfoEnabled()) {
            log.info(earlier == 0 ? format : format + " ({} similar lines suppressed)", withCount(args, earlier));
        }
    }

    /** -1 if the line is suppressed; else how many were suppressed since the last line that passed. */
    private synchronized long admit(long nowMs) {
        // Log time never goes back on one member, but a restored snapshot may start it anywhere: any step back
        // opens a new window too.
        if (windowStart == Long.MIN_VALUE || nowMs - windowStart >= WINDOW_MS || nowMs < windowStart) {
            windowStart = nowMs;
            passedInWindow = 0;
        }
        if (passedInWindow >= perSecond) {
            suppressed++;
            return -1;
        }
        passedInWindow++;
        long earlier = suppressed;
        suppressed = 0;
        return earlier;
    }

    private static Object[] withCount(Object[] args, long count) {
        if (count == 0) {
            return args;
        }
        Object[] out = Arrays.copyOf(args, args.length + 1);
        out[args.length] = count;
        return out;
    }
}
