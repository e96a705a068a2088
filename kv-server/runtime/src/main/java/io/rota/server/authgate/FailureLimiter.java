package io.rota.server.authgate;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Slows a password guesser down: after {@link #FREE_FAILURES} failed logins in a row for one key (a user
 * name, a source address: see AuthGate), each further attempt must wait twice as long as the one before — 500 ms, 1 s, 2 s,
 * ... up to {@link #MAX_DELAY_MS} — and an attempt that comes sooner is refused without checking the
 * password (AUTH_FAILED with retry_after_ms). A success clears the key. Bounded: the least recently failed
 * keys are forgotten beyond {@code maxKeys}. Thread-safe; time comes from the caller.
 */
public final class FailureLimiter {

    static final int FREE_FAILURES = 3;
    static final long FIRST_DELAY_MS = 500;
    static final long MAX_DELAY_MS = 30_000;

    private record Failures(int count, long notBeforeMs) {
    }

    private final Map<String, Failures> failures;
    private final int freeFailures;

    public FailureLimiter(int maxKeys) {
        this(maxKeys, FREE_FAILURES);
    }

    /** @param freeFailures failures in a row that cost no wait (a source address shared by many clients gets more) */
    public FailureLimiter(int maxKeys, int freeFailures) {
        this.freeFailures = freeFailures;
        this.failures = new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Failures> eldest) {
                return size() > maxKeys;
            }
        };
    }

    /** How long {@code key} must still wait before its next attempt is checked (0: go ahead). */
    public synchronized long waitMs(String key, long nowMs) {
        Failures f = failures.get(key);
        return f == null ? 0 : Math.max(0, f.notBeforeMs() - nowMs);
    }

    /** Record a failed attempt of {@code key}; returns how long it must now wait (0 while failures are free). */
    public synchronized long failed(String key, long nowMs) {
        Failures f = failures.get(key);
        int count = f == null ? 1 : f.count() + 1;
        long delay = count <= freeFailures ? 0
                : Math.min(MAX_DELAY_MS, FIRST_DELAY_MS << Math.min(16, count - freeFailures - 1));
        failures.put(key, new Failures(count, nowMs + delay));
        return delay;
    }

    public synchronized void succeeded(String key) {
        failures.remove(key);
    }
}
