package io.rota.client.recipes;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The recipes' one timer thread (daemon): safe-until deadlines. Its tasks are short and never block; there
 * is at most one pending task per held lock, elected leader or claimed once-record, so the queue is bounded
 * by those. Application code (listeners) never runs on it: see {@link #apart}.
 */
final class Timers {

    private static final ScheduledThreadPoolExecutor TIMER = create();

    private Timers() {
    }

    private static ScheduledThreadPoolExecutor create() {
        ScheduledThreadPoolExecutor t = new ScheduledThreadPoolExecutor(1, r -> {
            Thread thread = new Thread(r, "rota-recipes-timer");
            thread.setDaemon(true);
            return thread;
        });
        t.setRemoveOnCancelPolicy(true);
        return t;
    }

    /**
     * Runs {@code task} on a new daemon thread of its own: for application listeners, which may be slow, and
     * for a resumption that blocks on the cluster. Each caller starts at most one at a time (a handle's loss
     * happens once; an observer resumes once per error), so their number is bounded by the live handles.
     */
    static void apart(String name, Runnable task) {
        Thread thread = new Thread(task, name);
        thread.setDaemon(true);
        thread.start();
    }

    /** Runs {@code task} at {@code atNanos} on the {@link System#nanoTime} clock (now if already past). */
    static ScheduledFuture<?> at(long atNanos, Runnable task) {
        return TIMER.schedule(task, Math.max(0, atNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
    }
}
