package io.rota.server.watch;

import com.google.protobuf.ByteString;
import io.rota.proto.Error;
import io.rota.proto.Frame;
import io.rota.proto.WatchCancelRequest;
import io.rota.proto.WatchCreateRequest;
import io.rota.proto.WatchRequest;
import io.rota.proto.WatchResponse;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The watches of one client connection (or one etcd Watch stream). Requests arrive on the sink's thread;
 * responses are written from the same thread by {@link #drain}, each on the call id of the watch's create
 * request.
 */
public final class WatchStream {

    /** range_end "\0" (one zero byte): every key from the key on. */
    private static final ByteString FROM_KEY = ByteString.copyFrom(new byte[] {0});

    private final WatchHub hub;
    private final WatchSink sink;
    private final Map<Long, Watcher> watchers = new ConcurrentHashMap<>();
    private final AtomicBoolean drainScheduled = new AtomicBoolean();
    private long nextWatchId = 1;

    WatchStream(WatchHub hub, WatchSink sink) {
        this.hub = hub;
        this.sink = sink;
    }

    /** A WatchRequest frame (event loop), with auth off. */
    public void handle(long callId, WatchRequest request) {
        handle(callId, request, WatchAuth.NONE);
    }

    /**
     * A WatchRequest frame (event loop). {@code auth}: who the door checked a create as, and at which auth
     * state; an auth change after it cancels the watch unless the user is root then ({@link WatchHub}).
     */
    public void handle(long callId, WatchRequest request, WatchAuth auth) {
        switch (request.getRequestUnionCase()) {
            case CREATE_REQUEST -> create(callId, request.getCreateRequest(), auth);
            case CANCEL_REQUEST -> cancel(callId, request.getCancelRequest());
            case PROGRESS_REQUEST -> hub.progress(watchers.values(), false);
            case REQUESTUNION_NOT_SET -> error(callId, "empty watch request");
        }
    }

    private void create(long callId, WatchCreateRequest req, WatchAuth auth) {
        if (watchers.size() >= hub.maxWatchersPerStream()) {
            error(callId, "at most " + hub.maxWatchersPerStream() + " watches per connection; cancel one first");
            return;
        }
        ByteString end = req.getRangeEnd();
        if (!end.isEmpty() && !end.equals(FROM_KEY)
                && ByteString.unsignedLexicographicalComparator().compare(end, req.getKey()) <= 0) {
            // etcd's mvcc ErrEmptyWatcherRange: such a watch could never see an event.
            error(callId, "watch range is empty: range_end must sort after key (or be \\0 for every key from it)");
            return;
        }
        long id = req.getWatchId();
        if (id == 0) {
            while (watchers.containsKey(nextWatchId)) {
                nextWatchId++;
            }
            id = nextWatchId++;
        } else if (id < 0 || watchers.containsKey(id)) {
            error(callId, "watch id " + id + " is invalid or already in use on this connection");
            return;
        }
        Watcher w = new Watcher(id, callId, req, req.getStartRevision(), hub.maxQueuedEvents(), auth);
        watchers.put(id, w);
        hub.register(this, w, req.getStartRevision());
    }

    private void cancel(long callId, WatchCancelRequest req) {
        Watcher w = watchers.get(req.getWatchId());
        if (w == null || w.isCanceled()) {
            error(callId, Error.Reason.NO_SUCH_WATCH, "no watch " + req.getWatchId() + " on this connection");
            return;
        }
        hub.unregister(w);
        WatchResponse canceled = hub.response(w.next - 1).setWatchId(w.id).setCanceled(true)
                .setCancelCode(WatchResponse.CancelCode.CANCELED_BY_CLIENT).setCancelReason("canceled by the client")
                .build();
        w.cancel(canceled); // written after what is still queued; drain then forgets the watch
        if (callId != w.callId) {
            sink.write(Frame.newBuilder().setCallId(callId).setWatchResponse(canceled).build());
            sink.flush();
        }
        scheduleDrain();
    }

    private void error(long callId, String message) {
        error(callId, Error.Reason.REASON_UNSPECIFIED, message);
    }

    private void error(long callId, Error.Reason reason, String message) {
        sink.write(Frame.newBuilder().setCallId(callId).setError(Error.newBuilder()
                .setCode(Error.Code.INVALID_ARGUMENT).setReason(reason).setMessage(message)).build());
        sink.flush();
    }

    /** Ask the sink's thread to write what the watchers have queued (any thread; coalesced). */
    void scheduleDrain() {
        if (drainScheduled.compareAndSet(false, true)) {
            sink.execute(this::drain);
        }
    }

    /** Whether this stream has no watch open: its connection may be closed as idle (issue 33). */
    public boolean isEmpty() {
        return watchers.isEmpty();
    }

    /**
     * Write queued responses while the connection takes them (sink's thread). A connection that stops
     * reading leaves them queued, where the watcher's bound cancels it.
     */
    public void drain() {
        drainScheduled.set(false);
        boolean wrote = false;
        for (Watcher w : watchers.values()) {
            WatchResponse r;
            while (sink.isWritable() && (r = w.poll()) != null) {
                sink.write(Frame.newBuilder().setCallId(w.callId).setWatchResponse(r).build());
                wrote = true;
            }
            if (w.isCanceled() && w.isIdle()) {
                watchers.remove(w.id, w);
                hub.unregister(w);
            }
        }
        if (wrote) {
            sink.flush();
        }
    }

    /** The connection closed: forget its watches. */
    public void close() {
        watchers.values().forEach(hub::unregister);
        watchers.clear();
    }
}
