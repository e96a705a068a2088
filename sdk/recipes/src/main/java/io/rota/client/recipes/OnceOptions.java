package io.rota.client.recipes;

import java.time.Duration;
import java.util.Objects;

/**
 * How once-records behave; start from {@link #defaults()}.
 *
 * @param prefix      where records live: {@code <prefix>/<key>} (default {@code rota/once})
 * @param claimTtl    the TTL of a claimer's lease: a dead claimer's record is free again this long (plus the
 *                    cluster's failover allowance) after it died. Default 10 s
 * @param retention   how long DONE and FAILED records are kept (they vanish within retention + retention/24, at
 *                    least 1 s, counted by the cluster's lease clock, not the client's wall clock).
 *                    Zero: kept forever. Default 7 days
 * @param retryFailed whether a FAILED record may be claimed again (default false: a failure is recorded and
 *                    left for a human or a later, explicit retry, because a half-done side effect may not be
 *                    safe to repeat)
 * @param owner       who claims, stored in the record (default {@code pid-<pid>})
 */
public record OnceOptions(String prefix, Duration claimTtl, Duration retention, boolean retryFailed, String owner) {

    /**
     * Checks the options.
     *
     * @param prefix see the record component
     * @param claimTtl see the record component
     * @param retention see the record component
     * @param retryFailed see the record component
     * @param owner see the record component
     */
    public OnceOptions {
        Objects.requireNonNull(prefix, "prefix");
        Objects.requireNonNull(owner, "owner");
        if (prefix.isEmpty() || prefix.endsWith("/")) {
            throw new IllegalArgumentException("prefix must be non-empty and not end with '/': " + prefix);
        }
        if (claimTtl.toMillis() < 1_000 || retention.isNegative()) {
            throw new IllegalArgumentException("claimTtl must be at least 1 s and retention not negative");
        }
    }

    /**
     * The defaults: prefix {@code rota/once}, claim TTL 10 s, retention 7 days, failures not retried.
     *
     * @return the default options
     */
    public static OnceOptions defaults() {
        return new OnceOptions("rota/once", Duration.ofSeconds(10), Duration.ofDays(7), false,
                "pid-" + ProcessHandle.current().pid());
    }

    /**
     * The same options with another prefix.
     *
     * @param prefix the prefix (no trailing '/')
     * @return new options
     */
    public OnceOptions withPrefix(String prefix) {
        return new OnceOptions(prefix, claimTtl, retention, retryFailed, owner);
    }

    /**
     * The same options with another claim TTL.
     *
     * @param claimTtl the TTL
     * @return new options
     */
    public OnceOptions withClaimTtl(Duration claimTtl) {
        return new OnceOptions(prefix, claimTtl, retention, retryFailed, owner);
    }

    /**
     * The same options with another retention.
     *
     * @param retention how long completed records are kept (zero: forever)
     * @return new options
     */
    public OnceOptions withRetention(Duration retention) {
        return new OnceOptions(prefix, claimTtl, retention, retryFailed, owner);
    }

    /**
     * The same options with failures retried or not.
     *
     * @param retryFailed whether a FAILED record may be claimed again
     * @return new options
     */
    public OnceOptions withRetryFailed(boolean retryFailed) {
        return new OnceOptions(prefix, claimTtl, retention, retryFailed, owner);
    }

    /**
     * The same options with another owner name.
     *
     * @param owner who claims
     * @return new options
     */
    public OnceOptions withOwner(String owner) {
        return new OnceOptions(prefix, claimTtl, retention, retryFailed, owner);
    }
}
