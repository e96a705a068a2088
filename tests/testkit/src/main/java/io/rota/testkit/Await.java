package io.rota.testkit;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/** Polls a condition until it holds or a deadline passes: tests wait for the world, never sleep blindly. */
public final class Await {

    private static final long POLL_INTERVAL_NANOS = 1_000_000;

    private Await() {
    }

    /**
     * Returns once {@code condition} holds, polling it every millisecond.
     *
     * @param timeout     how long to wait at most
     * @param condition   what to wait for; polled on the calling thread
     * @param description what is awaited, for the failure message
     * @throws AssertionError if the deadline passes (or the thread is interrupted) first
     */
    public static void until(Duration timeout, BooleanSupplier condition, String description) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out after " + timeout.toMillis() + " ms waiting for: " + description);
            }
            LockSupport.parkNanos(POLL_INTERVAL_NANOS);
            if (Thread.interrupted()) {
                throw new AssertionError("interrupted waiting for: " + description);
            }
        }
    }
}
