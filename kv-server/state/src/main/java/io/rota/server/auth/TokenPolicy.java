package io.rota.server.auth;

import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * What a member's tokens are bound to and how long they live (issue 33): the cluster id their signature
 * covers, their lifetime ({@code --auth-token-ttl}, 5 minutes by default as etcd's), and the wall clock that
 * dates them. Member-local, never replicated: apply never reads it.
 *
 * <p>Expiry is judged by the wall clock of the member checking the token, as etcd's JWT {@code exp} is: clocks
 * out of step by some seconds shorten or lengthen a token's life by as much (the SDK logs in again before
 * expiry, and once more if a token is refused). A token dated further ahead than one lifetime plus
 * {@link #MAX_SKEW_MS} — minted by a member whose clock runs far ahead — is refused, so no clock error makes a
 * token live for ever.
 *
 * @param clusterId the cluster's id; tokens of another cluster (or of a cluster restored from a backup) fail
 * @param ttlMs     how long a token is valid after it is issued
 * @param wallMs    the wall clock, Unix ms
 */
public record TokenPolicy(String clusterId, long ttlMs, LongSupplier wallMs) {

    /** etcd's default --auth-token-ttl: 300 seconds. */
    public static final Duration DEFAULT_TTL = Duration.ofMinutes(5);
    /** The longest --auth-token-ttl: a year. */
    public static final Duration MAX_TTL = Duration.ofDays(365);
    /** How far ahead of this member's clock a token's expiry may lie beyond one lifetime. */
    static final long MAX_SKEW_MS = 60_000;

    public TokenPolicy {
        if (ttlMs <= 0) {
            throw new IllegalArgumentException("a token lifetime must be positive: " + ttlMs + " ms");
        }
    }

    public TokenPolicy withClusterId(String id) {
        return new TokenPolicy(id, ttlMs, wallMs);
    }

    /** Whether a token valid until {@code expiresAtMs} is still valid now, and not dated implausibly far ahead. */
    boolean valid(long expiresAtMs) {
        long now = wallMs.getAsLong();
        return now <= expiresAtMs && expiresAtMs - now <= ttlMs + MAX_SKEW_MS;
    }
}
