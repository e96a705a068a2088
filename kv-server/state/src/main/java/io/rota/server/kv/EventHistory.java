package io.rota.server.kv;

import io.rota.proto.Event;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;

/**
 * The last events of the store, bounded, so a watcher can resume from a start revision and a range can
 * read at a recent past revision (etcd's MVCC history, kept only for a window).
 *
 * <p>Invariant: every event of every revision after {@link #compactRevision()} is retained. Eviction
 * therefore drops whole revisions, oldest first, and moves the compact revision up to the dropped one.
 */
public final class EventHistory {

    private final int maxEvents;
    private final ArrayDeque<Event> events = new ArrayDeque<>();
    private long compactRevision;
    /** Key and value bytes of the retained events, for the space quota (see {@link KvStore#accountedBytes}). */
    private long bytes;

    EventHistory(int maxEvents, long compactRevision) {
        this.maxEvents = maxEvents;
        this.compactRevision = compactRevision;
    }

    static long revisionOf(Event e) {
        return e.getKv().getModRevision();
    }

    void append(List<Event> revisionEvents) {
        events.addAll(revisionEvents);
        revisionEvents.forEach(e -> bytes += bytes(e));
        while (events.size() > maxEvents) {
            dropThrough(revisionOf(events.peekFirst()));
        }
    }

    /**
     * Explicit compaction (etcd's Compact): forget every event at or below {@code revision}, which becomes the
     * compact revision. The caller checked that it is above the current compact revision.
     */
    void compact(long revision) {
        dropThrough(revision);
    }

    private void dropThrough(long revision) {
        while (!events.isEmpty() && revisionOf(events.peekFirst()) <= revision) {
            bytes -= bytes(events.pollFirst());
        }
        compactRevision = Math.max(compactRevision, revision);
    }

    private static long bytes(Event e) {
        return KvStore.bytes(e.getKv()) + (e.hasPrevKv() ? KvStore.bytes(e.getPrevKv()) : 0);
    }

    /** Key and value bytes of the retained events, current and previous values both. */
    long bytes() {
        return bytes;
    }

    public long compactRevision() {
        return compactRevision;
    }

    /** The retained events with revision &ge; {@code startRevision}, or COMPACTED if some are gone. */
    public HistoryRead read(long startRevision) {
        if (startRevision <= compactRevision) {
            return new HistoryRead(true, compactRevision, List.of());
        }
        // From the newest back to the start: a watch usually starts at or near the head, and the history
        // holds up to maxEvents (10,000 by default) — a scan from the oldest cost every new watch that much.
        ArrayList<Event> out = new ArrayList<>();
        for (Iterator<Event> it = events.descendingIterator(); it.hasNext(); ) {
            Event e = it.next();
            if (revisionOf(e) < startRevision) {
                break;
            }
            out.add(e);
        }
        Collections.reverse(out);
        return new HistoryRead(false, compactRevision, List.copyOf(out));
    }

    /** Newest first: what a past-revision read undoes. */
    Iterator<Event> newestFirst() {
        return events.descendingIterator();
    }

    /** Oldest first, for snapshots. */
    List<Event> all() {
        return List.copyOf(events);
    }

    void reset(long compactRevision, List<Event> retained) {
        this.compactRevision = compactRevision;
        events.clear();
        events.addAll(retained);
        bytes = 0;
        retained.forEach(e -> bytes += bytes(e));
    }
}
