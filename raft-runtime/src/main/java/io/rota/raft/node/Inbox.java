package io.rota.raft.node;

import java.util.Collection;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * The driver's inbox: bounded, many producers (Netty event loops, callers, the ticker), one consumer (the
 * driver thread). It replaces an {@code ArrayBlockingQueue}, whose single lock every producer and the driver
 * took for every message: the event loops handing over requests and acknowledgements collided on it with
 * each other and with the driver, and the losers, and the driver re-taking it after being signalled, each
 * paid a futex system call (docs/performance.md, "Where a write's time and CPU go"). Here an offer is a
 * lock-free append, and only an offer that finds the driver parked wakes it — one unpark, the one wake-up a
 * hand-off must cost.
 *
 * <p>No wake-up is lost: the consumer publishes itself in {@link #waiter} before its last look at the queue,
 * and a producer reads {@link #waiter} after its append; both are volatile accesses, so either the consumer
 * sees the item or the producer sees the consumer and unparks it (an unpark before the park is kept as a
 * permit).
 *
 * @param <T> what is queued
 */
final class Inbox<T> {

    private final Queue<T> queue = new ConcurrentLinkedQueue<>();
    /** Items queued; may briefly exceed the items in {@link #queue} by offers that are about to back out. */
    private final AtomicInteger size = new AtomicInteger();
    private final int capacity;
    /** The consumer while it waits (or is about to), else null: producers unpark only a waiting consumer. */
    private volatile Thread waiter;

    Inbox(int capacity) {
        if (capacity <= 0) {
            throw new IllegalArgumentException("capacity must be positive, got " + capacity);
        }
        this.capacity = capacity;
    }

    /** Appends {@code item} unless {@code capacity} items are queued; wakes the consumer if it waits. Never blocks. */
    boolean offer(T item) {
        if (size.incrementAndGet() > capacity) {
            size.decrementAndGet();
            return false;
        }
        queue.add(item);
        Thread w = waiter;
        if (w != null) {
            LockSupport.unpark(w);
        }
        return true;
    }

    /** The oldest item, or null if none. Consumer only. */
    T poll() {
        T item = queue.poll();
        if (item != null) {
            size.decrementAndGet();
        }
        return item;
    }

    /**
     * The oldest item, waiting up to {@code timeout} for one; null if none came. Consumer only.
     *
     * @throws InterruptedException if the consumer is interrupted while waiting
     */
    T poll(long timeout, TimeUnit unit) throws InterruptedException {
        T item = poll();
        if (item != null) {
            return item;
        }
        long deadline = System.nanoTime() + unit.toNanos(timeout);
        waiter = Thread.currentThread();
        try {
            while ((item = poll()) == null) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return null;
                }
                LockSupport.parkNanos(this, left);
                if (Thread.interrupted()) {
                    throw new InterruptedException();
                }
            }
            return item;
        } finally {
            waiter = null;
        }
    }

    /** Moves up to {@code max} of the oldest items to {@code into}; returns how many. Consumer only. */
    int drainTo(Collection<? super T> into, int max) {
        int moved = 0;
        for (T item; moved < max && (item = poll()) != null; moved++) {
            into.add(item);
        }
        return moved;
    }

    boolean isEmpty() {
        return queue.isEmpty();
    }

    /** Items queued now (a moment's view, for sizing a batch). */
    int size() {
        return Math.max(0, size.get());
    }
}
