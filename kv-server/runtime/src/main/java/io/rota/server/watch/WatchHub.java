package io.rota.server.watch;

import io.netty.channel.Channel;
import io.rota.proto.Event;
import io.rota.proto.ResponseHeader;
import io.rota.proto.WatchResponse;
import io.rota.raft.node.RaftDriver;
import io.rota.server.auth.AuthState;
import io.rota.server.kv.CoordinationStateMachine;
import io.rota.server.kv.HistoryRead;
import io.rota.server.kv.StoreListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongFunction;
import java.util.function.LongSupplier;

/**
 * Feeds every watcher of every connection from the state machine's event stream (etcd's watchable
 * store). Ordering: registration, catch-up from the bounded history and live events all happen on the
 * driver thread, so a watcher sees each revision once, in order, with no gap between history and live
 * events. Handing events to a watcher only appends to its bounded queue; its connection's event loop
 * writes them. A start revision older than the history gets a cancel with COMPACTED's compact_revision.
 */
public final class WatchHub implements StoreListener, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(WatchHub.class);

    private final long memberId;
    private final LongSupplier term;
    private final int maxQueuedEvents;
    private final int maxWatchersPerStream;
    private final Set<Watcher> live = ConcurrentHashMap.newKeySet();
    private final Map<Watcher, WatchStream> streams = new ConcurrentHashMap<>();
    private final LongFunction<WatchResponse.Builder> responseAt = this::response;
    private RaftDriver<?> driver;
    private CoordinationStateMachine stateMachine;
    private ScheduledFuture<?> progressTask;

    /**
     * @param maxQueuedEvents      events a watcher may have waiting before it is canceled (at least the
     *                             history's size, so a full catch-up fits)
     * @param maxWatchersPerStream watches one connection may hold
     */
    public WatchHub(long memberId, LongSupplier term, int maxQueuedEvents, int maxWatchersPerStream) {
        this.memberId = memberId;
        this.term = term;
        this.maxQueuedEvents = maxQueuedEvents;
        this.maxWatchersPerStream = maxWatchersPerStream;
    }

    /** Connect to the node (the hub must exist before the state machine it listens to, so this is late). */
    public void start(RaftDriver<?> raftDriver, CoordinationStateMachine machine, ScheduledExecutorService timer,
                      Duration progressInterval) {
        this.driver = raftDriver;
        this.stateMachine = machine;
        long every = progressInterval.toMillis();
        progressTask = timer.scheduleWithFixedDelay(() -> progress(live, true), every, every, TimeUnit.MILLISECONDS);
    }

    /** The watch stream of a new connection. */
    public WatchStream open(Channel channel) {
        return open(WatchSink.of(channel));
    }

    /** The watch stream of a new connection or etcd Watch stream that writes to {@code sink}. */
    public WatchStream open(WatchSink sink) {
        return new WatchStream(this, sink);
    }

    /** Live watches, for /metrics. */
    public int watchCount() {
        return live.size();
    }

    int maxQueuedEvents() {
        return maxQueuedEvents;
    }

    int maxWatchersPerStream() {
        return maxWatchersPerStream;
    }

    WatchResponse.Builder response(long revision) {
        return WatchResponse.newBuilder().setHeader(ResponseHeader.newBuilder().setRevision(revision)
                .setRaftTerm(term.getAsLong()).setMemberId(memberId));
    }

    /** Register {@code w} on the driver thread: created, then the history from {@code start}, then live. */
    void register(WatchStream stream, Watcher w, long start) {
        driver.readLocal(() -> {
            if (w.isCanceled()) {
                // Canceled before it got here (its client closed it at once): it must not go live, where
                // it would be checked against every write for as long as the connection lasts.
                return null;
            }
            long current = stateMachine.revision();
            w.enqueue(response(current).setWatchId(w.id).setCreated(true).build(), 0);
            AuthState now = stateMachine.auth().state();
            if (!w.auth.stillAllowed(now)) {
                // Checked at the door under an auth state this member has since moved past (the change was
                // applied between the check and this registration): the same cancel as a live watch gets.
                w.cancel(authChanged(w, current, now));
                return null;
            }
            long from = start == 0 ? current + 1 : start;
            w.next = from;
            if (from <= current && !catchUp(w)) {
                return null;
            }
            w.next = Math.max(from, current + 1); // a start ahead of the store: nothing before it (etcd)
            streams.put(w, stream);
            live.add(w);
            return null;
        }).whenComplete((ignored, e) -> {
            if (e != null) {
                w.cancel(response(0).setWatchId(w.id).setCanceled(true)
                        .setCancelCode(WatchResponse.CancelCode.MEMBER_STOPPING)
                        .setCancelReason("this member is stopping: " + e.getMessage()).build());
            }
            stream.scheduleDrain();
        });
    }

    /** Replay the history from {@code w.next} (driver thread). False if the watcher ended (compacted or overflow). */
    private boolean catchUp(Watcher w) {
        HistoryRead h = stateMachine.history(w.next);
        if (h.compacted()) {
            w.cancel(response(stateMachine.revision()).setWatchId(w.id).setCanceled(true)
                    .setCancelCode(WatchResponse.CancelCode.COMPACTED).setCompactRevision(h.compactRevision())
                    .setCancelReason("COMPACTED: revision " + w.next + " is no longer in the history, which starts"
                            + " after " + h.compactRevision() + "; read at " + h.compactRevision()
                            + " and watch from " + (h.compactRevision() + 1)).build());
            return false;
        }
        List<Event> revision = new ArrayList<>();
        for (Event e : h.events()) {
            if (!revision.isEmpty() && revisionOf(e) != revisionOf(revision.get(0))) {
                if (!deliver(w, revision)) {
                    return false;
                }
                revision = new ArrayList<>();
            }
            revision.add(e);
        }
        return revision.isEmpty() || deliver(w, revision);
    }

    private boolean deliver(Watcher w, List<Event> events) {
        long rev = revisionOf(events.get(0));
        return w.offer(rev, events, response(rev));
    }

    private static long revisionOf(Event e) {
        return e.getKv().getModRevision();
    }

    void unregister(Watcher w) {
        live.remove(w);
        streams.remove(w);
    }

    /**
     * Driver thread, after each write transaction: on the path of every write, once per live watcher. A
     * watcher with nothing in the revision costs a range check — no response built, no wake-up of its
     * connection's event loop (which used to be scheduled for every watcher on every write).
     */
    @Override
    public void onRevision(long revision, List<Event> events) {
        for (Watcher w : live) {
            Watcher.Offered offered = w.offer(revision, events, responseAt);
            if (offered == Watcher.Offered.NOTHING) {
                continue;
            }
            schedule(w);
            if (offered == Watcher.Offered.ENDED) {
                log.info("watch {} canceled: it fell behind (or its client canceled it)", w.id);
                unregister(w);
            }
        }
    }

    /** Driver thread: a snapshot replaced the state; watchers behind it resume from its history. */
    @Override
    public void onRestore(long revision) {
        for (Watcher w : live) {
            boolean keep = w.next > revision || catchUp(w);
            w.next = Math.max(w.next, revision + 1);
            schedule(w);
            if (!keep) {
                unregister(w);
            }
        }
    }

    /**
     * Driver thread: an auth change was applied (or restored). Every watch created under an older auth state
     * whose user is not root now is canceled with AUTH_CHANGED; the client logs in again and re-creates it,
     * and the door checks the create against the new state (design SD14). Never throws into apply: it only
     * queues responses.
     */
    @Override
    public void onAuthChange(AuthState state) {
        long current = stateMachine.revision();
        int canceled = 0;
        for (Watcher w : live) {
            if (!w.auth.stillAllowed(state)) {
                w.cancel(authChanged(w, current, state));
                schedule(w);   // before unregistering: the stream writes the cancel, then forgets the watch
                unregister(w);
                canceled++;
            }
        }
        if (canceled > 0) {
            log.info("auth revision {}: canceled {} watch(es) created under an older auth state", state.revision(),
                    canceled);
        }
    }

    private WatchResponse authChanged(Watcher w, long current, AuthState state) {
        return response(current).setWatchId(w.id).setCanceled(true)
                .setCancelCode(WatchResponse.CancelCode.AUTH_CHANGED)
                .setCancelReason("the auth state changed (auth revision " + state.revision() + "); authenticate"
                        + " again and re-create the watch").build();
    }

    /**
     * Progress notifications (etcd's): an empty response whose header revision tells the watcher it has
     * seen everything up to it. Queued on the driver thread, so it never overtakes an event.
     */
    void progress(Collection<Watcher> watchers, boolean onlyRequested) {
        if (watchers.isEmpty()) {
            return;
        }
        List<Watcher> targets = List.copyOf(watchers);
        driver.readLocal(() -> {
            for (Watcher w : targets) {
                if ((!onlyRequested || w.progressNotify) && w.isIdle()) {
                    w.enqueue(response(w.next - 1).setWatchId(w.id).build(), 0);
                    schedule(w);
                }
            }
            return null;
        });
    }

    private void schedule(Watcher w) {
        WatchStream s = streams.get(w);
        if (s != null) {
            s.scheduleDrain();
        }
    }

    @Override
    public void close() {
        if (progressTask != null) {
            progressTask.cancel(false);
        }
    }
}
