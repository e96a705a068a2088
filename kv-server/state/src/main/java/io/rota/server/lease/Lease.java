package io.rota.server.lease;

/**
 * One lease as the state machine knows it: its granted TTL, its deadline in log time (etcd v3 leases;
 * see {@code LogClock}) and its latest renewal. The deadline moves only by replicated commands — grant,
 * keep-alive, checkpoint — so every replica computes the same remaining TTL at the same log position.
 */
public final class Lease {

    private final long id;
    private final long ttlSeconds;
    /** The caller that granted it (Command.caller, issue 33); "" for no user's (an image from before, internal). */
    private final String owner;
    private long deadlineMs;
    /** The log index of the latest grant or keep-alive; only grows. An expiry must name it to apply. */
    private long renewal;

    Lease(long id, long ttlSeconds, String owner, long deadlineMs, long renewal) {
        this.id = id;
        this.ttlSeconds = ttlSeconds;
        this.owner = owner;
        this.deadlineMs = deadlineMs;
        this.renewal = renewal;
    }

    public long id() {
        return id;
    }

    public long ttlSeconds() {
        return ttlSeconds;
    }

    /** Who granted it: while auth is enabled only this caller or root may use it (issue 33). */
    public String owner() {
        return owner;
    }

    /** The log time at which the lease runs out, unless kept alive; only the leader's Expire ends it. */
    public long deadlineMs() {
        return deadlineMs;
    }

    /** Milliseconds left at log time {@code nowMs}; 0 once the deadline has passed. */
    public long remainingMs(long nowMs) {
        return Math.max(0, deadlineMs - nowMs);
    }

    /** The log index of the grant or keep-alive that last restarted the lease. */
    public long renewal() {
        return renewal;
    }

    /** KeepAlive at log index {@code index}: a full TTL from now. */
    public void keepAlive(long nowMs, long index) {
        deadlineMs = nowMs + ttlSeconds * 1000;
        renewal = index;
    }

    /**
     * Checkpoint: the leader's view of the remaining time, so a new leader resumes from it rather than
     * granting a fresh TTL (which would let a lease outlive its holder indefinitely across failovers).
     */
    public void checkpoint(long nowMs, long remainingMs) {
        deadlineMs = nowMs + Math.max(0, Math.min(remainingMs, ttlSeconds * 1000));
    }
}
