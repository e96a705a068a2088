package io.rota.client;

import com.google.protobuf.ByteString;
import io.rota.proto.Event;
import io.rota.proto.Frame;
import io.rota.proto.WatchCancelRequest;
import io.rota.proto.WatchCreateRequest;
import io.rota.proto.WatchRequest;
import io.rota.proto.WatchResponse;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The watch API: a key or a prefix watched from a revision, its events delivered to a
 * {@link WatchListener} in revision order, each once. A watch streams from one member; when that
 * connection or member fails, the SDK reopens it on another member from the last delivered revision + 1.
 * A start older than the retained history ends it with a COMPACTED {@link RotaException}. When the member
 * applies an auth change (auth enabled, a permission revoked), it cancels the watch; the SDK logs in again
 * and re-creates it from the same revision, and a create the new state refuses ends it with that error
 * (PERMISSION_DENIED) through {@link WatchListener#onError}. Obtain it from
 * {@link RotaClient#watches()}.
 *
 * <pre>{@code
 * try (Watch w = rota.watches().watchPrefix("jobs/", 0, e -> System.out.println(e.type() + " " + e.kv()))) {
 *     ...
 * }
 * }</pre>
 */
public final class Watches {

    private final ConnectionPool pool;
    private final ClientThreads threads;
    private final Set<WatchTask> running = ConcurrentHashMap.newKeySet();
    /**
     * Watch ids are chosen here, not by the member (etcd's WatchCreateRequest.watch_id), so that a watch
     * closed before its creation was confirmed can still be canceled by id: without an id the cancel
     * could not be sent, and the member kept the watch — and filtered every later write for it — for as
     * long as the connection lived. A lock cycle shorter than one round trip did exactly that. Unique
     * within this client, hence on each of its connections; never reused.
     */
    private final AtomicLong nextWatchId = new AtomicLong();

    /** Sends a login when a watch is refused INVALID_AUTH_TOKEN (a call through the client's retrier). */
    private final java.util.function.Function<Frame.Builder, java.util.concurrent.CompletableFuture<Frame>> login;

    Watches(ConnectionPool pool, ClientThreads threads) {
        this(pool, threads, request -> java.util.concurrent.CompletableFuture.failedFuture(
                new RotaException(RotaException.Code.INVALID_AUTH_TOKEN, "no credentials")));
    }

    Watches(ConnectionPool pool, ClientThreads threads,
            java.util.function.Function<Frame.Builder, java.util.concurrent.CompletableFuture<Frame>> login) {
        this.login = login;
        this.pool = pool;
        this.threads = threads;
    }

    /**
     * Watches one key.
     *
     * @param key          the key (UTF-8)
     * @param fromRevision the first revision to deliver (0: the next one)
     * @param listener     receives the events
     * @return the running watch; close it to cancel
     */
    public Watch watch(String key, long fromRevision, WatchListener listener) {
        return watch(key, WatchOptions.key().fromRevision(fromRevision), listener);
    }

    /**
     * Watches every key that starts with {@code prefix}.
     *
     * @param prefix       the prefix (UTF-8; empty: every key)
     * @param fromRevision the first revision to deliver (0: the next one)
     * @param listener     receives the events
     * @return the running watch; close it to cancel
     */
    public Watch watchPrefix(String prefix, long fromRevision, WatchListener listener) {
        return watch(prefix, WatchOptions.prefix().fromRevision(fromRevision), listener);
    }

    /**
     * Watches one key or a prefix as {@code options} say (start revision, previous keys).
     *
     * @param key      the key or prefix (UTF-8; an empty prefix: every key)
     * @param options  how to watch
     * @param listener receives the events
     * @return the running watch; close it to cancel
     */
    public Watch watch(String key, WatchOptions options, WatchListener listener) {
        return watch(Op.utf8(key), options, listener);
    }

    /**
     * Watches one key or a prefix given as bytes, as {@code options} say.
     *
     * @param key      the key or prefix (any bytes; an empty prefix: every key)
     * @param options  how to watch
     * @param listener receives the events
     * @return the running watch; close it to cancel
     */
    public Watch watch(byte[] key, WatchOptions options, WatchListener listener) {
        if (options.isPrefix()) {
            return start(key.length == 0 ? new byte[] {0} : key.clone(), Kv.prefixEnd(key), options, listener);
        }
        return start(key.clone(), new byte[0], options, listener);
    }

    private Watch start(byte[] key, byte[] rangeEnd, WatchOptions options, WatchListener listener) {
        long fromRevision = options.fromRevision();
        if (key.length == 0) {
            throw new IllegalArgumentException("empty key");
        }
        if (fromRevision < 0) {
            throw new IllegalArgumentException("negative revision");
        }
        WatchTask task = new WatchTask(ByteString.copyFrom(key), ByteString.copyFrom(rangeEnd), fromRevision,
                options.prevKv(), options.progressNotify(), listener);
        running.add(task);
        task.open(pool.preferred());
        return task;
    }

    void closeAll() {
        for (WatchTask t : running) {
            t.close();
        }
    }

    /** One watch. Its state changes under its own lock; frames arrive on the client's event loop. */
    private final class WatchTask implements Watch {
        private final ByteString key;
        private final ByteString rangeEnd;
        private final boolean prevKv;
        private final boolean progressNotify;
        private final WatchListener listener;
        /** The next revision to deliver; 0 until known (a watch from "now" learns it from its creation). */
        private long next;
        private boolean active = true;
        private Connection connection;
        private long callId;
        /** The id of the watch on {@link #connection} (chosen here, see {@link #nextWatchId}); -1 before one. */
        private long watchId = -1;
        private boolean closedByApp;
        private String endpoint;
        private int failures;
        /** The token the latest create went with, and whether this watch logged in again since it last opened. */
        private String tokenSent = "";
        private boolean tokenRenewed;

        WatchTask(ByteString key, ByteString rangeEnd, long fromRevision, boolean prevKv, boolean progressNotify,
                  WatchListener listener) {
            this.key = key;
            this.rangeEnd = rangeEnd;
            this.prevKv = prevKv;
            this.progressNotify = progressNotify;
            this.next = fromRevision;
            this.listener = listener;
        }

        private void open(String target) {
            synchronized (this) {
                if (!active) {
                    return;
                }
                endpoint = null;
            }
            pool.connection(target).whenComplete((c, e) -> {
                if (e != null) {
                    reopenLater(target);
                    return;
                }
                synchronized (this) {
                    if (!active) {
                        return;
                    }
                    WatchCreateRequest.Builder create = WatchCreateRequest.newBuilder().setKey(key).setStartRevision(next)
                            .setPrevKv(prevKv).setProgressNotify(progressNotify);
                    if (!rangeEnd.isEmpty()) {
                        create.setRangeEnd(rangeEnd);
                    }
                    connection = c;
                    endpoint = target;
                    watchId = nextWatchId.incrementAndGet();
                    create.setWatchId(watchId);
                    tokenSent = pool.tokens().current();
                    Connection.Stream stream = new Connection.Stream(f -> onFrame(c, target, f),
                            lost -> onLost(c, target));
                    callId = c.stream(Frame.newBuilder().setWatchRequest(WatchRequest.newBuilder().setCreateRequest(create)),
                            stream);
                }
            });
        }

        private synchronized boolean current(Connection c) {
            return active && connection == c;
        }

        private void onLost(Connection c, String target) {
            synchronized (this) {
                if (!current(c)) {
                    return;
                }
                connection = null;
                endpoint = null;
            }
            reopenLater(target);
        }

        /** Reopen on the member after {@code failed}, after a backoff that grows with consecutive failures. */
        private void reopenLater(String failed) {
            long delay;
            synchronized (this) {
                if (!active) {
                    return;
                }
                failures++;
                delay = Backoff.delayMs(failures);
            }
            String target = pool.after(failed);
            if (!threads.schedule(() -> open(target), delay)) {
                close();
            }
        }

        private void onFrame(Connection c, String target, Frame frame) {
            RotaException end = null;
            boolean reopen = false;
            boolean renewToken = false;
            long retryAfterMs = 0;
            synchronized (this) {
                if (!current(c)) {
                    return;
                }
                if (frame.hasError()) {
                    RotaException error = Errors.of(frame.getError());
                    if (Recovery.of(error.code()) == Recovery.NEW_TOKEN && pool.tokens().hasCredentials()
                            && !tokenRenewed) {
                        tokenRenewed = true;   // log in again once; a second refusal ends the watch
                        renewToken = true;
                    } else if (Recovery.of(error.code()).retries()) {
                        reopen = true;
                        retryAfterMs = error.retryAfterMs();
                    } else {
                        end = error;
                    }
                } else {
                    WatchResponse r = frame.getWatchResponse();
                    if (r.getCreated()) {
                        tokenRenewed = false;
                        watchId = r.getWatchId();
                        if (next == 0) {
                            next = r.getHeader().getRevision() + 1;
                        }
                    }
                    if (r.getEventsCount() > 0) {
                        failures = 0;
                    }
                    long max = 0;
                    for (Event e : r.getEventsList()) {
                        long rev = e.getKv().getModRevision();
                        if (rev >= next) {
                            WatchEvent event = WatchEvent.of(e);
                            threads.callback(() -> deliver(event));
                            max = Math.max(max, rev);
                        }
                    }
                    if (max > 0) {
                        next = max + 1;
                    }
                    if (progressNotify && !r.getCreated() && !r.getCanceled() && r.getEventsCount() == 0) {
                        // A progress notification (etcd's: no events, not a creation or cancel). Passed on in
                        // the callback queue, so it never overtakes an event delivered before it.
                        long upTo = r.getHeader().getRevision();
                        threads.callback(() -> deliverProgress(upTo));
                    }
                    if (r.getCanceled()) {
                        if (r.getCancelCode() == WatchResponse.CancelCode.FELL_BEHIND
                                && r.getResumeRevision() <= Math.max(next, 1)) {
                            reopen = true;   // a slow-watcher cancel: everything before `next` was delivered
                        } else if (r.getCancelCode() == WatchResponse.CancelCode.AUTH_CHANGED) {
                            // The member applied an auth change: log in again (the old token is stale) and
                            // re-create from `next`; the member checks the create against the new state, so a
                            // revoked permission ends the watch with PERMISSION_DENIED, not a silent resume.
                            if (!pool.tokens().hasCredentials()) {
                                reopen = true;   // named by its certificate, or by nobody: the create decides
                            } else if (!tokenRenewed) {
                                tokenRenewed = true;
                                renewToken = true;
                            } else {
                                end = new RotaException(RotaException.Code.INVALID_AUTH_TOKEN,
                                        "watch canceled by the server: " + r.getCancelReason());
                            }
                        } else {
                            end = Errors.ofCanceledWatch(r);
                        }
                    }
                }
                if (end != null || reopen || renewToken) {
                    c.endStream(callId);
                    connection = null;
                    endpoint = null;
                }
                if (end != null) {
                    active = false;
                    running.remove(this);
                }
            }
            if (renewToken) {
                String stale = tokenSent;
                pool.tokens().renew(stale, login).whenComplete((token, e) -> {
                    if (e == null) {
                        open(target);
                    } else {
                        RotaException error = Errors.of(e, target, "no answer to the login in time");
                        synchronized (this) {
                            active = false;
                            running.remove(this);
                        }
                        threads.callback(() -> listener.onError(error));
                    }
                });
            } else if (end != null) {
                RotaException error = end;
                threads.callback(() -> listener.onError(error));
            } else if (reopen) {
                // The member answered, so it is up: reopen there after the shortest backoff (or its retry-after).
                if (!threads.schedule(() -> open(target), Backoff.delayMs(1, retryAfterMs))) {
                    close();
                }
            }
        }

        private void deliver(WatchEvent event) {
            synchronized (this) {
                if (closedByApp) {
                    return;
                }
            }
            listener.onEvent(event);
        }

        private void deliverProgress(long revision) {
            synchronized (this) {
                if (closedByApp) {
                    return;
                }
            }
            listener.onProgress(revision);
        }

        @Override
        public synchronized long nextRevision() {
            return next;
        }

        @Override
        public synchronized String endpoint() {
            return endpoint;
        }

        @Override
        public synchronized boolean isActive() {
            return active;
        }

        @Override
        public void close() {
            Connection c;
            long id;
            long stream;
            synchronized (this) {
                if (!active) {
                    return;
                }
                active = false;
                closedByApp = true;
                c = connection;
                id = watchId;
                stream = callId;
                connection = null;
                endpoint = null;
            }
            running.remove(this);
            if (c != null) {
                c.endStream(stream);
                if (id > 0 && !threads.isClosed() && c.isActive()) {
                    // Sent even before the creation is confirmed: the member handles a connection's frames in
                    // order, so the create is there first. The answer (and the final `canceled` on the
                    // watch's call id) is not needed.
                    c.call(Frame.newBuilder().setWatchRequest(WatchRequest.newBuilder()
                            .setCancelRequest(WatchCancelRequest.newBuilder().setWatchId(id))));
                }
            }
        }
    }
}
