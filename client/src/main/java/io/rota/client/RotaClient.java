package io.rota.client;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.rota.proto.Error;
import io.rota.proto.Frame;
import io.rota.proto.Member;
import io.rota.proto.RegisterSessionRequest;
import io.rota.proto.SessionRef;
import io.rota.proto.StatusRequest;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A client of a Rota cluster. Thread-safe; create one per application and {@link #close()} it at the end.
 *
 * <p>It opens one connection per member it uses, lazily, and multiplexes calls over it. It finds the
 * leader by itself: a call that fails because a member is down, has no leader or answers NOT_LEADER is
 * retried on another member (the leader named in the hint, when there is one) with bounded exponential
 * backoff until the call's deadline ({@link Builder#callTimeout}). Writes are safe to retry: each carries
 * the client's session and a sequence number that a retry reuses, so the cluster applies it once.
 *
 * <pre>{@code
 * try (RotaClient rota = RotaClient.connect("127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003")) {
 *     rota.kv().put("config/mode", "fast");
 * }
 * }</pre>
 */
public final class RotaClient implements AutoCloseable {

    private final List<String> endpoints;
    private final long callTimeoutNanos;
    private final long attemptTimeoutNanos;
    private final EventLoopGroup group;
    private final Bootstrap bootstrap;
    private final ConcurrentHashMap<String, CompletableFuture<Connection>> connections = new ConcurrentHashMap<>();
    private final Kv kv;
    private final Leases leases;
    private final Watches watches;
    private final Cluster cluster;
    private final java.util.concurrent.ExecutorService callbacks = java.util.concurrent.Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "rota-client-callbacks");
        t.setDaemon(true);
        return t;
    });
    private final Object sessionLock = new Object();
    private CompletableFuture<Session> session;
    /** The member calls go to first: the last one that answered, or the leader a hint named. */
    private volatile String preferred;
    private volatile boolean closed;
    private final CompletableFuture<Void> whenClosed = new CompletableFuture<>();
    /** Calls waiting out a retry backoff: failed by close(), as the event loop's shutdown drops scheduled tasks. */
    private final Set<Call> backingOff = ConcurrentHashMap.newKeySet();

    /**
     * A registered session: the server's client id, this client's sequences, and its window. The cluster
     * remembers the session's latest {@code window} responses; a sequence the client may still retry must
     * stay within that many of the oldest unanswered one, or its retry would be refused as "outcome
     * unknown". So a call whose sequence would reach past it waits here for older calls to end.
     */
    private static final class Session {
        final long clientId;
        private final int window;
        private long lastSequence;
        private final TreeSet<Long> inFlight = new TreeSet<>();
        private final ArrayDeque<Call> waiting = new ArrayDeque<>();

        Session(long clientId, int window) {
            this.clientId = clientId;
            this.window = window > 0 ? window : 64;
        }

        /** The call's sequence, or 0 if it must wait for an older call to end. */
        synchronized long admit(Call call) {
            if (!waiting.isEmpty() || !fits()) {
                waiting.add(call);
                return 0;
            }
            return take();
        }

        /** {@code sequence} ended (answered or given up): the waiting calls that now fit, in order. */
        synchronized List<Map.Entry<Call, Long>> ended(long sequence) {
            inFlight.remove(sequence);
            List<Map.Entry<Call, Long>> admitted = new ArrayList<>();
            while (!waiting.isEmpty() && fits()) {
                admitted.add(Map.entry(waiting.poll(), take()));
            }
            return admitted;
        }

        /** The lowest sequence still in flight, told to the cluster with each request (§6.3). */
        synchronized long firstIncomplete() {
            return inFlight.isEmpty() ? 0 : inFlight.first();
        }

        private boolean fits() {
            return inFlight.isEmpty() || lastSequence + 1 - inFlight.first() < window;
        }

        private long take() {
            inFlight.add(++lastSequence);
            return lastSequence;
        }
    }

    private RotaClient(Builder builder) {
        this.endpoints = List.copyOf(builder.endpoints);
        this.callTimeoutNanos = builder.callTimeout.toNanos();
        this.attemptTimeoutNanos = builder.attemptTimeout.toNanos();
        this.preferred = endpoints.get(0);
        this.group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        this.bootstrap = new Bootstrap().group(group).channel(NioSocketChannel.class)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS,
                        (int) Math.max(100, Math.min(Integer.MAX_VALUE, builder.attemptTimeout.toMillis())));
        this.kv = new Kv(this);
        this.leases = new Leases(this);
        this.watches = new Watches(this);
        this.cluster = new Cluster(this);
    }

    /**
     * Creates a client with the default settings (a call timeout of 10 s).
     *
     * @param endpoints comma-separated client addresses of the members, {@code host:port,host:port,...};
     *                  in any order (it need not be the members' id order)
     * @return a client; no connection is opened until the first call
     */
    public static RotaClient connect(String endpoints) {
        return builder().endpoints(endpoints).build();
    }

    /**
     * Starts configuring a client.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * The key-value API.
     *
     * @return the key-value API of this client
     */
    public Kv kv() {
        return kv;
    }

    /**
     * The lease API: grant, revoke, time-to-live and background keep-alive.
     *
     * @return the lease API of this client
     */
    public Leases leases() {
        return leases;
    }

    /**
     * The watch API: key and prefix watches that resume on another member after a failure.
     *
     * @return the watch API of this client
     */
    public Watches watches() {
        return watches;
    }

    /**
     * The cluster API: a member's status and health, the member list.
     *
     * @return the cluster API of this client
     */
    public Cluster cluster() {
        return cluster;
    }

    /**
     * The client addresses this client was configured with.
     *
     * @return the endpoints, in the order given
     */
    public List<String> endpoints() {
        return endpoints;
    }

    /** Closes every connection and the client's thread; pending calls fail with UNAVAILABLE. */
    @Override
    public void close() {
        closed = true;
        whenClosed.complete(null);
        for (Call call : backingOff) {
            call.result.completeExceptionally(closedException());
        }
        backingOff.clear();
        watches.closeAll();
        leases.closeAll();
        callbacks.shutdown();
        for (CompletableFuture<Connection> c : connections.values()) {
            c.thenAccept(Connection::close);
        }
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
    }

    /**
     * Completes when {@link #close()} is called: for code that waits for the client's callbacks (a lock
     * waiter, a campaign) and must stop waiting then, as no callback comes after the close.
     *
     * @return a future of the close (completing it has no effect on the client)
     */
    public CompletableFuture<Void> whenClosed() {
        return whenClosed.copy();
    }

    // ---------------------------------------------------------------------------------------------
    // Calls
    // ---------------------------------------------------------------------------------------------

    /**
     * Runs one call with leader finding and retries until the deadline. A mutating call is sent under
     * the client's session with a sequence number that every retry of it reuses.
     */
    CompletableFuture<Frame> execute(Frame.Builder request, boolean mutating) {
        return execute(request, mutating, callTimeoutNanos);
    }

    /** {@link #execute(Frame.Builder, boolean)} with its own deadline, {@code timeoutNanos} from now. */
    CompletableFuture<Frame> execute(Frame.Builder request, boolean mutating, long timeoutNanos) {
        Call call = new Call(request, mutating, System.nanoTime() + timeoutNanos);
        if (closed) {
            call.result.completeExceptionally(closedException());
            return call.result;
        }
        if (mutating) {
            startInSession(call);
        } else {
            attempt(call);
        }
        return call.result;
    }

    /**
     * Attaches the session and the call's own sequence (taken once; retries reuse it), then sends — or, if
     * the sequence would fall outside the session's window, queues the call until an older one ends.
     */
    private void startInSession(Call call) {
        session(call).whenComplete((s, e) -> {
            if (e != null) {
                call.result.completeExceptionally(unwrap(e));
                return;
            }
            long sequence = s.admit(call);
            if (sequence != 0) {
                sendInSession(call, s, sequence);
            }
        });
    }

    private void sendInSession(Call call, Session s, long sequence) {
        call.session = s;
        call.request.setSession(SessionRef.newBuilder().setClientId(s.clientId).setSequence(sequence)
                .setFirstIncomplete(s.firstIncomplete()));
        call.result.whenComplete((f, e) -> s.ended(sequence).forEach(w -> sendInSession(w.getKey(), s, w.getValue())));
        attempt(call);
    }

    /** The client's session, registered on first use (itself a retried call, without a session). */
    private CompletableFuture<Session> session(Call forCall) {
        synchronized (sessionLock) {
            if (session == null || session.isCompletedExceptionally()) {
                Call register = new Call(Frame.newBuilder()
                        .setRegisterSessionRequest(RegisterSessionRequest.getDefaultInstance()), false,
                        forCall.deadline);
                session = register.result.thenApply(f -> new Session(f.getRegisterSessionResponse().getClientId(),
                        f.getRegisterSessionResponse().getRememberedResponses()));
                attempt(register);
            }
            return session;
        }
    }

    /** Forget {@code expired} (the server no longer knows it), so the next call registers a new one. */
    private void dropSession(Session expired) {
        synchronized (sessionLock) {
            if (session != null && session.isDone() && !session.isCompletedExceptionally()
                    && session.join() == expired) {
                session = null;
            }
        }
    }

    private final class Call {
        final Frame.Builder request;
        final boolean mutating;
        final long deadline;
        final CompletableFuture<Frame> result = new CompletableFuture<>();
        Session session;
        int attempts;
        /** Where the next attempt goes (a leader hint); null: the preferred member. */
        String target;
        RotaException last;

        Call(Frame.Builder request, boolean mutating, long deadline) {
            this.request = request;
            this.mutating = mutating;
            this.deadline = deadline;
        }
    }

    private void attempt(Call call) {
        if (closed) {
            call.result.completeExceptionally(closedException());
            return;
        }
        long remaining = call.deadline - System.nanoTime();
        if (remaining <= 0) {
            call.result.completeExceptionally(deadlineExceeded(call));
            return;
        }
        call.attempts++;
        String endpoint = call.target != null ? call.target : preferred;
        call.target = null;
        long attemptNanos = Math.min(remaining, attemptTimeoutNanos);
        connection(endpoint)
                .thenCompose(c -> c.call(call.request))
                .orTimeout(attemptNanos, TimeUnit.NANOSECONDS)
                .whenComplete((frame, e) -> onAnswer(call, endpoint, frame, e));
    }

    private void onAnswer(Call call, String endpoint, Frame frame, Throwable failure) {
        if (failure != null) {
            Throwable cause = unwrap(failure);
            call.last = cause instanceof TimeoutException
                    ? new RotaException(RotaException.Code.TIMEOUT, "no answer from " + endpoint + " in time")
                    : cause instanceof RotaException r ? r
                    : new RotaException(RotaException.Code.UNAVAILABLE, endpoint + ": " + cause, cause);
            if (!isRetryable(call.last.code())) {
                call.result.completeExceptionally(call.last);
                return;
            }
            avoid(endpoint);
            retryLater(call);
            return;
        }
        if (!frame.hasError()) {
            preferred = endpoint;
            call.result.complete(frame);
            return;
        }
        Error error = frame.getError();
        call.last = RotaException.fromError(error);
        switch (error.getCode()) {
            case NOT_LEADER -> {
                if (!error.getLeaderEndpoint().isEmpty()) {
                    call.target = error.getLeaderEndpoint();
                    preferred = call.target;
                    retryLater(call);
                } else if (error.getLeaderId() != 0) {
                    findLeader(call, endpoint, error.getLeaderId());
                } else {
                    avoid(endpoint);
                    retryLater(call);
                }
            }
            case UNAVAILABLE, TIMEOUT -> {
                avoid(endpoint);
                retryLater(call);
            }
            case SESSION_EXPIRED -> {
                if (call.mutating && call.session != null) {
                    // Not applied: a new session and a new sequence are safe.
                    dropSession(call.session);
                    startInSession(call);
                } else {
                    call.result.completeExceptionally(call.last);
                }
            }
            default -> call.result.completeExceptionally(call.last);
        }
    }

    /** The leader's client address from a Status call on {@code endpoint}, then retry there. */
    private void findLeader(Call call, String endpoint, long leaderId) {
        long remaining = call.deadline - System.nanoTime();
        connection(endpoint)
                .thenCompose(c -> c.call(Frame.newBuilder().setStatusRequest(StatusRequest.getDefaultInstance())))
                .orTimeout(Math.max(1, Math.min(remaining, attemptTimeoutNanos)), TimeUnit.NANOSECONDS)
                .whenComplete((status, e) -> {
                    if (e == null && status.hasStatusResponse()) {
                        for (Member m : status.getStatusResponse().getMembersList()) {
                            if (m.getId() == leaderId && !m.getClientAddress().isEmpty()) {
                                call.target = m.getClientAddress();
                                preferred = call.target;
                            }
                        }
                    }
                    if (call.target == null) {
                        avoid(endpoint);
                    }
                    retryLater(call);
                });
    }

    private static boolean isRetryable(RotaException.Code code) {
        return code == RotaException.Code.UNAVAILABLE || code == RotaException.Code.TIMEOUT
                || code == RotaException.Code.NOT_LEADER;
    }

    /** Stop preferring {@code endpoint}: move on to the next configured one. */
    private void avoid(String endpoint) {
        if (endpoint.equals(preferred)) {
            int i = endpoints.indexOf(endpoint);
            preferred = endpoints.get((i + 1) % endpoints.size());
        }
    }

    private void retryLater(Call call) {
        long remainingMs = TimeUnit.NANOSECONDS.toMillis(call.deadline - System.nanoTime());
        if (remainingMs <= 0) {
            call.result.completeExceptionally(deadlineExceeded(call));
            return;
        }
        long backoff = Backoff.delayMs(call.attempts);
        long delay = Math.min(remainingMs, backoff / 2 + ThreadLocalRandom.current().nextLong(backoff / 2 + 1));
        // Registered before `closed` is read, as close() sets `closed` before it fails the registered calls:
        // either this call sees the close, or the close sees this call.
        backingOff.add(call);
        if (closed) {
            backingOff.remove(call);
            call.result.completeExceptionally(closedException());
            return;
        }
        try {
            group.schedule(() -> {
                backingOff.remove(call);
                attempt(call);
            }, delay, TimeUnit.MILLISECONDS);
        } catch (RuntimeException rejected) {   // the client is closing
            backingOff.remove(call);
            call.result.completeExceptionally(closedException());
        }
    }

    private RotaException deadlineExceeded(Call call) {
        String last = call.last == null ? "" : "; last failure: " + call.last.getMessage();
        return new RotaException(RotaException.Code.TIMEOUT, "no answer within "
                + TimeUnit.NANOSECONDS.toMillis(callTimeoutNanos) + " ms after " + call.attempts + " attempt(s)" + last,
                call.last);
    }

    private static RotaException closedException() {
        return new RotaException(RotaException.Code.UNAVAILABLE, "the client is closed");
    }

    /** The total time one call may take, retries included. */
    Duration callTimeout() {
        return Duration.ofNanos(callTimeoutNanos);
    }

    /** The member calls go to first. */
    String preferredEndpoint() {
        return preferred;
    }

    boolean isClosed() {
        return closed;
    }

    /** Runs {@code task} after {@code delayMs} on the client's thread; false if the client is closing. */
    boolean schedule(Runnable task, long delayMs) {
        if (closed) {
            return false;
        }
        try {
            group.schedule(task, delayMs, TimeUnit.MILLISECONDS);
            return true;
        } catch (RuntimeException rejected) {
            return false;
        }
    }

    /** Runs a listener callback on the client's callback thread (in submission order; it may block). */
    void callback(Runnable task) {
        try {
            callbacks.execute(task);
        } catch (RuntimeException rejected) {
            // the client is closed: nobody listens any more
        }
    }

    CompletableFuture<Connection> connection(String endpoint) {
        while (true) {
            CompletableFuture<Connection> existing = connections.get(endpoint);
            if (existing != null) {
                if (!existing.isDone()) {
                    return existing;
                }
                if (!existing.isCompletedExceptionally() && existing.join().isActive()) {
                    return existing;
                }
                connections.remove(endpoint, existing);
                continue;
            }
            CompletableFuture<Connection> created = new CompletableFuture<>();
            if (connections.putIfAbsent(endpoint, created) != null) {
                continue;
            }
            Connection.open(bootstrap, endpoint, () -> connections.remove(endpoint, created))
                    .whenComplete((c, e) -> {
                        if (e != null) {
                            connections.remove(endpoint, created);
                            created.completeExceptionally(e);
                        } else {
                            created.complete(c);
                        }
                    });
            return created;
        }
    }

    static Throwable unwrap(Throwable t) {
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    /** Waits for {@code future}; a failure is thrown as the RotaException it carries. */
    static <T> T await(CompletableFuture<T> future) {
        try {
            return future.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RotaException(RotaException.Code.UNAVAILABLE, "interrupted while waiting", e);
        } catch (ExecutionException e) {
            Throwable cause = unwrap(e);
            if (cause instanceof RotaException r) {
                throw r;
            }
            throw new RotaException(RotaException.Code.UNAVAILABLE, String.valueOf(cause), cause);
        }
    }

    /** Configures a {@link RotaClient}. */
    public static final class Builder {
        private List<String> endpoints = List.of();
        private Duration callTimeout = Duration.ofSeconds(10);
        private Duration attemptTimeout = Duration.ofSeconds(3);

        private Builder() {
        }

        /**
         * The members' client addresses.
         *
         * @param endpoints comma-separated {@code host:port} list, in any order
         * @return this builder
         */
        public Builder endpoints(String endpoints) {
            List<String> list = new ArrayList<>();
            for (String e : Objects.requireNonNull(endpoints, "endpoints").split(",")) {
                if (!e.isBlank()) {
                    list.add(e.trim());
                }
            }
            return endpoints(list);
        }

        /**
         * The members' client addresses.
         *
         * @param endpoints {@code host:port} strings, in any order
         * @return this builder
         */
        public Builder endpoints(List<String> endpoints) {
            for (String e : endpoints) {
                Connection.parse(e);   // fail fast on a malformed address
            }
            this.endpoints = List.copyOf(endpoints);
            return this;
        }

        /**
         * The total time a call may take, retries included (default 10 s); past it the call fails with
         * TIMEOUT (or with the last failure's code wrapped in a TIMEOUT).
         *
         * @param timeout a positive duration
         * @return this builder
         */
        public Builder callTimeout(Duration timeout) {
            if (timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("callTimeout must be positive");
            }
            this.callTimeout = timeout;
            return this;
        }

        /**
         * How long one attempt on one member may take before the call tries another (default 3 s).
         *
         * @param timeout a positive duration
         * @return this builder
         */
        public Builder attemptTimeout(Duration timeout) {
            if (timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("attemptTimeout must be positive");
            }
            this.attemptTimeout = timeout;
            return this;
        }

        /**
         * Creates the client. No connection is opened until the first call.
         *
         * @return a new client
         * @throws IllegalArgumentException if no endpoint was given
         */
        public RotaClient build() {
            if (endpoints.isEmpty()) {
                throw new IllegalArgumentException("at least one endpoint (host:port) is required");
            }
            return new RotaClient(this);
        }
    }

    @Override
    public String toString() {
        return "RotaClient" + Arrays.toString(endpoints.toArray());
    }
}
