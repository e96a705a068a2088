package io.rota.client.recipes;

import io.rota.client.Op;
import io.rota.client.Txn;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A held {@link Lock}. Close it (or {@link #release()}) to let the next waiter in; a lock whose holder
 * dies without releasing is freed when its lease expires.
 *
 * <p>Holding is never certain: the holder may pause (GC, SIGSTOP) past its lease. So send
 * {@link #fencingToken()} with every write to the protected resource and let it reject lower tokens
 * ({@link FenceGuard}, {@link JdbcFencing}, {@link #guardedTxn()}); and stop before {@link #safeUntilNanos()}
 * ({@link #runGuarded} does it for you).
 */
public final class LockHandle implements AutoCloseable {

    private final Lock lock;
    private final Contender contender;
    private final AtomicBoolean released = new AtomicBoolean();

    LockHandle(Lock lock, Contender contender) {
        this.lock = lock;
        this.contender = contender;
    }

    /**
     * The lock's name.
     *
     * @return the name given to {@link Lock#of}
     */
    public String name() {
        return lock.name();
    }

    /**
     * The holder's key, {@code <prefix>/<name>/<session-hex>-<seq-hex>}.
     *
     * @return the key
     */
    public String key() {
        return contender.key();
    }

    /**
     * The lease the key is attached to: the client's session lease of the lock's TTL, shared with its other
     * locks, elections and jobs of that TTL (revoking it loses all of them).
     *
     * @return the lease id
     */
    public long leaseId() {
        return contender.leaseId();
    }

    /**
     * The fencing token: the create_revision of the holder's key. Every later holder of this lock has a
     * strictly greater one (the store's revision only grows), so a resource that remembers the highest token
     * it saw can reject a stale holder's writes.
     *
     * @return the token
     */
    public long fencingToken() {
        return contender.token();
    }

    /**
     * Whether the lock can still be assumed held: not released, not reported lost, and safe-until not passed.
     *
     * @return true while held
     */
    public boolean isHeld() {
        return !contender.isLost() && !released.get() && System.nanoTime() - contender.safeUntilNanos() < 0;
    }

    /**
     * Until when nobody else can hold the lock, on the {@link System#nanoTime} clock: the send time of the
     * last keep-alive the cluster confirmed + TTL − the safety margin. The cluster restarted the lease's TTL
     * no earlier than that send, so its expiry — and the next holder — cannot come before (given the margin
     * covers clock-rate drift). Keep-alives every TTL/3 push it forward.
     *
     * @return the deadline in nanoTime units
     */
    public long safeUntilNanos() {
        return contender.safeUntilNanos();
    }

    /**
     * Time left until {@link #safeUntilNanos()}.
     *
     * @return the remaining time, zero if passed
     */
    public Duration remaining() {
        return Duration.ofNanos(Math.max(0, contender.safeUntilNanos() - System.nanoTime()));
    }

    /**
     * Registers a listener told once when the lock is lost: lease expired or revoked, keep-alives failing
     * past safe-until, or the key deleted. Not told after a release. Told at once (on this thread) if already
     * lost, else on a thread of this handle's own (see {@link LockListener}).
     *
     * @param listener the listener
     * @return this handle
     */
    public LockHandle onLost(LockListener listener) {
        contender.onLost(reason -> listener.onLost(this, reason));
        return this;
    }

    /**
     * Why the lock was lost.
     *
     * @return the reason, or null while not lost
     */
    public String lostReason() {
        return contender.lostReason();
    }

    /**
     * Runs {@code task} on the calling thread while the lock is held; if the lock is lost or safe-until
     * passes meanwhile, the thread is interrupted so the task can stop before another holder can exist.
     *
     * @param task the protected work; it should honour interruption
     * @param <T>  the result type
     * @return the task's result
     * @throws LockLostException if the lock was lost before or while the task ran (the task's own exception,
     *                           if it threw one, is attached as suppressed)
     * @throws Exception         what the task threw while the lock was held
     */
    public <T> T runGuarded(Callable<T> task) throws Exception {
        return contender.loss().runGuarded(task::call, this::isHeld, "released");
    }

    /**
     * The void form of {@link #runGuarded(Callable)}, for work that returns nothing and throws no checked
     * exception: {@code held.runGuarded(() -> mailer.send(batch, held.fencingToken()))}. Same guard: the
     * thread is interrupted when the lock is lost or safe-until passes.
     *
     * @param task the protected work; it should honour interruption
     * @throws LockLostException if the lock was lost before or while the task ran (the task's own exception,
     *                           if it threw one, is attached as suppressed)
     */
    public void runGuarded(Runnable task) {
        contender.loss().runGuarded(() -> {
            task.run();
            return null;
        }, this::isHeld, "released");
    }

    /**
     * A transaction that applies only while this handle still holds the lock: it compares the holder key's
     * create_revision with the fencing token. Add the writes with {@code then(...)}; a stale holder's commit
     * does not apply ({@code succeeded() == false}) however late it arrives.
     *
     * @return a transaction with the guard in place
     */
    public Txn guardedTxn() {
        return contender.guardedTxn();
    }

    /**
     * Releases the lock: deletes the own key only if it is still this holder's (compared by create_revision,
     * so a late release never removes another holder's key) and deletes the holder record of a lock-delay
     * (a later holder that finds none knows the lock was released, not expired), in one txn; the session lease
     * lives on, and no key of this lock is left behind. Idempotent.
     *
     * @return whether the key was still held and was deleted (false if it had already been lost)
     */
    public boolean release() {
        if (!released.compareAndSet(false, true)) {
            return false;
        }
        // A lock-delay's holder record goes with the key (a delete is never refused for space): a record a later
        // holder finds is then always one of a holder that did not release, and nothing is left behind (issue
        // 31). Without a lock-delay there is no record, and a user allowed only the queue can release.
        return lock.recordsHolder() ? contender.retire(Op.delete(lock.holderKey())) : contender.retire();
    }

    /** {@link #release()}. */
    @Override
    public void close() {
        release();
    }

    /** For humans: name, key, token and state. */
    @Override
    public String toString() {
        return "LockHandle[" + name() + ", key=" + key() + ", token=" + fencingToken()
                + (isHeld() ? ", held" : ", not held") + "]";
    }
}
