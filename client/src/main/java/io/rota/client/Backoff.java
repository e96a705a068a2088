package io.rota.client;

import java.util.random.RandomGenerator;

/**
 * The SDK's one retry backoff: 20 ms after the first failure, doubling with each consecutive failure, at
 * most 1 s. Calls (with jitter on top), watch reconnects and the recipes' resumptions all use it, and a
 * server's retry-after ({@link RotaException#retryAfterMs()}) is a floor under it.
 */
public final class Backoff {

    /** The delay after the first failure. */
    public static final long MIN_MS = 20;
    /** The longest delay. */
    public static final long MAX_MS = 1_000;

    private Backoff() {
    }

    /**
     * The delay before the next attempt.
     *
     * @param failures consecutive failures so far (at least 1)
     * @return the delay in milliseconds, between {@link #MIN_MS} and {@link #MAX_MS}
     */
    public static long delayMs(int failures) {
        return Math.min(MAX_MS, MIN_MS << Math.min(10, Math.max(0, failures - 1)));
    }

    /**
     * The delay before a call's next attempt: {@link #delayMs} with "equal jitter" (half fixed, half random,
     * so clients that failed together do not retry together), and never less than the server's retry-after.
     *
     * @param failures     consecutive failures so far (at least 1)
     * @param retryAfterMs the wait the server asked for (0: none)
     * @param random       the jitter's source
     * @return the delay in milliseconds
     */
    static long jitteredMs(int failures, long retryAfterMs, RandomGenerator random) {
        long backoff = delayMs(failures);
        return Math.max(retryAfterMs, backoff / 2 + random.nextLong(backoff / 2 + 1));
    }

    /**
     * The delay before a watch reopens: {@link #delayMs}, never less than the server's retry-after.
     *
     * @param failures     consecutive failures so far (at least 1)
     * @param retryAfterMs the wait the server asked for (0: none)
     * @return the delay in milliseconds
     */
    static long delayMs(int failures, long retryAfterMs) {
        return Math.max(retryAfterMs, delayMs(failures));
    }
}
