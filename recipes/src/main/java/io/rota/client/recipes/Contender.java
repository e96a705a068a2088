package io.rota.client.recipes;

import io.rota.client.CompareOp;
import io.rota.client.GetResult;
import io.rota.client.KeepAlive;
import io.rota.client.KeyValue;
import io.rota.client.Lease;
import io.rota.client.Op;
import io.rota.client.PutResult;
import io.rota.client.RotaClient;
import io.rota.client.RotaException;
import io.rota.client.Txn;
import io.rota.client.TxnResult;
import io.rota.client.Watch;
import io.rota.client.WatchEvent;
import io.rota.client.WatchListener;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * One place in a FIFO queue of contenders (etcd's concurrency.Mutex, see docs/kv.md): a key
 * {@code <queue>/<lease-hex>} attached to its own kept-alive lease, ordered by create_revision. Shared by
 * {@link Lock} and {@link Election}. It also knows when its lease can no longer be assumed alive
 * (safe-until) and tells its listeners once when it is lost.
 */
final class Contender {

    /** A contender key's last segment: the lease id in hex. Anything else under the prefix is not ours. */
    private static final Pattern LEASE_HEX = Pattern.compile("[0-9a-f]{1,16}");

    private final RotaClient rota;
    private final String queue;
    private final String key;
    private final long leaseId;
    private final KeepAlive keepAlive;
    /** The loss of the first place (own key, safe-until), watched once first; safe-until from the start. */
    private final Tenure tenureWatch;
    /** The key's create_revision: its place in the queue and, once first, the fencing token. */
    private volatile long token;
    private final CompletableFuture<String> lost = new CompletableFuture<>();
    /** Completed when the place is given up (retire, abandon): a waiter stops waiting. */
    private final CompletableFuture<Void> left = new CompletableFuture<>();
    private final List<Consumer<String>> lostListeners = new CopyOnWriteArrayList<>();
    private final Set<Thread> guarded = ConcurrentHashMap.newKeySet();
    private boolean retired;
    /** Set once first in the queue (holder or leader), when its loss starts being watched. */
    private volatile boolean tenure;

    private Contender(RotaClient rota, String queue, Lease lease, long grantSentAt, Duration margin) {
        this.rota = rota;
        this.queue = queue;
        this.leaseId = lease.id();
        this.key = queue + Long.toHexString(lease.id());
        this.keepAlive = rota.leases().keepAlive(lease.id(),
                (id, why) -> lose("lease " + Long.toHexString(id) + " lost: " + why.getMessage()));
        this.tenureWatch = new Tenure(rota, key, keepAlive, grantSentAt, lease.ttl().toNanos(), margin.toNanos());
    }

    /**
     * Grants a lease, keeps it alive and puts the contender's key (once, even if retried).
     *
     * @param queue  the queue prefix, ending with '/'
     * @param value  the key's value
     * @param ttl    the lease TTL
     * @param margin the safety margin for a TTL (see {@link LockOptions#effectiveMargin})
     */
    static Contender enter(RotaClient rota, String queue, String value, Duration ttl,
                           Function<Duration, Duration> margin) {
        long sentAt = System.nanoTime();
        Lease lease = rota.leases().grant(ttl);
        Contender c = new Contender(rota, queue, lease, sentAt, margin.apply(lease.ttl()));
        try {
            TxnResult r = rota.kv().txn().ifCreateRevision(c.key, CompareOp.EQUAL, 0)
                    .then(Op.put(c.key, value, lease.id()))
                    .orElse(Op.get(c.key))
                    .commit();
            c.token = r.succeeded() ? ((PutResult) r.responses().get(0)).revision()
                    : ((GetResult) r.responses().get(0)).first().orElseThrow().createRevision();
            return c;
        } catch (RuntimeException e) {
            c.abandon();
            throw e;
        }
    }

    String key() {
        return key;
    }

    long leaseId() {
        return leaseId;
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
        return key.startsWith(queue) && LEASE_HEX.matcher(key.substring(queue.length())).matches();
    }

    /**
     * Waits until this contender is first in the queue, watching only its predecessor's key.
     *
     * @param deadline the {@link System#nanoTime} deadline
     * @param wakeups  counts the re-checks after a predecessor left (to show there is no herd)
     * @return true when first; false when the deadline passed
     * @throws LockLostException if the contender's key or lease is gone, or it left the queue meanwhile
     *                           (resign from another thread)
     * @throws RotaException     UNAVAILABLE if the client was closed meanwhile
     */
    boolean awaitFirst(long deadline, AtomicLong wakeups) throws InterruptedException {
        CompletableFuture<Void> clientClosed = rota.whenClosed();
        while (true) {
            if (lost.isDone()) {
                throw new LockLostException(key, lost.join());
            }
            if (left.isDone()) {
                throw new LockLostException(key, "it left the queue while waiting (resigned or given up)");
            }
            if (clientClosed.isDone()) {
                throw new RotaException(RotaException.Code.UNAVAILABLE, "the client was closed while " + key + " waited");
            }
            GetResult r = rota.kv().getPrefix(queue);
            List<KeyValue> queued = contenders(r, queue);
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
                throw new LockLostException(key, lost.getNow(reason));
            }
            if (mine == 0) {
                return true;
            }
            String predecessor = queued.get(mine - 1).keyString();
            CompletableFuture<Void> predecessorLeft = new CompletableFuture<>();
            // From the revision after the read: a delete between the read and the watch is replayed.
            try (Watch w = rota.watches().watch(predecessor, r.revision() + 1, new WatchListener() {
                @Override
                public void onEvent(WatchEvent event) {
                    if (event.type() == WatchEvent.Type.DELETE) {
                        predecessorLeft.complete(null);
                    }
                }

                @Override
                public void onError(RotaException error) {
                    predecessorLeft.complete(null);   // re-read the queue
                }
            })) {
                long remaining = deadline - System.nanoTime();
                if (remaining <= 0) {
                    return false;
                }
                CompletableFuture.anyOf(predecessorLeft, lost, left, clientClosed).get(remaining, TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                return false;
            } catch (ExecutionException e) {
                throw new IllegalStateException("unexpected failure while waiting", e.getCause());
            }
            wakeups.incrementAndGet();
        }
    }

    /**
     * Starts watching for the loss of the first place: the own key's deletion and the safe-until deadline.
     * The keep-alive's loss is watched from the start.
     */
    synchronized void watchTenure() {
        if (retired || lost.isDone()) {
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
        return tenureWatch.safeUntilNanos();
    }

    boolean hasTenure() {
        return tenure;
    }

    boolean isLost() {
        return lost.isDone();
    }

    /** Why the place was lost, or null. */
    String lostReason() {
        return lost.getNow(null);
    }

    /**
     * Tells {@code listener} once when the place is lost: on a thread of this contender's own, so a slow
     * listener delays neither the timer nor another lock's loss (now, on this thread, if it already is lost).
     */
    void onLost(Consumer<String> listener) {
        lostListeners.add(listener);
        if (lost.isDone() && lostListeners.remove(listener)) {
            listener.accept(lost.join());
        }
    }

    /** Marks the place lost: interrupts guarded tasks at once and tells the listeners, once, apart. */
    void lose(String reason) {
        synchronized (this) {
            if (retired || !lost.complete(reason)) {
                return;
            }
            tenureWatch.stop();
            for (Thread t : guarded) {
                t.interrupt();
            }
        }
        Timers.apart("rota-lost " + key, () -> {
            for (Consumer<String> l : lostListeners) {
                if (lostListeners.remove(l)) {
                    l.accept(reason);
                }
            }
        });
    }

    /** Registers the current thread to be interrupted on loss; false if already lost. */
    synchronized boolean guard(Thread t) {
        if (lost.isDone() || retired) {
            return false;
        }
        guarded.add(t);
        return true;
    }

    synchronized void unguard(Thread t) {
        guarded.remove(t);
    }

    /** A txn that applies only while this contender's key exists with its create_revision. */
    Txn guardedTxn() {
        return Fencing.guard(rota.kv().txn(), key, token);
    }

    /**
     * Leaves cleanly: deletes the own key (only if it is still this contender's, by create_revision) with
     * {@code alongside} in the same txn, then revokes the lease. The lost listeners are not told.
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
        keepAlive.close();
        // A clean-up must run even on an interrupted thread (a closing job): the SDK's blocking calls give up
        // at once when interrupted, and a key left behind would block the queue for a whole TTL.
        boolean interrupted = Thread.interrupted();
        try {
            List<Op> ops = new ArrayList<>();
            ops.add(Op.delete(key));
            ops.addAll(List.of(alongside));
            return !lost.isDone() && guardedTxn().then(ops.toArray(Op[]::new)).commit().succeeded();
        } finally {
            revokeQuietly();
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Leaves without the txn (a waiter that gave up, a failed entry): revokes the lease, deleting the key. */
    void abandon() {
        synchronized (this) {
            if (retired) {
                return;
            }
            retired = true;
            tenureWatch.stop();
            left.complete(null);
        }
        keepAlive.close();
        boolean interrupted = Thread.interrupted();   // see retire
        try {
            revokeQuietly();
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void revokeQuietly() {
        try {
            rota.leases().revoke(leaseId);
        } catch (RotaException e) {
            // Already gone (LEASE_NOT_FOUND) or the cluster is unreachable: it then expires after its TTL.
        }
    }
}
