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

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.function.Consumer;

/**
 * One once-record (see {@link Once}): {@link #claim()} it; if you won, do the work and {@link #complete}
 * or {@link #fail} it. Every transition is one compare-and-set transaction.
 *
 * <p>A claim carries a {@linkplain #fencingToken() fencing token}: a claimer paused past its lease may find
 * that another claimed the record and did the work, so let the resource reject its late writes ({@link
 * JdbcFencing}, {@link FenceGuard}, {@link #guardedTxn()}) and stop by {@link #safeUntilNanos()} ({@link
 * #runGuarded} does it for you). An interrupt the caller sends — closing the record without completing or
 * failing it, typically because the thread was interrupted — releases the claim: the record is deleted, and
 * the next {@code claim()} may run the work again (docs/jobs.md). Not for concurrent use by several threads.
 */
public final class OnceRecord implements AutoCloseable {

    private final Once once;
    private final String key;
    private final String stored;
    private KeepAlive keepAlive;
    /** The claim's key watch and safe-until, while claimed. */
    private volatile Tenure tenure;
    /** The claim's loss (lease gone, record deleted or overwritten, safe-until passed), while claimed. */
    private volatile Loss loss;
    private long claimLease;
    /** When the claim lease's grant was sent, and its TTL: with the keep-alives, how long it is surely ours. */
    private long claimSentNanos;
    private Duration claimTtl;
    /**
     * The mod revision of our CLAIMED write, 0 while not claimed: the fencing token. Every later transition
     * compares it, so a lost claim is seen; every later claim writes at a higher revision.
     */
    private volatile long claimRevision;
    /** Set while complete, fail or close write: our own write is not a loss. */
    private volatile boolean finishing;

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
            revokeIfOurs(lease.id(), sentAt, lease.ttl());
            throw e;
        }
        if (!r.succeeded()) {
            revokeIfOurs(lease.id(), sentAt, lease.ttl());
            return false;
        }
        long claimed = ((PutResult) r.responses().get(0)).revision();
        Loss l = new Loss(stored);
        loss = l;
        finishing = false;
        claimLease = lease.id();
        claimSentNanos = sentAt;
        claimTtl = lease.ttl();
        claimRevision = claimed;
        keepAlive = once.rota().leases().keepAlive(lease.id(), (id, why) -> lose(l, "lease " + Long.toHexString(id)
                + " lost: " + why.getMessage()));
        tenure = new Tenure(once.rota(), stored, keepAlive, sentAt, lease.ttl().toNanos(),
                LockOptions.defaults().effectiveMargin(lease.ttl()).toNanos());
        tenure.start(claimed + 1, kv -> kv.modRevision() == claimed, reason -> lose(l, reason));
        return true;
    }

    /**
     * The claim's fencing token: the revision of its CLAIMED write (the record's create revision, unless a
     * FAILED record was claimed again). Every later claim of this key writes at a strictly greater revision,
     * so a resource that remembers the highest token it admitted ({@link FenceGuard}, {@link JdbcFencing})
     * rejects a claimer that was paused past its lease while another claimed the record and did the work.
     *
     * @return the token
     * @throws IllegalStateException if this object holds no claim
     */
    public long fencingToken() {
        return claimed();
    }

    /**
     * A transaction that applies only while this claim holds the record: it compares the record's mod
     * revision with the {@linkplain #fencingToken() token}. Add the job's writes to data in Rota with {@code
     * then(...)}; a lost claim's commit does not apply ({@code succeeded() == false}) however late it arrives.
     * {@link #complete} and {@link #fail} use the same guard.
     *
     * @return a transaction with the guard in place
     * @throws IllegalStateException if this object holds no claim
     */
    public Txn guardedTxn() {
        return once.rota().kv().txn().ifModRevision(stored, CompareOp.EQUAL, claimed());
    }

    /**
     * Until when (on {@link System#nanoTime}) the claim's lease cannot have expired, as a lock's
     * {@linkplain LockHandle#safeUntilNanos() safe-until}: the send time of the last confirmed keep-alive (or of
     * the grant) + TTL − (10% of TTL + 200 ms), or the moment the claim was known lost, if earlier. Work done for
     * the claim must stop by then.
     *
     * @return the deadline in nanoTime units
     * @throws IllegalStateException if this object holds no claim
     */
    public synchronized long safeUntilNanos() {
        claimed();
        return loss.cut(tenure.safeUntilNanos());
    }

    /**
     * Whether the claim can still be assumed held: claimed, not known lost, safe-until not passed.
     *
     * @return true while held
     */
    public synchronized boolean isHeld() {
        return claimRevision != 0 && !finishing && !loss.isLost()
                && System.nanoTime() - loss.cut(tenure.safeUntilNanos()) < 0;
    }

    /**
     * Runs {@code task} on the calling thread while the claim is held; if the claim is lost or safe-until
     * passes meanwhile, the thread is interrupted at once, as {@link LockHandle#runGuarded(Callable)} does.
     *
     * @param task the work; it should honour interruption
     * @param <T>  the result type
     * @return the task's result
     * @throws LockLostException if the claim was lost before or while the task ran
     * @throws Exception         what the task threw while the claim was held
     */
    public <T> T runGuarded(Callable<T> task) throws Exception {
        Loss l = loss;
        if (l == null) {
            throw new IllegalStateException("once-record '" + key + "' is not claimed by this object; claim() first");
        }
        return l.runGuarded(task::call, this::isHeld, "the claim was completed, failed or given up");
    }

    /**
     * Registers a listener told once when the claim is lost while it is held: its lease expired or was
     * revoked, keep-alives failed past safe-until, or the record was deleted or overwritten by someone else.
     * Not told after {@link #complete}, {@link #fail} or {@link #close}. Told on a thread of this record's own
     * (now, on this thread, if the claim is already lost).
     *
     * @param listener receives the reason
     * @return this record
     * @throws IllegalStateException if this object holds no claim
     */
    public OnceRecord onLost(Consumer<String> listener) {
        claimed();
        loss.onLost(listener);
        return this;
    }

    /** Declares claim {@code l} lost, unless it is over (finished or replaced by a later claim of this object). */
    private void lose(Loss l, String reason) {
        if (finishing || l != loss || !l.declare(reason)) {
            return;
        }
        Tenure t = tenure;
        if (t != null) {
            t.stop();
        }
        l.tell(reason);
    }

    /**
     * Records DONE with a short result; from now on nobody's claim succeeds (until the retention ends). Guarded
     * by the claim's token: only this claim, still holding the record, can complete it.
     *
     * @param result a short result (single line, cut to 512 characters)
     * @return true if recorded; false if the claim had been lost (its lease expired and someone else may
     *         have claimed the record): the work may then have been done twice — fence it with {@link #fencingToken()}
     * @throws IllegalStateException if this object holds no claim
     */
    public synchronized boolean complete(String result) {
        return finish(OnceState.DONE, result);
    }

    /**
     * Records FAILED with a short reason (claimable again only with {@link OnceOptions#retryFailed()} or
     * after {@link Once#reset}).
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
        Loss l = loss;
        return l == null ? null : l.reason();
    }

    /**
     * Releases an unfinished claim: deletes the CLAIMED record (if still ours) and revokes its lease, so the next
     * {@link #claim()} may run the work again. This is what an interrupt means: a caller that stops the work
     * (an interrupted thread, an exception out of a try-with-resources) gives the claim back rather than
     * recording a failure. Runs on an interrupted thread too (the interrupt is kept). Idempotent.
     */
    @Override
    public synchronized void close() {
        if (claimRevision == 0) {
            return;
        }
        finishing = true;
        // The release must happen on an interrupted thread too — that is when it matters most — and the SDK's
        // blocking calls give up at once when interrupted.
        boolean interrupted = Thread.interrupted();
        try {
            guardedTxn().then(Op.delete(stored)).commit();
        } catch (RotaException e) {
            // unreachable: the revoke below (or the lease's TTL) ends the claim
        } finally {
            endClaim();
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private long claimed() {
        long token = claimRevision;
        if (token == 0) {
            throw new IllegalStateException("once-record '" + key + "' is not claimed by this object; claim() first");
        }
        return token;
    }

    private boolean finish(OnceState state, String result) {
        claimed();
        finishing = true;   // our own write below is not a loss
        tenure.stop();
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
        return guardedTxn().then(Op.put(stored, record(state, result), lease)).commit().succeeded();
    }

    private void endClaim() {
        tenure.stop();
        tenure = null;
        long confirmed = keepAlive.lastConfirmedSendNanos().orElse(claimSentNanos);
        keepAlive.close();
        revokeIfOurs(claimLease, Math.max(confirmed, claimSentNanos), claimTtl);
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

    /**
     * Revokes a claim lease only while it cannot have expired: a keep-alive (or the grant) sent at {@code
     * confirmedSendNanos} was confirmed, so the lease lives until then + TTL at the earliest (less the margin for
     * clock drift). Past that — after a pause, say — the cluster may have ended it and granted its id again to
     * another client (an explicit id, as etcd allows), whose keys a revoke would delete; and an ended lease needs
     * no revoke (issue 31, design.md LF13; found by the recipe simulation).
     */
    private void revokeIfOurs(long lease, long confirmedSendNanos, Duration ttl) {
        long surelyOursUntil = confirmedSendNanos + ttl.toNanos() - LockOptions.defaults().effectiveMargin(ttl).toNanos();
        if (System.nanoTime() - surelyOursUntil >= 0) {
            return;   // it ends by itself, if it has not already
        }
        try {
            once.rota().leases().revoke(lease);
        } catch (RotaException e) {
            // gone already, or unreachable: it expires after its TTL
        }
    }
}
