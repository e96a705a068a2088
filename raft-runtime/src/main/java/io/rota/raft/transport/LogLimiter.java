package io.rota.raft.transport;

import org.slf4j.Logger;

import java.util.Arrays;
import java.util.concurrent.TimeUnit;

/**
 * Bounds log lines that a remote sender can cause at will — a malformed frame, a refused handshake, a reset
 * connection — so that a broken or hostile client or peer reconnecting in a loop cannot flood the log: at
 * most {@code perSecond} lines a second pass; the others are counted, and the next line that passes says
 * how many were suppressed. Thread-safe; share one instance per kind of event (e.g. a static field).
 */
public final class LogLimiter {

    private static final long WINDOW_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final Logger log;
    private final int perSecond;
    private long windowStart = System.nanoTime();
    private int passedInWindow;
    private long suppressed;

    /**
     * @param log       where lines go
     * @param perSecond lines that may pass per second (at least 1)
     */
    public LogLimiter(Logger log, int perSecond) {
        if (perSecond < 1) {
            throw new IllegalArgumentException("perSecond must be at least 1, got " + perSecond);
        }
        this.log = log;
        this.perSecond = perSecond;
    }

    /** A WARN line, unless this second's budget is spent. {@code args} must not end with a Throwable. */
    public void warn(String format, Object... args) {
        long earlier = admit();
        if (earlier >= 0) {
            log.warn(earlier == 0 ? format : format + " ({} similar lines suppressed)", withCount(args, earlier));
        }
    }

    /** An INFO line, unless this second's budget is spent (shared with {@link #warn}). */
    public void info(String format, Object... args) {
        long earlier = admit();
        if (earlier >= 0 && log.isInfoEnabled()) {
            log.info(earlier == 0 ? format : format + " ({} similar lines suppressed)", withCount(args, earlier));
        }
    }

    /** -1 if the line is suppressed; else how many were suppressed since the last line that passed. */
    private synchronized long admit() {
        long now = System.nanoTime();
        if (now - windowStart >= WINDOW_NANOS) {
            windowStart = now;
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
