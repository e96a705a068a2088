package io.rota.server.kv;

/**
 * Per-user bounds on leases and sessions (issue 33): what one user may hold of the cluster-wide tables
 * ({@link Limits#maxLeases()}, {@link Limits#maxSessions()}), so one user cannot exhaust the leases or evict every
 * other user's sessions. They are the leader's flags, {@code --max-leases-per-user} and
 * {@code --max-sessions-per-user}: the proposing leader stamps them into each command, and apply reads them from
 * there, so every member applies the same bound (as the leader raises a lease's TTL to its minimum before
 * proposing). They bind users without the root role while auth is enabled (docs/design.md SD32).
 *
 * @param maxLeasesPerUser   live leases one user may have granted; past it a grant is refused (UNAVAILABLE)
 * @param maxSessionsPerUser live sessions one user may hold; past it its own least recently active one is evicted
 */
public record UserQuotas(int maxLeasesPerUser, int maxSessionsPerUser) {

    /** 10,000 leases per user: a tenth of the cluster's {@link Limits#DEFAULT_MAX_LEASES}. */
    public static final int DEFAULT_MAX_LEASES_PER_USER = 10_000;
    /** 1,000 sessions per user: a tenth of the cluster's {@link Limits#DEFAULT_MAX_SESSIONS}. */
    public static final int DEFAULT_MAX_SESSIONS_PER_USER = 1_000;

    /** Checks both; throws {@link IllegalArgumentException} naming the flag. */
    public UserQuotas {
        if (maxLeasesPerUser < 1) {
            throw new IllegalArgumentException("--max-leases-per-user must be at least 1, got " + maxLeasesPerUser);
        }
        if (maxSessionsPerUser < 1) {
            throw new IllegalArgumentException("--max-sessions-per-user must be at least 1, got " + maxSessionsPerUser);
        }
    }

    /** The defaults. */
    public static UserQuotas defaults() {
        return new UserQuotas(DEFAULT_MAX_LEASES_PER_USER, DEFAULT_MAX_SESSIONS_PER_USER);
    }
}
