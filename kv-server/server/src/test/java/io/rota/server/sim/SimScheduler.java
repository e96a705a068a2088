package io.rota.server.sim;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.Delayed;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.RunnableScheduledFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * One member's executor and timers inside the simulation: a {@link ScheduledExecutorService} whose
 * delays are in the member's own monotonic time ({@link SimClock}) and whose tasks run as events of the
 * {@link SimLoop}. The driver, the lease keeper, the router and the cluster view all run on it, one task
 * at a time, exactly as on their single real thread. A paused member (SIGSTOP, a long GC) runs nothing
 * until resumed; a crashed member's scheduler is shut down and its queued tasks vanish.
 */
final class SimScheduler extends AbstractExecutorService implements ScheduledExecutorService {

    private final SimLoop loop;
    private final SimClock clock;
    private boolean shutdown;
    private long pausedUntilTrue;
    /** Tasks that came due while paused, run in order on resume. */
    private final List<Runnable> held = new ArrayList<>();

    SimScheduler(SimLoop loop, SimClock clock) {
        this.loop = loop;
        this.clock = clock;
    }

    /** Run nothing until true time {@code untilTrue}; then run what came due, in order. */
    void pauseUntil(long untilTrue) {
        pausedUntilTrue = Math.max(pausedUntilTrue, untilTrue);
        loop.at(pausedUntilTrue, this::resume);
    }

    boolean paused() {
        return loop.now() < pausedUntilTrue;
    }

    /** Paused now, or resumed less than {@code trueNanos} ago (its timers are still catching up). */
    boolean recentlyPaused(long trueNanos) {
        return loop.now() < pausedUntilTrue + trueNanos;
    }

    private void resume() {
        if (paused() || shutdown) {
            return;
        }
        List<Runnable> due = new ArrayList<>(held);
        held.clear();
        due.forEach(Runnable::run);
    }

    private void run(Runnable task) {
        if (shutdown) {
            return;
        }
        if (paused()) {
            held.add(task);
            return;
        }
        task.run();
    }

    @Override
    public void execute(Runnable command) {
        if (!shutdown) {
            loop.after(0, () -> run(command));
        }
    }

    @Override
    public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
        return schedule(Executors.callable(command), delay, unit);
    }

    @Override
    public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
        Task<V> t = new Task<>(callable, 0, false);
        t.arm(clock.nanoTime() + unit.toNanos(Math.max(0, delay)));
        return t;
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
        Task<Object> t = new Task<>(Executors.callable(command), unit.toNanos(period), true);
        t.arm(clock.nanoTime() + unit.toNanos(Math.max(0, initialDelay)));
        return t;
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay, TimeUnit unit) {
        Task<Object> t = new Task<>(Executors.callable(command), unit.toNanos(delay), false);
        t.arm(clock.nanoTime() + unit.toNanos(Math.max(0, initialDelay)));
        return t;
    }

    @Override
    public void shutdown() {
        shutdown = true;
        held.clear();
    }

    @Override
    public List<Runnable> shutdownNow() {
        shutdown();
        return List.of();
    }

    @Override
    public boolean isShutdown() {
        return shutdown;
    }

    @Override
    public boolean isTerminated() {
        return shutdown;
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) {
        return shutdown;
    }

    /** A one-shot or periodic task; periods and delays are member-local nanoseconds. */
    private final class Task<V> implements RunnableScheduledFuture<V> {
        private final Callable<V> callable;
        private final long period;
        private final boolean fixedRate;
        private long dueLocal;
        private SimLoop.Event event;
        private boolean cancelled;
        private boolean done;
        private V result;
        private Throwable failure;

        Task(Callable<V> callable, long period, boolean fixedRate) {
            this.callable = callable;
            this.period = period;
            this.fixedRate = fixedRate;
        }

        void arm(long dueLocal) {
            this.dueLocal = dueLocal;
            event = loop.at(clock.trueTimeOf(dueLocal), () -> SimScheduler.this.run(this));
        }

        @Override
        public void run() {
            if (cancelled || done) {
                return;
            }
            try {
                V v = callable.call();
                if (period == 0) {
                    result = v;
                    done = true;
                    return;
                }
            } catch (Exception e) {
                failure = e;
                done = true;
                return;
            }
            arm(fixedRate ? dueLocal + period : clock.nanoTime() + period);
        }

        @Override
        public boolean isPeriodic() {
            return period != 0;
        }

        @Override
        public long getDelay(TimeUnit unit) {
            return unit.convert(dueLocal - clock.nanoTime(), TimeUnit.NANOSECONDS);
        }

        @Override
        public int compareTo(Delayed o) {
            return Long.compare(getDelay(TimeUnit.NANOSECONDS), o.getDelay(TimeUnit.NANOSECONDS));
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            if (done) {
                return false;
            }
            cancelled = true;
            if (event != null) {
                event.cancelled = true;
            }
            return true;
        }

        @Override
        public boolean isCancelled() {
            return cancelled;
        }

        @Override
        public boolean isDone() {
            return done || cancelled;
        }

        @Override
        public V get() throws ExecutionException {
            if (!done) {
                throw new IllegalStateException("the simulation cannot block; poll isDone()");
            }
            if (failure != null) {
                throw new ExecutionException(failure);
            }
            return result;
        }

        @Override
        public V get(long timeout, TimeUnit unit) throws ExecutionException {
            return get();
        }
    }
}
