package io.rota.client;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

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
 *
 * <p>Inside, it is a facade over parts that each do one job: {@link ConnectionPool} (members, connections,
 * which member to try first), {@link Retrier} (the deadline loop, with the one {@link Backoff} and the one
 * retry classification, {@link Recovery}), {@link Caller} (the session and its sequence window,
 * {@link ClientSession}), {@link ClientThreads} (the event loop and the callback thread) and {@link Errors}
 * (every failure as a {@link RotaException}). The APIs depend on the narrow {@link Calls}.
 */
public final class RotaClient implements AutoCloseable {

    private final ClientThreads threads;
    private final ConnectionPool pool;
    private final Retrier retrier;
    private final Kv kv;
    private final Leases leases;
    private final Watches watches;
    private final Cluster cluster;
    private final Maintenance maintenance;
    private final Auth auth;
    private final ConnectionStates states;
    private final CompletableFuture<Void> whenClosed = new CompletableFuture<>();

    private RotaClient(Builder builder) {
        // Before any thread starts: TLS files that cannot be used fail the build and leave nothing running.
        io.netty.handler.ssl.SslContext tls = builder.tls == null ? null : ClientTlsContext.build(builder.tls);
        this.threads = new ClientThreads();
        this.pool = new ConnectionPool(builder.endpoints, threads.eventLoop,
                builder.dialTimeout != null ? builder.dialTimeout : builder.attemptTimeout, tls,
                builder.user != null ? new AuthTokens(builder.user, builder.password) : AuthTokens.NONE);
        this.states = new ConnectionStates(pool, threads, builder.attemptTimeout.toNanos());
        ClientListener listener = new GuardedListener(builder.listeners);
        this.retrier = new Retrier(pool, threads, states, builder.attemptTimeout.toNanos(),
                builder.callTimeout.toNanos(), listener);
        Calls calls = new Caller(retrier, threads, builder.callTimeout, listener);
        this.kv = new Kv(calls);
        this.leases = new Leases(calls, threads, states, listener);
        this.watches = new Watches(pool, threads, login -> calls.execute(login, false));
        this.cluster = new Cluster(calls, pool);
        this.maintenance = new Maintenance(calls, pool);
        this.auth = new Auth(calls);
        states.bind(this);
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
     * The maintenance API: backups (snapshot), alarms and compaction.
     *
     * @return the maintenance API of this client
     */
    public Maintenance maintenance() {
        return maintenance;
    }

    /**
     * The auth API: users, roles, permissions, and turning auth on and off (root only once auth is on).
     *
     * @return the auth API of this client
     */
    public Auth auth() {
        return auth;
    }

    /**
     * The client addresses this client was configured with.
     *
     * @return the endpoints, in the order given
     */
    public List<String> endpoints() {
        return pool.endpoints();
    }

    /**
     * Whether this client can reach a working cluster now, as its calls and its background probe found
     * (see {@link ConnectionState} for the transitions). A new client is {@link ConnectionState#SUSPENDED}
     * until a member first answers; a closed one is {@link ConnectionState#LOST}.
     *
     * @return the current state
     */
    public ConnectionState connectionState() {
        return states.current();
    }

    /**
     * Tells {@code listener} of every later change of {@link #connectionState()}, on the client's callback
     * thread, in order, after the listeners added before it. A listener that throws is logged; the others
     * are still told.
     *
     * @param listener the listener (the same one added twice is told twice)
     */
    public void addConnectionStateListener(ConnectionStateListener listener) {
        states.addListener(listener);
    }

    /**
     * Stops telling {@code listener} (one registration of it); a change already being delivered may still
     * reach it.
     *
     * @param listener a listener added before
     */
    public void removeConnectionStateListener(ConnectionStateListener listener) {
        states.removeListener(listener);
    }

    /**
     * Closes every connection and the client's threads; pending calls fail with UNAVAILABLE. The connection
     * state listeners are told {@link ConnectionState#LOST} (unless it already was), and nothing after.
     */
    @Override
    public void close() {
        states.closing();
        threads.markClosed();
        whenClosed.complete(null);
        retrier.failBackingOff();
        watches.closeAll();
        leases.closeAll();
        pool.close();
        threads.shutdown();
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

    /** Configures a {@link RotaClient}. */
    public static final class Builder {
        private List<String> endpoints = List.of();
        private Duration callTimeout = Duration.ofSeconds(10);
        private Duration attemptTimeout = Duration.ofSeconds(3);
        private Duration dialTimeout;
        private TlsOptions tls;
        private final List<ClientListener> listeners = new ArrayList<>();
        private String user;
        private char[] password;

        private Builder() {
        }

        /**
         * Log in as {@code user} when the cluster has auth enabled. The client logs in on the first call the
         * cluster refuses for want of a token, and again, transparently, when a user or role change made its
         * token stale; with auth disabled it never logs in. A wrong password fails calls with
         * {@link RotaException.Code#AUTH_FAILED}.
         *
         * @param user     the user name
         * @param password its password (copied; the caller may clear its array)
         * @return this builder
         */
        public Builder credentials(String user, char[] password) {
            if (Objects.requireNonNull(user, "user").isEmpty()) {
                throw new IllegalArgumentException("credentials need a user name");
            }
            this.user = user;
            this.password = Objects.requireNonNull(password, "password").clone();
            return this;
        }

        /**
         * {@link #credentials(String, char[])} with the password as a string.
         *
         * @param user     the user name
         * @param password its password
         * @return this builder
         */
        public Builder credentials(String user, String password) {
            return credentials(user, Objects.requireNonNull(password, "password").toCharArray());
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
         * How long opening a connection to one member may take (etcd's dial timeout; default: the attempt
         * timeout). A member that does not accept the connection in time is skipped for the next one.
         *
         * @param timeout a positive duration
         * @return this builder
         */
        public Builder dialTimeout(Duration timeout) {
            if (timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("dialTimeout must be positive");
            }
            this.dialTimeout = timeout;
            return this;
        }

        /**
         * Connect to the members over TLS (default: plaintext). The options' files are read by {@link #build()},
         * which fails on a file it cannot use.
         *
         * @param options whom to trust and the client certificate, if any; null for plaintext
         * @return this builder
         */
        public Builder tls(TlsOptions options) {
            this.tls = options;
            return this;
        }

        /**
         * Adds a listener told of calls, retries, leader changes and failed keep-alives (for metrics); it
         * runs on the client's threads and must return quickly. May be called more than once.
         *
         * @param listener the listener
         * @return this builder
         */
        public Builder listener(ClientListener listener) {
            this.listeners.add(Objects.requireNonNull(listener, "listener"));
            return this;
        }

        /**
         * Creates the client. No connection is opened until the first call.
         *
         * @return a new client
         * @throws IllegalArgumentException if no endpoint was given, or the TLS files cannot be used
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
        return "RotaClient" + Arrays.toString(pool.endpoints().toArray());
    }
}
