package io.rota.client.recipes;

import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * The loss of a held place: a lock's or leader's key ({@link Contender}) or a once-record's claim
 * ({@link OnceRecord}). Declared once; from then on safe-until ends where the loss was learnt (lost means lost
 * at once, issue 31: a deleted key or an ended lease may already have a next holder), the tasks run under
 * {@link #runGuarded} are interrupted at once, and the listeners are told once, on a thread of their own.
 * The owner decides when a loss no longer counts (after a clean release, a completed claim) and does not
 * declare it then.
 */
final class Loss {

    /** A task that may throw {@code E}: both forms of a guarded run share one guard without wrapping exceptions. */
    interface Body<T, E extends Exception> {
        T run() throws E;
    }

    private final String key;
    private final CompletableFuture<String> lost = new CompletableFuture<>();
    /** When {@link #lost} completed, on {@link System#nanoTime}: where safe-until ends once the place is lost. */
    private volatile long lostAtNanos;
    private final List<Consumer<String>> listeners = new CopyOnWriteArrayList<>();
    /** The threads running a guarded task: interrupted when the loss is declared. */
    private final Set<Thread> guarded = ConcurrentHashMap.newKeySet();

    /** @param key the held key, named in reasons and in the listeners' thread name */
    Loss(String key) {
        this.key = key;
    }

    /**
     * Declares the loss, unless it already was: interrupts the guarded tasks at once. The caller then
     * {@link #tell}s the listeners (outside any monitor of its own).
     *
     * @return whether this call declared it
     */
    synchronized boolean declare(String reason) {
        if (lost.isDone()) {
            return false;
        }
        lostAtNanos = System.nanoTime();   // before the completion that publishes it (cut reads both)
        lost.complete(reason);
        for (Thread t : guarded) {
            t.interrupt();
        }
        return true;
    }

    /** Tells every listener the reason, once, on a thread of their own: a slow listener delays no other loss. */
    void tell(String reason) {
        Timers.apart("rota-lost " + key, () -> {
            for (Consumer<String> l : listeners) {
                if (listeners.remove(l)) {
                    l.accept(reason);
                }
            }
        });
    }

    boolean isLost() {
        return lost.isDone();
    }

    /** Why it was lost, or null. */
    String reason() {
        return lost.getNow(null);
    }

    /** Completed with the reason when the loss is declared. */
    CompletableFuture<String> future() {
        return lost;
    }

    /** {@code safeUntil} cut to the moment the loss was learnt, if it was learnt earlier. */
    long cut(long safeUntil) {
        return lost.isDone() && lostAtNanos - safeUntil < 0 ? lostAtNanos : safeUntil;
    }

    /** Tells {@code listener} once when the loss is declared (now, on this thread, if it already was). */
    void onLost(Consumer<String> listener) {
        listeners.add(listener);
        if (lost.isDone() && listeners.remove(listener)) {
            listener.accept(lost.join());
        }
    }

    /**
     * Runs {@code task} on the calling thread, interrupted at once if the loss is declared meanwhile (the
     * owner's safe-until timer declares it when safe-until passes).
     *
     * @param held    whether the place may be assumed held now (checked once the thread is guarded)
     * @param notHeld the reason given when it may not and no loss was declared (released, completed)
     * @throws LockLostException if the place was lost before or while the task ran (the task's own exception,
     *                           if it threw one, is attached as suppressed)
     */
    <T, E extends Exception> T runGuarded(Body<T, E> task, BooleanSupplier held, String notHeld) throws E {
        Thread me = Thread.currentThread();
        if (!guard(me) || !held.getAsBoolean()) {
            guarded.remove(me);
            throw new LockLostException(key, lost.isDone() ? lost.join() : notHeld);
        }
        try {
            T result = task.run();
            if (lost.isDone()) {
                throw new LockLostException(key, lost.join());
            }
            return result;
        } catch (Exception e) {
            if (lost.isDone()) {
                LockLostException exception = new LockLostException(key, lost.join());
                exception.addSuppressed(e);
                throw exception;
            }
            throw e;
        } finally {
            guarded.remove(me);
            if (lost.isDone()) {
                Thread.interrupted();   // our interrupt, delivered as the LockLostException instead
            }
        }
    }

    private synchronized boolean guard(Thread t) {
        if (lost.isDone()) {
            return false;
        }
        guarded.add(t);
        return true;
    }
}
