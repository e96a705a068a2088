package io.rota.server.kv;

/**
 * Every bound of the coordination state machine. All of them are part of the replicated semantics: every
 * replica must use the same values, or the same command could be accepted on one and refused on another.
 *
 * @param maxKeyBytes                   longest key
 * @param maxValueBytes                 longest value
 * @param maxTxnOps                     most compares + ops in one transaction (etcd's default is 128)
 * @param maxKeys                       most live keys; a put creating one more fails with UNAVAILABLE
 * @param maxHistoryEvents              events kept for watch resume and past-revision reads
 * @param maxLeases                     most live leases
 * @param maxLeaseTtlSeconds            longer TTLs are refused
 * @param maxSessions                   most live sessions; registering one more evicts the least recently active
 *                                      (Raft thesis §6.3)
 * @param sessionTtlMs                  a session without a request for this long (log time) expires
 * @param rememberedResponsesPerSession responses kept per session for retries (the window of pipelined requests)
 */
public record Limits(int maxKeyBytes, int maxValueBytes, int maxTxnOps, int maxKeys, int maxHistoryEvents,
                     int maxLeases, long maxLeaseTtlSeconds, int maxSessions, long sessionTtlMs,
                     int rememberedResponsesPerSession) {

    public Limits {
        if (maxKeyBytes < 1 || maxValueBytes < 0 || maxTxnOps < 1 || maxKeys < 1 || maxHistoryEvents < 1
                || maxLeases < 1 || maxLeaseTtlSeconds < 1 || maxSessions < 1
                || sessionTtlMs < 1 || rememberedResponsesPerSession < 1) {
            throw new IllegalArgumentException("invalid limits " + this);
        }
    }

    /**
     * Defaults sized for a teaching cluster. The minimum lease TTL is not here: a member's own flags must
     * not decide replicated state, so the leader raises a grant's TTL before proposing it (RequestRouter).
     */
    public static Limits defaults() {
        return new Limits(8 * 1024, 1024 * 1024, 128, 1_000_000, 10_000, 100_000,
                365L * 24 * 3600, 10_000, 10 * 60_000L, 256);
    }
}
