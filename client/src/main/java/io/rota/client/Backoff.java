package io.rota.client;

/**
 * The SDK's one retry backoff: 20 ms after the first failure, doubling with each consecutive failure, at
 * most 1 s. Calls (with jitter on top), watch reconnects and the recipes' resumptions all use it.
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
}
