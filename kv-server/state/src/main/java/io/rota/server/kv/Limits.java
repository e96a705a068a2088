package io.rota.server.kv;

/**
 * Every bound of the coordination state machine. All of them are part of the replicated semantics: every
 * replica must use the same values, or the same command could be accepted on one and refused on another.
 * Build one with {@link #builder}, which starts from the {@code DEFAULT_} constants (sized for a teaching
 * cluster), or derive one with {@link #toBuilder}. Every construction is validated; an error names the field.
 *
 * <p>The minimum lease TTL is not here: a member's own flags must not decide replicated state, so the leader
 * raises a grant's TTL before proposing it (RequestRouter).
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
 * @param rememberedBytesPerSession     serialized bytes of responses kept per session; over it, the oldest go
 * @param rememberedBytesTotal          serialized bytes of responses kept by all sessions; over it, the least
 *                                      recently active sessions forget theirs (issue 31)
 */
public record Limits(int maxKeyBytes, int maxValueBytes, int maxTxnOps, int maxKeys, int maxHistoryEvents,
                     int maxLeases, long maxLeaseTtlSeconds, int maxSessions, long sessionTtlMs,
                     int rememberedResponsesPerSession, long rememberedBytesPerSession, long rememberedBytesTotal) {

    /** 8 KiB: keys are names, not data, and every key sits in the in-memory index. */
    public static final int DEFAULT_MAX_KEY_BYTES = 8 * 1024;
    /** 1 MiB: coordination data is small; the 1.5 MiB request limit leaves room for the key and envelope. */
    public static final int DEFAULT_MAX_VALUE_BYTES = 1024 * 1024;
    /** 128 compares + ops per transaction: etcd's --max-txn-ops default. */
    public static final int DEFAULT_MAX_TXN_OPS = 128;
    /** A million live keys: bounds the memory (and the snapshot) of the in-memory store. */
    public static final int DEFAULT_MAX_KEYS = 1_000_000;
    /** 10,000 events of history: a watcher that reconnects within that many writes resumes without a gap. */
    public static final int DEFAULT_MAX_HISTORY_EVENTS = 10_000;
    /** 100,000 live leases: one per lock or session of a large fleet, still a bounded expiry scan. */
    public static final int DEFAULT_MAX_LEASES = 100_000;
    /** One year: a longer lease is a mistake, not a lease. */
    public static final long DEFAULT_MAX_LEASE_TTL_SECONDS = 365L * 24 * 3600;
    /** 10,000 live client sessions; one more evicts the least recently active (thesis §6.3). */
    public static final int DEFAULT_MAX_SESSIONS = 10_000;
    /** 10 minutes of log time without a request and a session is gone; its remembered responses are freed. */
    public static final long DEFAULT_SESSION_TTL_MS = 10 * 60_000L;
    /** 256 responses per session: a client's window of pipelined writes, announced to it (design C3). */
    public static final int DEFAULT_REMEMBERED_RESPONSES_PER_SESSION = 256;
    /** 1 MiB of remembered responses per session: a txn's range results are answers too (issue 31). */
    public static final long DEFAULT_REMEMBERED_BYTES_PER_SESSION = 1024 * 1024;
    /** 64 MiB of remembered responses in all: what sessions may hold of every member's heap and snapshot. */
    public static final long DEFAULT_REMEMBERED_BYTES_TOTAL = 64L * 1024 * 1024;
    /**
     * 32 levels of nested txns (the outer txn is level 1), not configurable: a safety bound, not a policy
     * (design Y40). etcd has none but its request size; Rota's is set by protobuf-java, which refuses a message
     * nested more than 100 deep: each level costs two (RequestOp, TxnRequest), and a remembered answer sits
     * three deeper in a snapshot (StoreSnapshot, SessionImage, CommandResult), so 32 levels keep every
     * command, answer and snapshot readable on every replica, and the apply thread's recursion shallow.
     */
    public static final int MAX_TXN_DEPTH = 32;

    /**
     * Checks every field; throws {@link IllegalArgumentException} naming the field. The bounds are
     * independent of each other, so there is no cross-field rule; how they meet the request size is the
     * server's business (ServerConfig).
     */
    public Limits {
        require(maxKeyBytes >= 1, "maxKeyBytes must be at least 1, got " + maxKeyBytes);
        require(maxValueBytes >= 0, "maxValueBytes must not be negative, got " + maxValueBytes);
        require(maxTxnOps >= 1, "maxTxnOps must be at least 1, got " + maxTxnOps);
        require(maxKeys >= 1, "maxKeys must be at least 1, got " + maxKeys);
        require(maxHistoryEvents >= 1, "maxHistoryEvents must be at least 1, got " + maxHistoryEvents);
        require(maxLeases >= 1, "maxLeases must be at least 1, got " + maxLeases);
        require(maxLeaseTtlSeconds >= 1, "maxLeaseTtlSeconds must be at least 1, got " + maxLeaseTtlSeconds);
        require(maxSessions >= 1, "maxSessions must be at least 1, got " + maxSessions);
        require(sessionTtlMs >= 1, "sessionTtlMs must be at least 1, got " + sessionTtlMs);
        require(rememberedResponsesPerSession >= 1, "rememberedResponsesPerSession must be at least 1, got "
                + rememberedResponsesPerSession);
        require(rememberedBytesPerSession >= 1, "rememberedBytesPerSession must be at least 1, got "
                + rememberedBytesPerSession);
        require(rememberedBytesTotal >= 1, "rememberedBytesTotal must be at least 1, got " + rememberedBytesTotal);
    }

    /** The defaults: {@code builder().build()}. */
    public static Limits defaults() {
        return builder().build();
    }

    /** A builder with every field at its default. */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder holding these limits, to change some of them. */
    public Builder toBuilder() {
        return new Builder().maxKeyBytes(maxKeyBytes).maxValueBytes(maxValueBytes).maxTxnOps(maxTxnOps)
                .maxKeys(maxKeys).maxHistoryEvents(maxHistoryEvents).maxLeases(maxLeases)
                .maxLeaseTtlSeconds(maxLeaseTtlSeconds).maxSessions(maxSessions).sessionTtlMs(sessionTtlMs)
                .rememberedResponsesPerSession(rememberedResponsesPerSession)
                .rememberedBytesPerSession(rememberedBytesPerSession).rememberedBytesTotal(rememberedBytesTotal);
    }

    /**
     * The message of a refusal for size: what was refused, its size, the limit, and why the limit is no flag.
     *
     * @param what  "a key", "a value"
     * @param bytes its size
     * @param name  the limit's name: "key", "value"
     * @param limit the limit in bytes
     */
    static String over(String what, long bytes, String name, int limit) {
        return what + " of " + bytes + " bytes is over the cluster's " + name + " limit of " + limit + " bytes ("
                + readable(limit) + "); the limit is the same on every member, as the replicated state machine applies"
                + " it, and is not a flag (docs/server.md, Limits)";
    }

    private static String readable(int bytes) {
        if (bytes % (1024 * 1024) == 0) {
            return bytes / (1024 * 1024) + " MiB";
        }
        return bytes % 1024 == 0 ? bytes / 1024 + " KiB" : bytes + " bytes";
    }

    private static void require(boolean condition, String message) {
        if (!condition) {
            throw new IllegalArgumentException(message);
        }
    }

    /** Builds {@link Limits}; starts from the defaults. Setters are named like the fields. */
    public static final class Builder {
        private int maxKeyBytes = DEFAULT_MAX_KEY_BYTES;
        private int maxValueBytes = DEFAULT_MAX_VALUE_BYTES;
        private int maxTxnOps = DEFAULT_MAX_TXN_OPS;
        private int maxKeys = DEFAULT_MAX_KEYS;
        private int maxHistoryEvents = DEFAULT_MAX_HISTORY_EVENTS;
        private int maxLeases = DEFAULT_MAX_LEASES;
        private long maxLeaseTtlSeconds = DEFAULT_MAX_LEASE_TTL_SECONDS;
        private int maxSessions = DEFAULT_MAX_SESSIONS;
        private long sessionTtlMs = DEFAULT_SESSION_TTL_MS;
        private int rememberedResponsesPerSession = DEFAULT_REMEMBERED_RESPONSES_PER_SESSION;
        private long rememberedBytesPerSession = DEFAULT_REMEMBERED_BYTES_PER_SESSION;
        private long rememberedBytesTotal = DEFAULT_REMEMBERED_BYTES_TOTAL;

        private Builder() {
        }

        public Builder maxKeyBytes(int maxKeyBytes) {
            this.maxKeyBytes = maxKeyBytes;
            return this;
        }

        public Builder maxValueBytes(int maxValueBytes) {
            this.maxValueBytes = maxValueBytes;
            return this;
        }

        public Builder maxTxnOps(int maxTxnOps) {
            this.maxTxnOps = maxTxnOps;
            return this;
        }

        public Builder maxKeys(int maxKeys) {
            this.maxKeys = maxKeys;
            return this;
        }

        public Builder maxHistoryEvents(int maxHistoryEvents) {
            this.maxHistoryEvents = maxHistoryEvents;
            return this;
        }

        public Builder maxLeases(int maxLeases) {
            this.maxLeases = maxLeases;
            return this;
        }

        public Builder maxLeaseTtlSeconds(long maxLeaseTtlSeconds) {
            this.maxLeaseTtlSeconds = maxLeaseTtlSeconds;
            return this;
        }

        public Builder maxSessions(int maxSessions) {
            this.maxSessions = maxSessions;
            return this;
        }

        public Builder sessionTtlMs(long sessionTtlMs) {
            this.sessionTtlMs = sessionTtlMs;
            return this;
        }

        public Builder rememberedResponsesPerSession(int rememberedResponsesPerSession) {
            this.rememberedResponsesPerSession = rememberedResponsesPerSession;
            return this;
        }

        public Builder rememberedBytesPerSession(long rememberedBytesPerSession) {
            this.rememberedBytesPerSession = rememberedBytesPerSession;
            return this;
        }

        public Builder rememberedBytesTotal(long rememberedBytesTotal) {
            this.rememberedBytesTotal = rememberedBytesTotal;
            return this;
        }

        /** The limits; throws {@link IllegalArgumentException} naming the field when they are invalid. */
        public Limits build() {
            return new Limits(maxKeyBytes, maxValueBytes, maxTxnOps, maxKeys, maxHistoryEvents, maxLeases,
                    maxLeaseTtlSeconds, maxSessions, sessionTtlMs, rememberedResponsesPerSession,
                    rememberedBytesPerSession, rememberedBytesTotal);
        }
    }
}
