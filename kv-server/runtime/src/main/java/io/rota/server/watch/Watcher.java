package io.rota.server.watch;

import io.rota.proto.Event;
import io.rota.proto.WatchCreateRequest;
import io.rota.proto.WatchResponse;
import io.rota.server.kv.KeyRange;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongFunction;

/**
 * One watch: which keys, from which revision, and the responses waiting to be written to its
 * connection. The driver thread fills the queue ({@link #offer}); the connection's event loop empties it
 * ({@link #poll}). The queue is bounded in events: a watcher that falls that far behind is canceled with
 * a reason (it can re-watch from the revision named there), so it never holds up the driver or others.
 */
final class Watcher {

    final long id;
    final long callId;
    final boolean progressNotify;
    private final KeyRange range;
    private final boolean prevKv;
    private final boolean noPut;
    private final boolean noDelete;
    private final int maxQueuedEvents;
    /** Who created it (null: no user, auth was off or the caller anonymous) and under which auth state. */
    final WatchAuth auth;

    /** The next revision this watcher has not seen yet. Written on the driver thread only. */
    volatile long next;

    // Guarded by this.
    private final ArrayDeque<WatchResponse> queue = new ArrayDeque<>();
    private int queuedEvents;
    private boolean canceled;
    /** {@link #canceled}, readable without the lock by the driver's per-write loop. */
    private volatile boolean ended;

    Watcher(long id, long callId, WatchCreateRequest req, long start, int maxQueuedEvents, WatchAuth auth) {
        this.auth = auth;
        this.id = id;
        this.callId = callId;
        this.range = new KeyRange(req.getKey(), req.getRangeEnd());
        this.prevKv = req.getPrevKv();
        this.progressNotify = req.getProgressNotify();
        this.noPut = req.getFiltersList().contains(WatchCreateRequest.FilterType.NOPUT);
        this.noDelete = req.getFiltersList().contains(WatchCreateRequest.FilterType.NODELETE);
        this.next = start;
        this.maxQueuedEvents = maxQueuedEvents;
    }

    /** What {@link #offer} did with a revision. */
    enum Offered {
        /** Nothing of the revision is for this watcher (or it had it already): nothing to write. */
        NOTHING,
        /** A response was queued: its connection has something to write. */
        QUEUED,
        /** The watcher has ended (canceled, or it overflowed now): forget it. */
        ENDED
    }

    /**
     * The events of one revision (driver thread). Revisions below {@link #next} were already delivered
     * (from the history), so nothing arrives twice. Called for every live watcher on every write, so the
     * common case — no event in range — allocates nothing: the response is built only for a match.
     *
     * @param template the response header for the revision, made only when needed
     */
    Offered offer(long revision, List<Event> events, LongFunction<WatchResponse.Builder> template) {
        if (ended) {
            return Offered.ENDED;
        }
        if (revision < next) {
            return Offered.NOTHING;
        }
        next = revision + 1;
        List<Event> matching = null;
        for (int i = 0, n = events.size(); i < n; i++) {
            Event e = events.get(i);
            boolean put = e.getType() == Event.EventType.PUT;
            if (range.contains(e.getKv().getKey()) && !(put && noPut) && !(!put && noDelete)) {
                if (matching == null) {
                    matching = new ArrayList<>(n - i);
                }
                matching.add(prevKv || !e.hasPrevKv() ? e : e.toBuilder().clearPrevKv().build());
            }
        }
        if (matching == null) {
            return Offered.NOTHING;
        }
        return enqueue(template.apply(revision).setWatchId(id).addAllEvents(matching).build(), matching.size())
                ? Offered.QUEUED : Offered.ENDED;
    }

    /** {@link #offer(long, List, LongFunction)} with a ready template (the catch-up's): false if the watcher ended. */
    boolean offer(long revision, List<Event> events, WatchResponse.Builder template) {
        return offer(revision, events, r -> template) != Offered.ENDED;
    }

    /** Queue a response; on overflow replace everything queued by a cancel naming where to resume. */
    synchronized boolean enqueue(WatchResponse response, int events) {
        if (canceled) {
            return false;
        }
        if (queuedEvents + events > maxQueuedEvents) {
            long resumeFrom = response.getHeader().getRevision();
            for (WatchResponse queued : queue) {
                if (queued.getEventsCount() > 0) {
                    resumeFrom = queued.getHeader().getRevision();
                    break;
                }
            }
            queue.clear();
            queuedEvents = 0;
            cancel(WatchResponse.newBuilder().setHeader(response.getHeader()).setWatchId(id).setCanceled(true)
                    .setCancelCode(WatchResponse.CancelCode.FELL_BEHIND).setResumeRevision(resumeFrom)
                    .setCancelReason("watcher fell behind: more than " + maxQueuedEvents
                            + " events waiting to be sent; re-watch from revision " + resumeFrom).build());
            return false;
        }
        queue.add(response);
        queuedEvents += events;
        return true;
    }

    /** End the watch with {@code last} as its final response (unless it already ended). */
    synchronized void cancel(WatchResponse last) {
        if (!canceled) {
            canceled = true;
            ended = true;
            queue.add(last);
        }
    }

    synchronized boolean isCanceled() {
        return canceled;
    }

    synchronized boolean isIdle() {
        return queue.isEmpty();
    }

    synchronized WatchResponse poll() {
        WatchResponse r = queue.poll();
        if (r != null) {
            queuedEvents -= r.getEventsCount();
        }
        return r;
    }
}
