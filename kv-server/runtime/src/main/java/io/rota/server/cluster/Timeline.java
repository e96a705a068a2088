package io.rota.server.cluster;

import io.rota.raft.core.Role;
import io.rota.raft.node.Clock;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * What this member saw happen, newest last, for the dashboard's timeline of elections and faults: its
 * role, term, leader and vote as they changed (told by the driver), its own start, and lab actions. A
 * bounded ring: the oldest event is dropped once it holds {@code capacity}. Times are wall-clock
 * milliseconds, for people to read only. Thread-safe.
 */
public final class Timeline {

    /**
     * One event. {@code kind} is "role" (role, term, leader, vote as they are now), "start" or "lab"
     * ({@code text} says what); {@code seq} grows by one per event of this member, so a reader can merge
     * overlapping reads without duplicates.
     */
    public record Event(long seq, long wallMs, String kind, Role role, long term, long leader, long vote,
                        String text) {
    }

    private final int capacity;
    private final Clock clock;
    private final ArrayDeque<Event> events;
    private long nextSeq = 1;

    public Timeline(int capacity, Clock clock) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be positive, got " + capacity);
        }
        this.capacity = capacity;
        this.clock = clock;
        this.events = new ArrayDeque<>(capacity);
    }

    /** The driver saw its role, term, leader or vote change (see {@code DriverMetrics#roleChanged}). */
    public void role(Role role, long term, long leader, long vote) {
        add("role", role, term, leader, vote, "");
    }

    /** Something else worth a line: "start", "lab". */
    public void note(String kind, long term, String text) {
        add(kind, null, term, 0, 0, text);
    }

    private synchronized void add(String kind, Role role, long term, long leader, long vote, String text) {
        if (events.size() == capacity) {
            events.removeFirst();
        }
        events.addLast(new Event(nextSeq++, clock.wallMillis(), kind, role, term, leader, vote, text));
    }

    /** The newest {@code max} events, oldest first. */
    public synchronized List<Event> last(int max) {
        List<Event> all = new ArrayList<>(events);
        return all.subList(Math.max(0, all.size() - max), all.size());
    }
}
