package io.rota.client.recipes;

import io.rota.client.KeyValue;
import io.rota.client.Op;
import io.rota.client.PutResult;
import io.rota.client.RotaClient;
import io.rota.client.TxnResult;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A fair (FIFO) distributed lock with fencing tokens. Each contender puts a key
 * {@code <prefix>/<name>/<session-hex>-<seq-hex>} attached to its client's kept-alive session lease; the key
 * with the lowest create_revision holds the lock; each waiter watches only its predecessor's key (no herd).
 * A cycle is two Raft writes: the join txn (which, on an empty queue, is the whole acquisition) and the
 * compare-and-delete release. See docs/locks.md for the failure cases and how each is closed.
 *
 * <pre>{@code
 * Lock lock = Lock.of(rota, "daily-email");
 * try (LockHandle held = lock.acquire(Duration.ofSeconds(30))) {
 *     held.runGuarded(() -> mailer.send(batch, held.fencingToken()));
 * }
 * }</pre>
 *
 * <p>Thread-safe; one {@code Lock} may be acquired by several threads, each getting its own place in the
 * queue (it is not re-entrant).
 */
public final class Lock {

    private final RotaClient rota;
    private final String name;
    private final LockOptions options;
    private final String queue;
    private final AtomicLong wakeups = new AtomicLong();
    private final AtomicLong queueReads = new AtomicLong();

    private Lock(RotaClient rota, String name, LockOptions options) {
        this.rota = Objects.requireNonNull(rota, "rota");
        this.options = Objects.requireNonNull(options, "options");
        if (name == null || name.isEmpty()) {
            throw new IllegalArgumentException("a lock needs a non-empty name");
        }
        this.name = name;
        this.queue = options.prefix() + "/" + name + "/";
    }

    /**
     * A lock with the default options (10 s lease, no lock-delay).
     *
     * @param rota the client
     * @param name the lock's name
     * @return the lock (nothing is sent until acquire)
     */
    public static Lock of(RotaClient rota, String name) {
        return of(rota, name, LockOptions.defaults());
    }

    /**
     * A lock with the given options.
     *
     * @param rota    the client
     * @param name    the lock's name
     * @param options the options
     * @return the lock (nothing is sent until acquire)
     */
    public static Lock of(RotaClient rota, String name, LockOptions options) {
        return new Lock(rota, name, options);
    }

    /**
     * The lock's name.
     *
     * @return the name
     */
    public String name() {
        return name;
    }

    /**
     * The lock's options.
     *
     * @return the options
     */
    public LockOptions options() {
        return options;
    }

    /**
     * Waits for the lock: joins the queue and waits until every earlier contender left, then (after an
     * expired holder) the lock-delay.
     *
     * @param timeout how long to wait at most
     * @return the held lock
     * @throws LockTimeoutException if not acquired in time (the waiter's key is removed)
     * @throws LockLostException    if the waiter's own lease was lost while waiting
     * @throws InterruptedException if interrupted while waiting (the waiter's key is removed)
     * @throws io.rota.client.RotaException if the cluster could not be reached
     */
    public LockHandle acquire(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        return acquireBy(deadline).orElseThrow(() -> new LockTimeoutException(name, timeout));
    }

    /**
     * Takes the lock only if nobody holds it or waits for it now (a lock-delay after an expired holder is
     * still waited).
     *
     * @return the held lock, or empty if another contender is ahead (nothing is left behind)
     * @throws InterruptedException if interrupted during a lock-delay
     */
    public Optional<LockHandle> tryAcquire() throws InterruptedException {
        return acquireBy(System.nanoTime());
    }

