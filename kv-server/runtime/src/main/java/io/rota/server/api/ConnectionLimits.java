package io.rota.server.api;

import java.time.Duration;

/**
 * What one hostile or broken client can cost a member on its ports (issue 33, item 4), each a flag of
 * {@code rota server}. The native client port applies the first four; the etcd port applies
 * {@link #maxConnections}, {@link #idleTimeout} and the gRPC ones; the peer port
 * {@link #maxPeerPendingHandshakes}. Per-user quotas (leases, sessions) are not here: they count what a user
 * holds across connections.
 *
 * @param maxConnections      open connections per port ({@code --max-client-connections}); past it a new one
 *                            is accepted and closed at once, with a rate-limited log line
 * @param idleTimeout         a connection with no call in flight, no watch and no traffic either way for this
 *                            long is closed ({@code --client-idle-timeout}); the SDK dials again on its next call
 * @param maxPendingBytes     answers buffered for one client that does not read them
 *                            ({@code --max-client-pending-bytes}); past it the connection is closed
 * @param unwritableTimeout   how long a connection may stay paused (its buffered answers above the write-buffer
 *                            high-water mark, so this member stopped reading its requests) before it is closed
 *                            ({@code --client-unwritable-timeout})
 * @param maxConcurrentStreams gRPC streams per etcd connection ({@code --max-concurrent-streams}, etcd's flag);
 *                            the stream past it is refused (REFUSED_STREAM)
 * @param keepaliveMinTime    the most often an etcd client may ping ({@code --grpc-keepalive-min-time}, etcd's
 *                            flag); pinging more often gets the connection closed (too_many_pings)
 * @param keepaliveInterval   how often the etcd port pings an idle client ({@code --grpc-keepalive-interval})
 * @param keepaliveTimeout    how long it waits for the ping's answer before closing
 *                            ({@code --grpc-keepalive-timeout})
 * @param maxPeerPendingHandshakes peer connections accepted whose handshake has not completed
 *                            ({@code --max-peer-pending-handshakes}); past it a new one is closed at once
 */
public record ConnectionLimits(int maxConnections, Duration idleTimeout, long maxPendingBytes,
                               Duration unwritableTimeout, int maxConcurrentStreams, Duration keepaliveMinTime,
                               Duration keepaliveInterval, Duration keepaliveTimeout, int maxPeerPendingHandshakes) {

    /** 4,096 connections: hundreds of SDK clients (one connection per member each) with room to spare. */
    public static final int DEFAULT_MAX_CONNECTIONS = 4_096;
    /** 5 minutes: an SDK that stopped calling reconnects when it calls again; a forgotten socket is freed. */
    public static final Duration DEFAULT_IDLE_TIMEOUT = Duration.ofMinutes(5);
    /** 64 MiB of answers buffered for one client: a few large range answers, far from a heap's size. */
    public static final long DEFAULT_MAX_PENDING_BYTES = 64L << 20;
    /** 60 s paused: a reader in a long GC pause or on a slow link catches up; one that never reads is dropped. */
    public static final Duration DEFAULT_UNWRITABLE_TIMEOUT = Duration.ofSeconds(60);
    /** 1,024 streams per etcd connection: watches, keep-alives and calls of one client, not a flood. */
    public static final int DEFAULT_MAX_CONCURRENT_STREAMS = 1_024;
    /**
     * 1 s: etcd's default is 5 s, but etcdctl pings every 2 s (--keepalive-time) and such clients must not be
     * cut off (the value before issue 33).
     */
    public static final Duration DEFAULT_KEEPALIVE_MIN_TIME = Duration.ofSeconds(1);
    /** 2 h, etcd's default: the server pings a silent client this often. */
    public static final Duration DEFAULT_KEEPALIVE_INTERVAL = Duration.ofHours(2);
    /** 20 s, etcd's default: an unanswered ping closes the connection. */
    public static final Duration DEFAULT_KEEPALIVE_TIMEOUT = Duration.ofSeconds(20);

    /** Every default. */
    public static final ConnectionLimits DEFAULTS = new ConnectionLimits(DEFAULT_MAX_CONNECTIONS,
            DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_PENDING_BYTES, DEFAULT_UNWRITABLE_TIMEOUT,
            DEFAULT_MAX_CONCURRENT_STREAMS, DEFAULT_KEEPALIVE_MIN_TIME, DEFAULT_KEEPALIVE_INTERVAL,
            DEFAULT_KEEPALIVE_TIMEOUT, io.rota.raft.transport.TransportConfig.DEFAULT_MAX_PENDING_HANDSHAKES);

    /** Checks every field; throws {@link IllegalArgumentException} naming the flag. */
    public ConnectionLimits {
        require(maxConnections >= 1, "--max-client-connections must be at least 1, got " + maxConnections);
        require(positive(idleTimeout), "--client-idle-timeout must be positive, got " + idleTimeout);
        require(maxPendingBytes >= 1 << 20, "--max-client-pending-bytes must be at least 1 MiB (1048576): the"
                + " write buffer pauses a connection at " + ClientServer.WRITE_BUFFER_HIGH_BYTES + ", got "
                + maxPendingBytes);
        require(positive(unwritableTimeout), "--client-unwritable-timeout must be positive, got " + unwritableTimeout);
        require(maxConcurrentStreams >= 1, "--max-concurrent-streams must be at least 1, got " + maxConcurrentStreams);
        require(positive(keepaliveMinTime), "--grpc-keepalive-min-time must be positive, got " + keepaliveMinTime);
        require(positive(keepaliveInterval), "--grpc-keepalive-interval must be positive, got " + keepaliveInterval);
        require(positive(keepaliveTimeout), "--grpc-keepalive-timeout must be positive, got " + keepaliveTimeout);
        require(maxPeerPendingHandshakes >= 1, "--max-peer-pending-handshakes must be at least 1, got "
                + maxPeerPendingHandshakes);
    }

    private static boolean positive(Duration d) {
        return d != null && !d.isNegative() && !d.isZero();
    }

    private static void require(boolean condition, String message) {
        if (!condition) {
            throw new IllegalArgumentException(message);
        }
    }
}
