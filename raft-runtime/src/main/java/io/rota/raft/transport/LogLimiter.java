package io.rota.raft.transport;

import io.rota.raft.core.LogBudget;
import org.slf4j.Logger;

import java.util.concurrent.TimeUnit;

/**
 * Bounds log lines that a remote sender can cause at will — a malformed frame, a refused handshake, a reset
 * connection — so that a broken or hostile client or peer reconnecting in a loop cannot flood the log: at
 * most {@code perSecond} lines a second pass; the others are counted, and the next line that passes says
 * how many were suppressed. Thread-safe; share one instance per kind of event (e.g. a static field). The window
 * arithmetic is the core's {@link LogBudget}, on {@link System#nanoTime()}.
 */
public final class LogLimiter {

    private static final long WINDOW_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final Logger log;
    private final LogBudget budget;

    /**
     * @param log       where lines go
     * @param perSecond lines that may pass per second (at least 1)
     */
    public LogLimiter(Logger log, int perSecond) {
        this.budget = new LogBudget(perSecond, WINDOW_NANOS);
        this.log = log;
    }

    /** A WARN line, unless this second's budget is spent. {@code args} must not end with a Throwable. */
    public void warn(String format, Object... args) {
        long earlier = admit();
        if (earlier >= 0) {
            log.warn(LogBudget.format(format, earlier), LogBudget.arguments(args, earlier));
        }
    }

    /** An INFO line, unless this second's budget is spent (shared with {@link #warn}). */
    public void info(String format, Object... args) {
        long earlier = admit();
        if (earlier >= 0 && log.isInfoEnabled()) {
            log.info(LogBudget.format(format, earlier), LogBudget.arguments(args, earlier));
        }
    }

    /** -1 if the line is suppressed; else how many were suppressed since the last line that passed. */
    private synchronized long admit() {
        return budget.admit(System.nanoTime());
    }
}