    private Optional<LockHandle> acquireBy(long deadline) throws InterruptedException {
        // One txn joins the queue; if it was empty and the lock has a lock-delay, the same txn records us as
        // holder (and returns the last record). Without a lock-delay nothing needs the record: none is written,
        // so no key outlives the lock's use (issue 31).
        boolean recorded = recordsHolder();
        Contender c = Contender.enter(rota, queue, "", options.ttl(), options::effectiveMargin,
                key -> recorded ? List.of(Op.put(holderKey(), holderRecord(0, "held", key))) : List.of());
        boolean held = false;
        try {
            if (!c.awaitFirst(deadline, wakeups, queueReads)) {
                return Optional.empty();
            }
            if (c.firstAtOnce()) {
                if (recorded) {
                    waitLockDelay(c, ((PutResult) c.ifFirstResults().get(0)).prev());
                }
            } else if (recorded) {
                // Handed over: with a lock-delay, record who holds it (guarded: only while our key is still
                // there), learning in the same write whether the last holder released cleanly (design.md L4).
                TxnResult r = c.guardedTxn()
                        .then(Op.put(holderKey(), holderRecord(c.token(), "held", c.key()))).commit();
                if (!r.succeeded()) {
                    throw new LockLostException(c.key(), "the key vanished before the lock was taken");
                }
                waitLockDelay(c, ((PutResult) r.responses().get(0)).prev());
            }
            c.watchTenure();
            held = true;
            return Optional.of(new LockHandle(this, c));
        } finally {
            if (!held) {
                c.abandon();
            }
        }
    }

    /** After a holder that did not release cleanly (the last record still says held), wait the lock-delay. */
    private void waitLockDelay(Contender c, Optional<KeyValue> previous) throws InterruptedException {
        if (options.lockDelay().isZero() || previous.isEmpty()) {
            return;
        }
        Map<String, String> record = Fields.decode(previous.get().valueString());
        boolean mine = c.key().equals(record.get("key")) || String.valueOf(c.token()).equals(record.get("token"));
        if ("held".equals(record.get("state")) && !mine) {
            TimeUnit.NANOSECONDS.sleep(options.lockDelay().toNanos());
        }
    }

    /**
     * The current holder's key, if any: the queue's first contender.
     *
     * @return the holder's key (its create_revision is the holder's fencing token), or empty if free
     */
    public Optional<KeyValue> holder() {
        List<KeyValue> queued = Contender.contenders(rota.kv().getPrefix(queue), queue);
        return queued.isEmpty() ? Optional.empty() : Optional.of(queued.get(0));
    }

    /**
     * How many times waiters of this lock object woke up to re-check the queue after their predecessor left.
     * With predecessor-only watching this is about one per release, however many wait (no herd).
     *
     * @return the count since creation
     */
    public long wakeups() {
        return wakeups.get();
    }

    /**
     * How many times waiters of this lock object read the queue again after a wake-up: zero when each
     * waiter's predecessor was the holder (the deletion event decides alone); one per wake-up when the
     * predecessor was itself waiting (it may have given up with others still ahead). See docs/locks.md.
     *
     * @return the count since creation
     */
    public long queueReads() {
        return queueReads.get();
    }

    /** Whether holders of this lock record themselves at {@link #holderKey()}: only with a lock-delay. */
    boolean recordsHolder() {
        return !options.lockDelay().isZero();
    }

    /**
     * The record of the current holder, written only by locks with a lock-delay and deleted by every clean
     * release: {@code <prefix>.holder/<name>}, outside every lock's queue. It outlives its holder only when that
     * holder expired — exactly when the next holder must find it and wait.
     */
    String holderKey() {
        return options.prefix() + ".holder/" + name;
    }

    /**
     * The holder record's value. Written in the join txn the token is not known yet (it is that txn's
     * revision, so the record's mod_revision): {@code token} 0 leaves it out.
     */
    static String holderRecord(long token, String state, String key) {
        Map<String, String> fields = new LinkedHashMap<>();
        if (token > 0) {
            fields.put("token", Long.toString(token));
        }
        fields.put("state", state);
        fields.put("key", key);
        return Fields.encode(fields);
    }

    /** For humans: the lock's name and queue prefix. */
    @Override
    public String toString() {
        return "Lock[" + name + " at " + queue + "]";
    }
}
