package io.rota.server.lease;

/**
 * One lease as the state machine knows it: its granted TTL and its deadline in log time (etcd v3 leases).
 * The deadline moves only by replicated commands — grant, keep-alive, checkpoint — each carrying its
 * proposer's time, so every replica computes the same remaining TTL for the same log position.
 */
public final class Lease {

    private final long id;
    private final long ttlSeconds;
    private long deadlineMs;

    Lease(long id, long ttlSeconds, long deadlineMs) {
        this.id = id;
        this.ttlSeconds = ttlSeconds;
        this.deadlineMs = deadlineMs;
    }

    public long id() {
        return id;
    }

    public long ttlSeconds() {
        return ttlSeconds;
    }

    /** The log time at which the lease runs out, unless kept alive; only the leader's Expire ends it. */
    public long deadlineMs() {
        return deadlineMs;
    }

    /** Milliseconds left at log time {@code nowMs}; 0 once the deadline has passed. */
    public long remainingMs(long nowMs) {
        return Math.max(0, deadlineMs - nowMs);
    }

    /** KeepAlive: a full TTL from now. */
    public void keepAlive(long nowMs) {
        deadlineMs = nowMs + ttlSeconds * 1000;
    }

    /**
     * Checkpoint: the leader's view of the remaining time, so a new leader resumes from it rather than
     * granting a fresh TTL (which would let a lease outlive its holder indefinitely across failovers).
     */
    public void checkpoint(long nowMs, long remainingMs) {
        deadlineMs = nowMs + Math.max(0, Math.min(remainingMs, ttlSeconds * 1000));
    }
}
