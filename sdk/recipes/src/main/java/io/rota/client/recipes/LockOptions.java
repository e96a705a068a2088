package io.rota.client.recipes;

import java.time.Duration;
import java.util.Objects;

/**
 * How a {@link Lock} behaves. Start from {@link #defaults()} and change what you need:
 * {@code LockOptions.defaults().withTtl(Duration.ofSeconds(5)).withLockDelay(Duration.ofSeconds(2))}.
 *
 * @param prefix       where the lock's keys live: contenders under {@code <prefix>/<name>/}, the last holder's
 *                     record at {@code <prefix>.holder/<name>} (default {@code rota/lock})
 * @param ttl          the TTL of the client's session lease the contenders of this lock use (one session per
 *                     client and TTL, shared with its other locks, elections and jobs of that TTL): how long
 *                     a dead holder blocks the lock at most (plus the cluster's failover allowance). Default 10 s
 * @param clockDrift   a bound on how far this machine's clock rate may drift from the cluster leader's over one
 *                     TTL (default 100 ms); twice this is part of the default safety margin
 * @param safetyMargin how long before the earliest possible lease expiry {@linkplain LockHandle#safeUntilNanos()
 *                     safe-until} ends; null for the default, 10% of the TTL + 2 × clockDrift
 * @param lockDelay    after a holder's lease EXPIRED (not after a clean release) the next holder waits this
 *                     long before it returns from acquire, so the old holder's in-flight writes drain (Consul's
 *                     lock-delay). Default 0: fencing tokens and safe-until are the primary protection
 */
public record LockOptions(String prefix, Duration ttl, Duration clockDrift, Duration safetyMargin,
                          Duration lockDelay) {

    /**
     * Checks the options.
     *
     * @param prefix see the record component
     * @param ttl see the record component
     * @param clockDrift see the record component
     * @param safetyMargin see the record component
     * @param lockDelay see the record component
     */
    public LockOptions {
        Objects.requireNonNull(prefix, "prefix");
        if (prefix.isEmpty() || prefix.endsWith("/")) {
            throw new IllegalArgumentException("prefix must be non-empty and not end with '/': " + prefix);
        }
        if (ttl.toMillis() < 1_000) {
            throw new IllegalArgumentException("ttl must be at least 1 s (leases have whole seconds): " + ttl);
        }
        if (clockDrift.isNegative() || lockDelay.isNegative()
                || (safetyMargin != null && safetyMargin.isNegative())) {
            throw new IllegalArgumentException("clockDrift, safetyMargin and lockDelay must not be negative");
        }
    }

    /**
     * The defaults: prefix {@code rota/lock}, TTL 10 s, clock drift 100 ms, derived margin, no lock-delay.
     *
     * @return the default options
     */
    public static LockOptions defaults() {
        return new LockOptions("rota/lock", Duration.ofSeconds(10), Duration.ofMillis(100), null, Duration.ZERO);
    }

    /**
     * The same options with another key prefix.
     *
     * @param prefix the prefix (no trailing '/')
     * @return new options
     */
    public LockOptions withPrefix(String prefix) {
        return new LockOptions(prefix, ttl, clockDrift, safetyMargin, lockDelay);
    }

    /**
     * The same options with another lease TTL (whole seconds; the cluster may raise it to its minimum).
     *
     * @param ttl the TTL, at least 1 s
     * @return new options
     */
    public LockOptions withTtl(Duration ttl) {
        return new LockOptions(prefix, ttl, clockDrift, safetyMargin, lockDelay);
    }

    /**
     * The same options with another clock-drift bound.
     *
     * @param clockDrift the bound
     * @return new options
     */
    public LockOptions withClockDrift(Duration clockDrift) {
        return new LockOptions(prefix, ttl, clockDrift, safetyMargin, lockDelay);
    }

    /**
     * The same options with an explicit safety margin.
     *
     * @param safetyMargin the margin (null: the default)
     * @return new options
     */
    public LockOptions withSafetyMargin(Duration safetyMargin) {
        return new LockOptions(prefix, ttl, clockDrift, safetyMargin, lockDelay);
    }

    /**
     * The same options with another lock-delay.
     *
     * @param lockDelay the delay after an expired holder (zero: none)
     * @return new options
     */
    public LockOptions withLockDelay(Duration lockDelay) {
        return new LockOptions(prefix, ttl, clockDrift, safetyMargin, lockDelay);
    }

    /**
     * The margin in effect for a lease of {@code grantedTtl}: the explicit one, or 10% of it + 2 × clockDrift.
     *
     * @param grantedTtl the TTL the cluster granted
     * @return the margin
     */
    public Duration effectiveMargin(Duration grantedTtl) {
        return safetyMargin != null ? safetyMargin : grantedTtl.dividedBy(10).plus(clockDrift.multipliedBy(2));
    }
}
