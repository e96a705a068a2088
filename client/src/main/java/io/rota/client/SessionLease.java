package io.rota.client;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * The lease a client's recipes share (etcd's {@code concurrency.Session}, ZooKeeper's session): granted
 * lazily on first use, kept alive by the client every TTL/3, and used by every lock, election and job of
 * that client whose TTL it has. One lease per client and TTL instead of one per acquisition saves a grant
 * and a revoke — two Raft writes — on every lock cycle. Obtain it from {@link Leases#session(Duration)}.
 *
 * <p>When the lease is lost (the cluster reports it gone, keep-alives failed for a whole TTL, or a write
 * found it gone and called {@link #invalidate}) every listener is told once, on the client's callback
 * thread, and the next {@link Leases#session(Duration)} grants a new one: a lost session fails every
 * handle that used it, never the handles of the next.
 */
public final class SessionLease {

    private final Lease lease;
    private final long grantSentNanos;
    private final CompletableFuture<RotaException> lost = new CompletableFuture<>();
    private final Set<Consumer<RotaException>> listeners = ConcurrentHashMap.newKeySet();
    private volatile KeepAlive keepAlive;

    SessionLease(Lease lease, long grantSentNanos) {
        this.lease = lease;
        this.grantSentNanos = grantSentNanos;
    }

    /** Starts the keep-alives; separate from the constructor because their listener refers to this. */
    void keepAlive(KeepAlive keepAlive) {
        this.keepAlive = keepAlive;
    }

    /**
     * The lease id; put keys with it to tie them to this client's life.
     *
     * @return the lease id
     */
    public long leaseId() {
        return lease.id();
    }

    /**
     * The TTL the cluster granted.
     *
     * @return the granted TTL
     */
    public Duration ttl() {
        return lease.ttl();
    }

    /**
     * When the grant was sent, on {@link System#nanoTime}: until a keep-alive is confirmed, the lease cannot
     * expire before this + TTL.
     *
     * @return the send time of the grant
     */
    public long grantSentNanos() {
        return grantSentNanos;
    }

    /**
     * The keep-alive of the lease: {@link KeepAlive#lastConfirmedSendNanos()} is the base of safe-until.
     *
     * @return the keep-alive (do not close it: the client does)
     */
    public KeepAlive keepAlive() {
        return keepAlive;
    }

    /**
     * Whether the lease was lost (then a new one is granted for new uses).
     *
     * @return true once lost
     */
    public boolean isLost() {
        return lost.isDone();
    }

    /**
     * Whether the cluster may have expired the lease by {@code nowNanos}: no keep-alive (nor the grant) sent
     * within the last TTL was confirmed. The keep-alive may not have noticed yet — a process paused longer
     * than the TTL wakes with the lease still "live" — and an ended lease's id can be granted again to
     * another client, so such a session must not be used for new keys (issue 31, design.md LF11).
     *
     * @param nowNanos now, on {@link System#nanoTime}
     * @return true if the lease may be gone
     */
    public boolean mayHaveExpired(long nowNanos) {
        KeepAlive ka = keepAlive;
        long base = ka == null ? grantSentNanos : ka.lastConfirmedSendNanos().orElse(grantSentNanos);
        return nowNanos - (base + lease.ttl().toNanos()) >= 0;
    }

    /**
     * Tells {@code listener} once when the lease is lost (at once, on this thread, if it already is).
     * Remove it with {@link #removeListener} when it no longer cares, so a long-lived session does not
     * collect the listeners of every lock it ever held.
     *
     * @param listener told the reason
     */
    public void addListener(Consumer<RotaException> listener) {
        listeners.add(listener);
        if (lost.isDone() && listeners.remove(listener)) {
            listener.accept(lost.join());
        }
    }

    /**
     * Forgets a listener added with {@link #addListener}.
     *
     * @param listener the listener
     */
    public void removeListener(Consumer<RotaException> listener) {
        listeners.remove(listener);
    }

    /**
     * Marks the lease lost because a write found it gone (LEASE_NOT_FOUND) before a keep-alive did: the
     * keep-alives stop, the listeners are told, and the next {@link Leases#session(Duration)} grants anew.
     *
     * @param reason why
     */
    public void invalidate(RotaException reason) {
        KeepAlive ka = keepAlive;
        if (ka != null) {
            ka.close();
        }
        lose(reason);
    }

    /** Marks lost and tells each listener once, on the calling thread (the client's callback thread). */
    void lose(RotaException reason) {
        if (!lost.complete(reason)) {
            return;
        }
        for (Consumer<RotaException> l : listeners) {
            if (listeners.remove(l)) {
                l.accept(reason);
            }
        }
    }

    /** For humans: the lease id in hex and the TTL. */
    @Override
    public String toString() {
        return "SessionLease[" + Long.toHexString(lease.id()) + ", ttl=" + lease.ttl().toSeconds() + "s"
                + (isLost() ? ", lost" : "") + "]";
    }
}
