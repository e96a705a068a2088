package io.rota.server.sim;

import java.util.PriorityQueue;

/**
 * The simulation's one thread of time: a queue of events ordered by true (global) time in nanoseconds,
 * ties broken by the order they were queued. Nothing in a simulated run reads a real clock or starts a
 * thread; every member's scheduler and clock is a view of this loop, so one seed replays one run.
 */
final class SimLoop {

    /** An event at a true time; {@code seq} orders events queued for the same instant. */
    static final class Event implements Comparable<Event> {
        final long at;
        final long seq;
        final Runnable action;
        boolean cancelled;

        Event(long at, long seq, Runnable action) {
            this.at = at;
            this.seq = seq;
            this.action = action;
        }

        @Override
        public int compareTo(Event o) {
            int c = Long.compare(at, o.at);
            return c != 0 ? c : Long.compare(seq, o.seq);
        }
    }

    private final PriorityQueue<Event> queue = new PriorityQueue<>();
    private long now;
    private long seq;
    private long processed;

    /** True time now, in nanoseconds since the run began. */
    long now() {
        return now;
    }

    long processed() {
        return processed;
    }

    Event at(long trueNanos, Runnable action) {
        Event e = new Event(Math.max(trueNanos, now), seq++, action);
        queue.add(e);
        return e;
    }

    Event after(long delayNanos, Runnable action) {
        return at(now + Math.max(0, delayNanos), action);
    }

    /** Run the next event; false if none is queued before {@code until}. */
    boolean step(long until) {
        Event e;
        do {
            e = queue.peek();
            if (e == null || e.at > until) {
                now = Math.max(now, until);
                return false;
            }
            queue.poll();
        } while (e.cancelled);
        now = e.at;
        processed++;
        e.action.run();
        return true;
    }
}
