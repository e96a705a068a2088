package io.rota.client.recipes;

import io.rota.client.CompareOp;
import io.rota.client.GetResult;
import io.rota.client.GetOptions;
import io.rota.client.KeyValue;
import io.rota.client.Op;
import io.rota.client.OpResult;
import io.rota.client.PutResult;
import io.rota.client.RotaClient;
import io.rota.client.RotaException;
import io.rota.client.SessionLease;
import io.rota.client.Txn;
import io.rota.client.TxnResult;
import io.rota.client.Watch;
import io.rota.client.WatchEvent;
import io.rota.client.WatchListener;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * One place in a FIFO queue of contenders (etcd's concurrency.Mutex, see docs/kv.md): a key
 * {@code <queue><session-hex>-<seq-hex>} attached to the client's {@linkplain SessionLease session lease},
 * ordered by create_revision. Shared by {@link Lock} and {@link Election}. It also knows when its lease can
 * no longer be assumed alive (safe-until) and tells its listeners once when it is lost.
 *
 * <p>Writes per place (docs/locks.md, design.md L1–L4): joining is one txn that puts the key and, in the
 * same revision, either finds the queue empty (then the {@code ifFirst} ops apply too) or reads the queue;
 * leaving is one compare-and-delete txn. The session lease is shared, so no grant or revoke per place.
 */
final class Contender {

    /**
     * A contender key's last segment: the session lease in hex, then "-" and this JVM's sequence in hex
     * (several places of one session in one queue). The bare lease hex is the older form, still honoured.
     */
    private static final Pattern CONTENDER_ID = Pattern.compile("[0-9a-f]{1,16}(-[0-9a-f]{1,16})?");
    /** Makes each place's key unique within its session lease. */
    private static final AtomicLong SEQUENCE = new AtomicLong();

    private final RotaClient rota;
    private final String queue;
    private final String key;
    private final SessionLease session;
    /** Told when the session lease is lost; removed when the place is given up. */
    private final Consumer<RotaException> sessionLost;
    /** The loss of the first place (own key, safe-until), watched once first; safe-until from the start. */
    private final Tenure tenureWatch;
    /** The key's create_revision: its place in the queue and, once first, the fencing token. */
    private volatile long token;
    /** The join txn found the queue empty: first at once, with the results of the ifFirst ops. */
    private boolean firstAtOnce;
    private List<OpResult> ifFirstResults = List.of();
    /** The queue as the join txn read it (when not first at once): no second read before waiting. */
    private GetResult joinedView;
    /** The place's loss: declared once, never after it was given up ({@link #retired}). */
    private final Loss loss;
    /** Completed when the place is given up (retire, abandon): a waiter stops waiting. */
    private final CompletableFuture<Void> left = new CompletableFuture<>();
    private boolean retired;
    /** Set once first in the queue (holder or leader), when its loss starts being watched. */
    private volatile boolean tenure;

    private Contender(RotaClient rota, String queue, SessionLease session, Duration margin) {
        this.rota = rota;
        this.queue = queue;
        this.session = session;
        this.key = queue + Long.toHexString(session.leaseId()) + "-" + Long.toHexString(SEQUENCE.incrementAndGet());
        this.sessionLost = why -> lose("session lease " + Long.toHexString(session.leaseId()) + " lost: "
                + why.getMessage());
        this.loss = new Loss(key);
        this.tenureWatch = new Tenure(rota, key, session.keepAlive(), session.grantSentNanos(),
                session.ttl().toNanos(), margin.toNanos());
    }

    /**
     * Joins the queue in one txn: puts the contender's key under the client's session lease of {@code ttl}
     * and, in the same revision, either finds no other contender (then {@code ifFirst} applies too, and the
     * place is first at once) or reads the queue (the view {@link #awaitFirst} starts from). Applied once,
     * even if retried. A session found gone is replaced once.
     *
     * @param queue   the queue prefix, ending with '/'
     * @param value   the key's value
     * @param ttl     the session lease TTL
     * @param margin  the safety margin for a TTL (see {@link LockOptions#effectiveMargin})
     * @param ifFirst the ops (given the contender's key) applied in the same txn only when the queue had no
     *                contender, e.g. the lock's holder record
     */
    static Contender enter(RotaClient rota, String queue, String value, Duration ttl,
                           Function<Duration, Duration> margin, Function<String, List<Op>> ifFirst) {
        for (int attempt = 0; ; attempt++) {
            SessionLease session = rota.leases().session(ttl);
            Contender c = new Contender(rota, queue, session, margin.apply(session.ttl()));
            session.addListener(c.sessionLost);
            try {
                List<Op> first = new ArrayList<>();
                first.add(Op.put(c.key, value, session.leaseId()));
                first.addAll(ifFirst.apply(c.key));
                // Queue empty = no key under it tied to a lease (contenders always are; other keys do not count).
                Txn join = rota.kv().txn().ifPrefixLease(queue, CompareOp.EQUAL, 0)
                        .then(first.toArray(Op[]::new))
                        .orElse(Op.put(c.key, value, session.leaseId()), Op.getPrefix(queue));
                // Only if no key of this name exists (etcd's Mutex compares the same): the name holds the lease
                // id, and an ended lease's id can be another client's by now — a put would take over its key,
                // create revision and all, and both would hold the lock (issue 31, found by the recipe
                // simulation).
                TxnResult guarded = rota.kv().txn().ifCreateRevision(c.key, CompareOp.EQUAL, 0)
                        .then(Op.txn(join)).commit();
                if (!guarded.succeeded()) {
                    // The session's id is another client's now: the same end as a lease found gone (below).
                    throw new RotaException(RotaException.Code.LEASE_NOT_FOUND, "session lease "
                            + Long.toHexString(session.leaseId()) + " is gone: a key of its name " + c.key
                            + " belongs to another client");
                }
                TxnResult r = (TxnResult) guarded.responses().get(0);
                if (r.succeeded()) {
                    c.token = ((PutResult) r.responses().get(0)).revision();
                    c.firstAtOnce = true;
                    c.ifFirstResults = List.copyOf(r.responses().subList(1, r.responses().size()));
                } else {
                    c.joinedView = (GetResult) r.responses().get(1);
                    c.token = c.joinedView.kvs().stream().filter(kv -> kv.keyString().equals(c.key))
                            .mapToLong(KeyValue::createRevision).findFirst().orElseThrow();
                }
                return c;
            } catch (RotaException e) {
                session.removeListener(c.sessionLost);
                if (e.code() == RotaException.Code.LEASE_NOT_FOUND && attempt == 0) {
                    session.invalidate(e);   // a keep-alive had not noticed yet: grant a new session, once
                    continue;
                }
                c.retired = true;
                if (e.code() == RotaException.Code.LEASE_NOT_FOUND) {
                    session.invalidate(e);   // gone indeed, with its places: the next acquisition grants anew
                } else if (!nothingWritten(e)) {
                    c.cleanUp(0);   // the key may be in the queue: delete it, and only it (issue 31)
                }
                throw e;
            }
        }
    }

    String key() {
        return key;
    }

    long leaseId() {
        return session.leaseId();
    }

    /** Whether the join txn found the queue empty (the ifFirst ops applied). */
    boolean firstAtOnce() {
        return firstAtOnce;
    }

    /** The results of the ifFirst ops when {@link #firstAtOnce()}, else empty. */
    List<OpResult> ifFirstResults() {
        return ifFirstResults;
    }

    long token() {
        return token;
    }

    /** The contenders of {@code queue} in queue order (lowest create_revision first), from one read. */
    static List<KeyValue> contenders(GetResult r, String queue) {
        List<KeyValue> list = new ArrayList<>();
        for (KeyValue kv : r.kvs()) {
            if (kv.lease() != 0 && isContenderKey(kv.keyString(), queue)) {
                list.add(kv);
            }
        }
        list.sort(Comparator.comparingLong(KeyValue::createRevision));
        return list;
    }

    /** Whether {@code key} is a contender of {@code queue} (not a key of a lock nested below its name). */
    static boolean isContenderKey(String key, String queue) {
        return key.startsWith(queue) && CONTENDER_ID.matcher(key.substring(queue.length())).matches();
    }

    /**
     * Waits until this contender is first in the queue, watching only its predecessor's key.
     *
     * <p>Hand-over without a Raft round (design.md L3, LF2): when the view the waiter holds shows its predecessor
     * FIRST, the predecessor's deletion makes this contender first — keys only join at the end (a higher
     * create_revision), so nobody else can be ahead — provided its own key is still there, which one
     * serializable read of that key at the deletion's revision confirms. Otherwise the
     * predecessor was a waiter too, and its deletion may mean it gave up or its session ended while others
     * are still ahead; then the queue is read again AT the deletion's revision (a serializable read of
     * history, no Raft round; a linearizable read if the member cannot serve it) and the new predecessor is
     * watched. Either way each waiter wakes once per deletion of its own predecessor (no herd).
     *
     * @param deadline the {@link System#nanoTime} deadline
     * @param wakeups  counts the wake-ups after a predecessor left (to show there is no herd)
     * @param reads    counts the reads of the queue after a wake-up (none when each predecessor was first: then
     *                only the own key is read, at the deletion's revision)
     * @return true when first; false when the deadline passed
     * @throws LockLostException if the contender's key or lease is gone, or it left the queue meanwhile
     *                           (resign from another thread)
     * @throws RotaException     UNAVAILABLE if the client was closed meanwhile
     */
    boolean awaitFirst(long deadline, AtomicLong wakeups, AtomicLong reads) throws InterruptedException {
        if (firstAtOnce) {
            return true;
        }
        CompletableFuture<Void> clientClosed = rota.whenClosed();
        GetResult view = joinedView;
        // The revision the view shows the queue at (a historical read's header has the member's current one).
        long viewRevision = view == null ? 0 : view.revision();
        while (true) {
            if (loss.future().isDone()) {
                throw new LockLostException(key, loss.future().join());
            }
            if (left.isDone()) {
                throw new LockLostException(key, "it left the queue while waiting (resigned or given up)");
            }
            if (clientClosed.isDone()) {
                throw new RotaException(RotaException.Code.UNAVAILABLE, "the client was closed while " + key + " waited");
            }
            if (view == null) {
                view = rota.kv().getPrefix(queue);
                viewRevision = view.revision();
            }
            List<KeyValue> queued = contenders(view, queue);
            int mine = -1;
            for (int i = 0; i < queued.size(); i++) {
                if (queued.get(i).keyString().equals(key)) {
                    mine = i;
                }
            }
            if (mine < 0) {
                String reason = left.isDone() ? "it left the queue while waiting (resigned or given up)"
                        : "key " + key + " is gone (its lease expired or was revoked)";
                lose(reason);   // does nothing after retire or abandon: only `left` is set then
                throw new LockLostException(key, loss.future().getNow(reason));
            }
            if (mine == 0) {
                return true;
            }
            boolean predecessorIsFirst = mine == 1;
            String predecessor = queued.get(mine - 1).keyString();
            CompletableFuture<Long> predecessorLeft = new CompletableFuture<>();
            // From the revision after the view: a delete between the view and the watch is replayed.
            try (Watch w = rota.watches().watch(predecessor, viewRevision + 1, new WatchListener() {
                @Override
                public void onEvent(WatchEvent event) {
                    if (event.type() == WatchEvent.Type.DELETE) {
                        predecessorLeft.complete(event.revision());
                    }
                }

                @Override
                public void onError(RotaException error) {
                    predecessorLeft.complete(0L);   // read the queue again (linearizable)
                }
            })) {
                long remaining = deadline - System.nanoTime();
                if (remaining <= 0) {
                    return false;
                }
                CompletableFuture.anyOf(predecessorLeft, loss.future(), left, clientClosed).get(remaining, TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                return false;
            } catch (ExecutionException e) {
                throw new IllegalStateException("unexpected failure while waiting", e.getCause());
            }
            if (!predecessorLeft.isDone()) {
                view = null;
                continue;   // lost, left or closed: reported at the top of the loop
            }
            wakeups.incrementAndGet();
            long deletedAt = predecessorLeft.join();
            if (deletedAt > 0 && predecessorIsFirst && !loss.future().isDone() && !left.isDone()) {
                // The first left: nobody can be ahead any more — if this key is still there. It may have gone
                // while it waited (its lease ended, someone deleted it) without anything watching it yet, so
                // the step that makes it first also confirms it, at the deletion's revision (issue 31; etcd's
                // Mutex re-reads its own key too). Gone: lost, never a handle that is already lost.
                Boolean ownKeyThere = ownKeyAt(deletedAt);
                if (Boolean.TRUE.equals(ownKeyThere)) {
                    return true;
                }
                reads.incrementAndGet();
                view = null;   // gone, or unknown at that revision: the current queue decides (linearizable)
                viewRevision = 0;
                continue;
            }
            reads.incrementAndGet();
            view = deletedAt > 0 ? queueAt(deletedAt) : null;
            viewRevision = deletedAt;
        }
    }

    /**
     * Whether this contender's key (with its create_revision) existed at {@code revision}, read from history
     * without a Raft round; null if this member cannot serve that revision (then the current queue is read).
     */
    private Boolean ownKeyAt(long revision) {
        try {
            GetResult r = rota.kv().get(key, GetOptions.builder().revision(revision).serializable().build());
            return r.first().filter(kv -> kv.createRevision() == token).isPresent();
        } catch (RotaException e) {
            return null;   // a member behind that revision (INVALID_ARGUMENT) or history compacted
        }
    }

    /**
     * The queue as of {@code revision}, read from history without a Raft round (the member that sent the
     * event has applied it); null (read the current queue linearizably) if this member cannot serve it.
     */
    private GetResult queueAt(long revision) {
        try {
            return rota.kv().get(queue, GetOptions.builder().prefix().revision(revision).serializable().build());
        } catch (RotaException e) {
            return null;   // a member behind that revision (INVALID_ARGUMENT) or history compacted
        }
    }

    /**
     * Starts watching for the loss of the first place: the own key's deletion and the safe-until deadline.
     * The keep-alive's loss is watched from the start.
     */
    synchronized void watchTenure() {
        if (retired || loss.future().isDone()) {
            return;
        }
        tenure = true;
        long created = token;
        tenureWatch.start(token + 1, kv -> kv.createRevision() == created, this::lose);
    }

    /**
     * Until when (on {@link System#nanoTime}) nobody else can hold this place: the send time of the last
     * confirmed keep-alive (or of the grant) + TTL − margin.
     */
    long safeUntilNanos() {
        return loss.cut(tenureWatch.safeUntilNanos());
    }

    boolean hasTenure() {
        return tenure;
    }

    boolean isLost() {
        return loss.future().isDone();
    }

    /** Why the place was lost, or null. */
    String lostReason() {
        return loss.future().getNow(null);
    }

    /**
     * Tells {@code listener} once when the place is lost: on a thread of this contender's own, so a slow
     * listener delays neither the timer nor another lock's loss (now, on this thread, if it already is lost).
     */
    void onLost(Consumer<String> listener) {
        loss.onLost(listener);
    }

    /** Marks the place lost (unless it was given up): interrupts guarded tasks at once and tells the listeners. */
    void lose(String reason) {
        synchronized (this) {
            if (retired || !loss.declare(reason)) {
                return;
            }
            session.removeListener(sessionLost);
            tenureWatch.stop();
        }
        loss.tell(reason);
    }

    /** The place's loss, for the handle's guarded runs. */
    Loss loss() {
        return loss;
    }

    /** A txn that applies only while this contender's key exists with its create_revision. */
    Txn guardedTxn() {
        return Fencing.guard(rota.kv().txn(), key, token);
    }

    /**
     * The delete of this contender's own key, and only it. The name (session lease id, sequence) is not enough:
     * lease ids can be granted again once a lease has ended (an explicit id, as etcd allows), so another
     * client may hold a key of the same name. Once the key's create_revision is known the delete compares it;
     * before that (a join whose outcome is unknown) only this session's lease can have put the key, and the
     * clean-up stops when the session ends.
     */
    private Txn ownKeyDelete() {
        Txn txn = token > 0 ? guardedTxn() : rota.kv().txn().ifPrefixLease(key, CompareOp.EQUAL, session.leaseId());
        return txn.then(Op.delete(key));
    }

    /**
     * Leaves cleanly: deletes the own key (only if it is still this contender's, by create_revision) with
     * {@code alongside} in the same txn — one Raft write; the session lease lives on for the client's other
     * places. The lost listeners are not told. If the txn fails, the own key alone is deleted — at once when
     * the cluster refused the txn (a put alongside refused under NOSPACE, say), else in the background until
     * it is gone ({@link #cleanUp}); the session, which holds the client's other places, is never ended.
     *
     * @return whether the key was still there and was deleted
     */
    boolean retire(Op... alongside) {
        synchronized (this) {
            if (retired) {
                return false;
            }
            retired = true;
            tenureWatch.stop();
            left.complete(null);
        }
        session.removeListener(sessionLost);
        // A clean-up must run even on an interrupted thread (a closing job): the SDK's blocking calls give up
        // at once when interrupted, and a key left behind would block the queue until the session ends.
        boolean interrupted = Thread.interrupted();
        try {
            if (loss.future().isDone()) {
                ownKeyDelete().commit();   // lost by safe-until while the key may live on: take it away
                return false;
            }
            List<Op> ops = new ArrayList<>();
            ops.add(Op.delete(key));
            ops.addAll(List.of(alongside));
            return guardedTxn().then(ops.toArray(Op[]::new)).commit().succeeded();
        } catch (RotaException e) {
            if (nothingWritten(e) && alongside.length > 0) {
                try {
                    // The key alone: a delete is never refused for space, and a user allowed only the queue may
                    // delete its own key there. Released if it was still there, whatever the alongside op.
                    return guardedTxn().then(Op.delete(key)).commit().succeeded();
                } catch (RotaException again) {
                    cleanUp(0);
                    return false;
                }
            }
            cleanUp(0);
            return false;
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Leaves without the txn (a waiter that gave up, a failed entry): deletes the own key, guarded by its
     * create_revision ({@link #ownKeyDelete}).
     */
    void abandon() {
        synchronized (this) {
            if (retired) {
                return;
            }
            retired = true;
            tenureWatch.stop();
            left.complete(null);
        }
        session.removeListener(sessionLost);
        boolean interrupted = Thread.interrupted();   // see retire
        try {
            ownKeyDelete().commit();
        } catch (RotaException e) {
            cleanUp(0);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Whether the cluster answered {@code e} without writing anything: a refusal (a name over the key limit,
     * NOSPACE, a permission, an ended lease or session). Then a failed join left no key behind and needs no
     * clean-up. A timeout or an unreachable cluster is an unknown outcome: the write may have applied.
     */
    static boolean nothingWritten(RotaException e) {
        return switch (e.code()) {
            case INVALID_ARGUMENT, REQUEST_TOO_LARGE, PERMISSION_DENIED, NO_SPACE, LEASE_NOT_FOUND, SESSION_EXPIRED,
                 AUTH_FAILED, INVALID_AUTH_TOKEN, AUTH_NOT_ENABLED, COMPACTED, MEMBERSHIP_REFUSED -> true;
            default -> false;
        };
    }

    /** How long {@link #cleanUp} waits between attempts: doubling from 100 ms, at most 2 s. */
    private static long cleanUpDelayMs(int attempt) {
        return Math.min(2_000, 100L << Math.min(attempt, 5));
    }

    /**
     * Deletes this contender's own key in the background until it is gone, the session ends (which takes the
     * key with it) or the client closes — Curator's guaranteed delete (issue 31). A failed write of one place
     * never ends the session: that lease carries the client's other locks, elections and jobs, and revoking
     * it handed them to waiters before their holders' safe-until. The delete is {@link #ownKeyDelete}.
     */
    private void cleanUp(int attempt) {
        if (session.isLost() || rota.whenClosed().isDone()) {
            return;
        }
        ownKeyDelete().commitAsync().whenComplete((deleted, e) -> {
            if (e != null) {
                CompletableFuture.delayedExecutor(cleanUpDelayMs(attempt), TimeUnit.MILLISECONDS)
                        .execute(() -> cleanUp(attempt + 1));
            }
        });
    }
}
