package io.rota.client.recipes;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The recipes' one timer thread (daemon): safe-until deadlines. Its tasks are short and never block; there
 * is at most one pending task per held lock or elected leader, so the queue is bounded by those.
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

    /** Runs {@code task} at {@code atNanos} on the {@link System#nanoTime} clock (now if already past). */
    static ScheduledFuture<?> at(long atNanos, Runnable task) {
        return TIMER.schedule(task, Math.max(0, atNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
    }
}
