package io.rota.client.recipes;

import io.rota.client.CompareOp;
import io.rota.client.KeepAlive;
import io.rota.client.KeyValue;
import io.rota.client.Lease;
import io.rota.client.Op;
import io.rota.client.PutResult;
import io.rota.client.RotaException;
import io.rota.client.Txn;
import io.rota.client.TxnResult;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * One once-record (see {@link Once}): {@link #claim()} it; if you won, do the work and {@link #complete}
 * or {@link #fail} it. Closing a claimed but unfinished record gives the claim up (deletes it), so another
 * caller may claim it at once. Every transition is one compare-and-set transaction. Not for concurrent use
 * by several threads.
 */
public final class OnceRecord implements AutoCloseable {

    private final Once once;
    private final String key;
    private final String stored;
    private KeepAlive keepAlive;
    /** The claim's loss (record deleted or overwritten, safe-until passed) and its safe-until, while claimed. */
    private Tenure tenure;
    private final List<Consumer<String>> lostListeners = new CopyOnWriteArrayList<>();
    private long claimLease;
    /** The mod revision of our CLAIMED write: every later transition compares it, so a lost claim is seen. */
    private long claimRevision;
    private volatile String lostReason;

    OnceRecord(Once once, String key) {
        this.once = once;
        this.key = key;
        this.stored = once.storedKey(key);
    }

    /**
     * The record's key (without the prefix).
     *
     * @return the key
     */
    public String key() {
        return key;
    }

    /**
     * Claims the record if nobody did (or its claimer died, or it FAILED and failures are retried).
     *
     * @return true if this caller is first and must do the work; false if it is claimed, DONE or FAILED
     * @throws IllegalStateException if this object already holds the claim
     * @throws io.rota.client.RotaException if the cluster could not be reached
     */
    public synchronized boolean claim() {
        if (claimRevision != 0) {
            throw new IllegalStateException("once-record '" + key + "' is already claimed by this object");
        }
        Optional<KeyValue> current = once.rota().kv().get(stored).first();
        if (current.isPresent()) {
            OnceStatus s = OnceStatus.decode(key, current.get().valueString(), current.get().modRevision());
            if (s.state() != OnceState.FAILED || !once.options().retryFailed()) {
                return false;
            }
        }
        long sentAt = System.nanoTime();
        Lease lease = once.rota().leases().grant(once.options().claimTtl());
        Txn txn = once.rota().kv().txn();
        txn = current.isPresent() ? txn.ifModRevision(stored, CompareOp.EQUAL, current.get().modRevision())
                : txn.ifCreateRevision(stored, CompareOp.EQUAL, 0);
        TxnResult r;
        try {
            r = txn.then(Op.put(stored, record(OnceState.CLAIMED, ""), lease.id())).commit();
        } catch (RotaException e) {
            revokeQuietly(lease.id());
            throw e;
        }
        if (!r.succeeded()) {
            revokeQuietly(lease.id());
            return false;
        }
        claimLease = lease.id();
        claimRevision = ((PutResult) r.responses().get(0)).revision();
        lostReason = null;
        keepAlive = once.rota().leases().keepAlive(lease.id(), (id, why) -> lose("lease " + Long.toHexString(id)
                + " lost: " + why.getMessage()));
        long claimed = claimRevision;
        tenure = new Tenure(once.rota(), stored, keepAlive, sentAt, lease.ttl().toNanos(),
                LockOptions.defaults().effectiveMargin(lease.ttl()).toNanos());
        tenure.start(claimed + 1, kv -> kv.modRevision() == claimed, this::lose);
        return true;
    }

    /**
     * Until when (on {@link System#nanoTime}) the claim's lease cannot have expired, as a lock's
     * {@linkplain LockHandle#safeUntilNanos() safe-until}: the send time of the last confirmed keep-alive (or of
     * the grant) + TTL − (10% of TTL + 200 ms). Work done for the claim must stop by then.
     *
     * @return the deadline in nanoTime units
     * @throws IllegalStateException if this object holds no claim
     */
    public synchronized long safeUntilNanos() {
        if (tenure == null) {
            throw new IllegalStateException("once-record '" + key + "' is not claimed by this object");
        }
        return tenure.safeUntilNanos();
    }

    /**
     * Registers a listener told once when the claim is lost while it is held: its lease expired or was
     * revoked, keep-alives failed past safe-until, or the record was deleted or overwritten by someone else.
     * Not told after {@link #complete}, {@link #fail} or {@link #close}. Told on a thread of this record's own
     * (now, on this thread, if the claim is already lost).
     *
     * @param listener receives the reason
     * @return this record
     */
    public OnceRecord onLost(Consumer<String> listener) {
        lostListeners.add(listener);
        String reason = lostReason;
        if (reason != null && lostListeners.remove(listener)) {
            listener.accept(reason);
        }
        return this;
    }

    private void lose(String reason) {
        Tenure t;
        synchronized (this) {
            if (claimRevision == 0 || lostReason != null) {
                return;
            }
            lostReason = reason;
            t = tenure;
        }
        t.stop();
        Timers.apart("rota-lost " + stored, () -> {
            for (Consumer<String> l : lostListeners) {
                if (lostListeners.remove(l)) {
                    l.accept(reason);
                }
            }
        });
    }

    /**
     * Records DONE with a short result; from now on nobody's claim succeeds (until the retention ends).
     *
     * @param result a short result (single line, cut to 512 characters)
     * @return true if recorded; false if the claim had been lost (its lease expired and someone else may
     *         have claimed the record): the work may then have been done twice — use fencing where that matters
     * @throws IllegalStateException if this object holds no claim
     */
    public synchronized boolean complete(String result) {
        return finish(OnceState.DONE, result);
    }

    /**
     * Records FAILED with a short reason (claimable again only with {@link OnceOptions#retryFailed()}).
     *
     * @param reason a short reason
     * @return true if recorded; false if the claim had been lost
     * @throws IllegalStateException if this object holds no claim
     */
    public synchronized boolean fail(String reason) {
        return finish(OnceState.FAILED, reason);
    }

    /**
     * Reads the record.
     *
     * @return its status, or empty if there is none
     */
    public Optional<OnceStatus> status() {
        return once.status(key);
    }

    /**
     * Why this object's claim was lost (see {@link #onLost}), if it was.
     *
     * @return the reason, or null
     */
    public String lostReason() {
        return lostReason;
    }

    /** Gives up an unfinished claim: deletes the CLAIMED record (if still ours) and revokes its lease. */
    @Override
    public synchronized void close() {
        if (claimRevision == 0) {
            return;
        }
        tenure.stop();
        try {
            once.rota().kv().txn().ifModRevision(stored, CompareOp.EQUAL, claimRevision).then(Op.delete(stored))
                    .commit();
        } finally {
            endClaim();
        }
    }

    private boolean finish(OnceState state, String result) {
        if (claimRevision == 0) {
            throw new IllegalStateException("once-record '" + key + "' is not claimed by this object; claim() first");
        }
        tenure.stop();   // our own write below is not a loss
        try {
            return write(state, result, once.retentionLease(false));
        } catch (RotaException e) {
            if (!Once.leaseGone(e)) {
                throw e;
            }
            return write(state, result, once.retentionLease(true));
        } finally {
            endClaim();
        }
    }

    private boolean write(OnceState state, String result, long lease) {
        return once.rota().kv().txn().ifModRevision(stored, CompareOp.EQUAL, claimRevision)
                .then(Op.put(stored, record(state, result), lease)).commit().succeeded();
    }

    private void endClaim() {
        tenure.stop();
        tenure = null;
        keepAlive.close();
        revokeQuietly(claimLease);
        claimRevision = 0;
        claimLease = 0;
    }

    private String record(OnceState state, String result) {
        Map<String, String> f = new LinkedHashMap<>();
        f.put("state", state.name());
        f.put("owner", once.options().owner());
        f.put("result", result);
        f.put("at", Long.toString(System.currentTimeMillis()));
        return Fields.encode(f);
    }

    private void revokeQuietly(long lease) {
        try {
            once.rota().leases().revoke(lease);
        } catch (RotaException e) {
            // gone already, or unreachable: it expires after its TTL
        }
    }
}
