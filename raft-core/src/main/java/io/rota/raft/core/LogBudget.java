package io.rota.raft.core;

import java.util.Arrays;

/**
 * The window arithmetic behind rate-limited log lines, with the time passed in: at most {@code perWindow} lines
 * pass in a window; the others are counted, and the next line that passes carries how many were suppressed.
 * Pure, so the runtime's {@code LogLimiter} (wall-clock nanoseconds) and the state machine's {@code RefusalLog}
 * (log-time milliseconds, design HS12) share it. A step back in time opens a new window (a restored snapshot
 * may start log time anywhere). Not thread-safe: its owners synchronize.
 */
public final class LogBudget {

    /** How a passing line with earlier suppressed lines ends. */
    public static final String SUPPRESSED_SUFFIX = " ({} similar lines suppressed)";

    private final int perWindow;
    private final long window;
    private boolean started;
    private long windowStart;
    private int passedInWindow;
    private long suppressed;

    /**
     * @param perWindow lines that may pass per window (at least 1)
     * @param window    the window's length, in the unit of the times given to {@link #admit}
     */
    public LogBudget(int perWindow, long window) {
        if (perWindow < 1) {
            throw new IllegalArgumentException("perSecond must be at least 1, got " + perWindow);
        }
        this.perWindow = perWindow;
        this.window = window;
    }

    /** -1 if a line at time {@code now} is suppressed; else how many were suppressed since the last that passed. */
    public long admit(long now) {
        if (!started || now - windowStart >= window || now < windowStart) {
            started = true;
            windowStart = now;
            passedInWindow = 0;
        }
        if (passedInWindow >= perWindow) {
            suppressed++;
            return -1;
        }
        passedInWindow++;
        long earlier = suppressed;
        suppressed = 0;
        return earlier;
    }

    /** The format of a passing line: {@code format}, plus {@link #SUPPRESSED_SUFFIX} when lines were suppressed. */
    public static String format(String format, long suppressed) {
        return suppressed == 0 ? format : format + SUPPRESSED_SUFFIX;
    }

    /** The arguments of a passing line: {@code args}, plus the count when lines were suppressed. */
    public static Object[] arguments(Object[] args, long suppressed) {
        if (suppressed == 0) {
            return args;
        }
        Object[] out = Arrays.copyOf(args, args.length + 1);
        out[args.length] = suppressed;
        return out;
    }
}
