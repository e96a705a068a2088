package io.rota.client;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.ssl.SslContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The members a client knows and its connections to them: one {@link Connection} per member, opened on
 * first use and reopened after it closes; and which member to try first — the last one that answered, or
 * the leader a hint named ({@link #preferred()}) — and which to try after one fails ({@link #after}).
 * Any member accepts any call (a follower forwards writes to its leader), so the preference only saves a hop.
 * Thread-safe.
 */
final class ConnectionPool {

    private static final Logger log = LoggerFactory.getLogger(ConnectionPool.class);

    private final List<String> endpoints;
    private final Bootstrap bootstrap;
    /** TLS for every connection, or null for plaintext. */
    private final SslContext tls;
    private final AuthTokens tokens;
    private final ConcurrentHashMap<String, CompletableFuture<Connection>> connections = new ConcurrentHashMap<>();
    /** The member calls go to first: the last one that answered, or the leader a hint named. */
    private volatile String preferred;
    /** The leader the last hint named (null until one did): to log leader changes once. */
    private volatile String knownLeader;
    /** Members this client has connected to before: opening one again is a reconnect (logged INFO). */
    private final java.util.Set<String> everConnected = ConcurrentHashMap.newKeySet();

    /**
     * @param endpoints      the configured members' client addresses, in the order given (at least one)
     * @param eventLoop      the client's event loop, which the connections run on
     * @param connectTimeout how long opening a connection may take (at least 100 ms is used)
     */
    ConnectionPool(List<String> endpoints, EventLoopGroup eventLoop, Duration connectTimeout) {
        this(endpoints, eventLoop, connectTimeout, null, AuthTokens.NONE);
    }

    /**
     * As {@link #ConnectionPool(List, EventLoopGroup, Duration)}, every connection over TLS with {@code tls}
     * when it is not null, and carrying the client's login.
     *
     * @param tokens the client's login, whose token every connection attaches to its frames
     */
    ConnectionPool(List<String> endpoints, EventLoopGroup eventLoop, Duration connectTimeout, SslContext tls,
                   AuthTokens tokens) {
        this.tls = tls;
        this.tokens = tokens;
        if (endpoints.isEmpty()) {
            throw new IllegalArgumentException("at least one endpoint (host:port) is required");
        }
        this.endpoints = List.copyOf(endpoints);
        this.preferred = this.endpoints.get(0);
        this.bootstrap = new Bootstrap().group(eventLoop).channel(NioSocketChannel.class)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS,
                        (int) Math.max(100, Math.min(Integer.MAX_VALUE, connectTimeout.toMillis())));
    }

    /** The client's login (its current token, and renewing it). */
    AuthTokens tokens() {
        return tokens;
    }

    /** The configured endpoints, in the order given. */
    List<String> endpoints() {
        return endpoints;
    }

    /** The member calls go to first. */
    String preferred() {
        return preferred;
    }

    /** {@code endpoint} answered (or a hint named it the leader): go there first from now on. */
    void prefer(String endpoint) {
        preferred = endpoint;
    }

    /** The leader named by the last hint, or null before one. */
    String knownLeader() {
        return knownLeader;
    }

    /**
     * A member named {@code leader} the leader (answering from {@code from}): go there first, and log a
     * leader this client had not followed before.
     */
    void leaderHint(String leader, String from) {
        String previous = knownLeader;
        knownLeader = leader;
        preferred = leader;
        if (!leader.equals(previous)) {
            log.info("Rota leader is now {} (hint from {}; was {})", leader, from, previous == null ? "unknown" : previous);
        }
    }

    /** Stop preferring {@code endpoint} (it failed): the next configured one goes first. */
    void avoid(String endpoint) {
        if (endpoint.equals(preferred)) {
            preferred = after(endpoint);
        }
    }

    /**
     * The configured member after {@code failed}, in the configured order, wrapping around; the first one
     * if {@code failed} is not configured (a hinted leader, say).
     */
    String after(String failed) {
        return endpoints.get((endpoints.indexOf(failed) + 1) % endpoints.size());
    }

    /** The open connection to {@code endpoint}, or one being opened (shared by concurrent callers). */
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
            Connection.open(bootstrap, tls, endpoint, tokens, () -> {
                        log.debug("connection to {} closed", endpoint);
                        connections.remove(endpoint, created);
                    })
                    .whenComplete((c, e) -> {
                        if (e != null) {
                            log.debug("cannot connect to {}: {}", endpoint, e.getMessage());
                            connections.remove(endpoint, created);
                            created.completeExceptionally(e);
                        } else {
                            if (everConnected.add(endpoint)) {
                                log.debug("connected to {}", endpoint);
                            } else {
                                log.info("Rota client reconnected to {}", endpoint);
                            }
                            created.complete(c);
                        }
                    });
            return created;
        }
    }

    /** Closes every connection (their pending calls fail with UNAVAILABLE). */
    void close() {
        for (CompletableFuture<Connection> c : connections.values()) {
            c.thenAccept(Connection::close);
        }
    }
}
