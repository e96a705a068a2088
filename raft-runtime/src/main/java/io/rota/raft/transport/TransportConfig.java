package io.rota.raft.transport;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Settings of the peer transport. Every limit has a {@code DEFAULT_} constant; {@link #builder} starts
 * from them and {@link #toBuilder} derives a changed copy. Every construction is validated, fields alone and
 * against each other; an error names the field.
 *
 * @param clusterId            names the cluster; a peer with another id is refused at the handshake
 * @param selfId               this node's id (never 0, which means "none")
 * @param listenAddress        where to accept peer connections; port 0 picks a free port
 * @param peers                the other nodes' addresses by id. A live, thread-safe map: it may be filled
 *                             or changed after start, and an address is read (and resolved) at each dial
 * @param maxFrameBytes        largest frame (without its 4-byte length prefix) sent or accepted
 * @param perPeerQueueLimit    messages queued per peer before new ones are dropped
 * @param perPeerQueueBytes    estimated bytes queued per peer before new ones are dropped (a single
 *                             message larger than this is still accepted into an empty queue)
 * @param snapshotChunkBytes   snapshot bytes per InstallSnapshot frame
 * @param maxSnapshotBytes     largest snapshot a receiver accepts; larger ones are rejected. A sanity bound:
 *                             snapshots stream to disk, and the receiver checks the disk has room first
 * @param reconnectBackoffMin  first reconnect delay; doubles per failed attempt, with jitter
 * @param reconnectBackoffMax  cap of the reconnect delay
 * @param connectTimeout       TCP connect timeout, and the time a peer has to complete the handshake
 * @param writeBufferLowBytes  a connection becomes writable again below this many unsent bytes
 * @param writeBufferHighBytes a connection stops taking writes above this many unsent bytes; messages
 *                             wait in the per-peer queue meanwhile
 * @param ioThreads            Netty event-loop threads (a transport {@code withDriverLoop} has exactly one)
 * @param snapshotDirectory    where received snapshots are written: the node's snapshot directory, so that
 *                             the finished file is adopted where it lies; null: the system's temporary
 *                             directory (tests), from which the store copies it when installing it
 * @param maxPendingHandshakes accepted connections that have not completed the handshake (TLS and peer
 *                             handshake) at one time; past it a new connection is closed at once. Strangers
 *                             who reach the port hold at most this many sockets, each limited to
 *                             {@link PeerFrameDecoder#HANDSHAKE_MAX_FRAME_BYTES} and {@code connectTimeout}
 */
public record TransportConfig(String clusterId, long selfId, InetSocketAddress listenAddress,
                              Map<Long, InetSocketAddress> peers, int maxFrameBytes, int perPeerQueueLimit,
                              long perPeerQueueBytes, int snapshotChunkBytes, long maxSnapshotBytes,
                              Duration reconnectBackoffMin, Duration reconnectBackoffMax, Duration connectTimeout,
                              int writeBufferLowBytes, int writeBufferHighBytes, int ioThreads,
                              Path snapshotDirectory, int maxPendingHandshakes) {

    /** 8 MiB: an AppendEntries of 1 MiB of entries, or one large entry, with room to spare. */
    public static final int DEFAULT_MAX_FRAME_BYTES = 8 << 20;
    /** 4,096 messages queued per peer: a busy pipeline's worth; beyond it Raft's retries take over. */
    public static final int DEFAULT_PER_PEER_QUEUE_LIMIT = 4096;
    /** 64 MiB queued per peer: bounds the memory a slow or dead peer can cost. */
    public static final long DEFAULT_PER_PEER_QUEUE_BYTES = 64L << 20;
    /** 1 MiB per InstallSnapshot frame: far below the frame limit, so heartbeats interleave with it. */
    public static final int DEFAULT_SNAPSHOT_CHUNK_BYTES = 1 << 20;
    /** 1 TiB: snapshots stream from disk to disk, so the bound is the receiver's free space, checked first. */
    public static final long DEFAULT_MAX_SNAPSHOT_BYTES = 1L << 40;
    /** 50 ms first reconnect delay: a restarted peer is back within a heartbeat or two. */
    public static final Duration DEFAULT_RECONNECT_BACKOFF_MIN = Duration.ofMillis(50);
    /** 2 s at most between dials: a dead peer costs little, a returning one waits at most one election. */
    public static final Duration DEFAULT_RECONNECT_BACKOFF_MAX = Duration.ofSeconds(2);
    /** 3 s to connect and shake hands: longer than an election timeout, so a slow link is not a dead one. */
    public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(3);
    /** 512 KiB: a connection takes writes again once below this (Netty's water marks). */
    public static final int DEFAULT_WRITE_BUFFER_LOW_BYTES = 512 << 10;
    /** 2 MiB: above this a connection stops taking writes and messages wait in the per-peer queue. */
    public static final int DEFAULT_WRITE_BUFFER_HIGH_BYTES = 2 << 20;
    /** Two event-loop threads: peer traffic of a small cluster, leaving cores for the driver. */
    public static final int DEFAULT_IO_THREADS = 2;
    /**
     * 128 half-open peer connections: a cluster's members each hold one connection per pair, and a restart
     * storm of a few dozen members fits; a flood of strangers does not take more sockets than this.
     */
    public static final int DEFAULT_MAX_PENDING_HANDSHAKES = 128;

    /** Room for the envelope and fields around a snapshot chunk's data. */
    static final int CHUNK_HEADER_ALLOWANCE = 1024;

    /**
     * Checks every field alone and against each other; throws {@link IllegalArgumentException} naming the
     * field: a snapshot chunk must fit a frame, the backoff cap must not be below its start, and the low
     * write-buffer water mark must not be above the high one.
     */
    public TransportConfig {
        Objects.requireNonNull(clusterId, "clusterId");
        Objects.requireNonNull(listenAddress, "listenAddress");
        Objects.requireNonNull(peers, "peers");
        Objects.requireNonNull(reconnectBackoffMin, "reconnectBackoffMin");
        Objects.requireNonNull(reconnectBackoffMax, "reconnectBackoffMax");
        Objects.requireNonNull(connectTimeout, "connectTimeout");
        require(!clusterId.isBlank(), "clusterId must not be blank");
        require(selfId > 0, "selfId must be positive (0 means none), got " + selfId);
        require(!peers.containsKey(selfId), "peers must not contain selfId " + selfId);
        require(maxFrameBytes >= 4096, "maxFrameBytes must be at least 4096, got " + maxFrameBytes);
        require(perPeerQueueLimit > 0, "perPeerQueueLimit must be positive, got " + perPeerQueueLimit);
        require(perPeerQueueBytes > 0, "perPeerQueueBytes must be positive, got " + perPeerQueueBytes);
        require(snapshotChunkBytes > 0, "snapshotChunkBytes must be positive, got " + snapshotChunkBytes);
        require(snapshotChunkBytes <= maxFrameBytes - CHUNK_HEADER_ALLOWANCE, "snapshotChunkBytes ("
                + snapshotChunkBytes + ") must be at most maxFrameBytes (" + maxFrameBytes + ") - "
                + CHUNK_HEADER_ALLOWANCE + ": a chunk and its message fields travel in one frame");
        require(maxSnapshotBytes > 0, "maxSnapshotBytes must be positive, got " + maxSnapshotBytes);
        require(!reconnectBackoffMin.isNegative() && !reconnectBackoffMin.isZero(),
                "reconnectBackoffMin must be positive, got " + reconnectBackoffMin);
        require(reconnectBackoffMax.compareTo(reconnectBackoffMin) >= 0, "reconnectBackoffMax ("
                + reconnectBackoffMax + ") must be at least reconnectBackoffMin (" + reconnectBackoffMin + ")");
        require(!connectTimeout.isNegative() && !connectTimeout.isZero(),
                "connectTimeout must be positive, got " + connectTimeout);
        require(writeBufferLowBytes > 0, "writeBufferLowBytes must be positive, got " + writeBufferLowBytes);
        require(writeBufferLowBytes <= writeBufferHighBytes, "writeBufferLowBytes (" + writeBufferLowBytes
                + ") must be at most writeBufferHighBytes (" + writeBufferHighBytes + ")");
        require(ioThreads > 0, "ioThreads must be positive, got " + ioThreads);
        require(maxPendingHandshakes > 0, "maxPendingHandshakes must be positive, got " + maxPendingHandshakes);
        peers = new ConcurrentHashMap<>(peers);
    }

    private static void require(boolean condition, String message) {
        if (!condition) {
            throw new IllegalArgumentException(message);
        }
    }

    /** A builder with every default set; peers may be added later through {@link #peers()}. */
    public static Builder builder(String clusterId, long selfId, InetSocketAddress listenAddress) {
        return new Builder(clusterId, selfId, listenAddress);
    }

    /** A builder holding this configuration, to change some of it (the peers map is copied at build). */
    public Builder toBuilder() {
        return new Builder(clusterId, selfId, listenAddress).peers(peers).maxFrameBytes(maxFrameBytes)
                .perPeerQueueLimit(perPeerQueueLimit).perPeerQueueBytes(perPeerQueueBytes)
                .snapshotChunkBytes(snapshotChunkBytes).maxSnapshotBytes(maxSnapshotBytes)
                .reconnectBackoff(reconnectBackoffMin, reconnectBackoffMax).connectTimeout(connectTimeout)
                .writeBufferWaterMarks(writeBufferLowBytes, writeBufferHighBytes).ioThreads(ioThreads)
                .snapshotDirectory(snapshotDirectory).maxPendingHandshakes(maxPendingHandshakes);
    }

    /** Where received snapshots are written: {@link #snapshotDirectory}, or the system's temporary directory. */
    public Path receivedSnapshotDirectory() {
        return snapshotDirectory != null ? snapshotDirectory : Path.of(System.getProperty("java.io.tmpdir"));
    }

    /** Builds a {@link TransportConfig}; starts from the defaults. */
    public static final class Builder {
        private final String clusterId;
        private final long selfId;
        private final InetSocketAddress listenAddress;
        private Map<Long, InetSocketAddress> peers = Map.of();
        private int maxFrameBytes = DEFAULT_MAX_FRAME_BYTES;
        private int perPeerQueueLimit = DEFAULT_PER_PEER_QUEUE_LIMIT;
        private long perPeerQueueBytes = DEFAULT_PER_PEER_QUEUE_BYTES;
        private int snapshotChunkBytes = DEFAULT_SNAPSHOT_CHUNK_BYTES;
        private long maxSnapshotBytes = DEFAULT_MAX_SNAPSHOT_BYTES;
        private Duration reconnectBackoffMin = DEFAULT_RECONNECT_BACKOFF_MIN;
        private Duration reconnectBackoffMax = DEFAULT_RECONNECT_BACKOFF_MAX;
        private Duration connectTimeout = DEFAULT_CONNECT_TIMEOUT;
        private int writeBufferLowBytes = DEFAULT_WRITE_BUFFER_LOW_BYTES;
        private int writeBufferHighBytes = DEFAULT_WRITE_BUFFER_HIGH_BYTES;
        private int ioThreads = DEFAULT_IO_THREADS;
        private Path snapshotDirectory;
        private int maxPendingHandshakes = DEFAULT_MAX_PENDING_HANDSHAKES;

        private Builder(String clusterId, long selfId, InetSocketAddress listenAddress) {
            this.clusterId = clusterId;
            this.selfId = selfId;
            this.listenAddress = listenAddress;
        }

        public Builder peers(Map<Long, InetSocketAddress> peers) {
            this.peers = peers;
            return this;
        }

        public Builder maxFrameBytes(int maxFrameBytes) {
            this.maxFrameBytes = maxFrameBytes;
            return this;
        }

        public Builder perPeerQueueLimit(int perPeerQueueLimit) {
            this.perPeerQueueLimit = perPeerQueueLimit;
            return this;
        }

        public Builder perPeerQueueBytes(long perPeerQueueBytes) {
            this.perPeerQueueBytes = perPeerQueueBytes;
            return this;
        }

        public Builder snapshotChunkBytes(int snapshotChunkBytes) {
            this.snapshotChunkBytes = snapshotChunkBytes;
            return this;
        }

        public Builder maxSnapshotBytes(long maxSnapshotBytes) {
            this.maxSnapshotBytes = maxSnapshotBytes;
            return this;
        }

        public Builder reconnectBackoff(Duration min, Duration max) {
            this.reconnectBackoffMin = min;
            this.reconnectBackoffMax = max;
            return this;
        }

        public Builder connectTimeout(Duration connectTimeout) {
            this.connectTimeout = connectTimeout;
            return this;
        }

        public Builder writeBufferWaterMarks(int lowBytes, int highBytes) {
            this.writeBufferLowBytes = lowBytes;
            this.writeBufferHighBytes = highBytes;
            return this;
        }

        public Builder ioThreads(int ioThreads) {
            this.ioThreads = ioThreads;
            return this;
        }

        public Builder snapshotDirectory(Path snapshotDirectory) {
            this.snapshotDirectory = snapshotDirectory;
            return this;
        }

        public Builder maxPendingHandshakes(int maxPendingHandshakes) {
            this.maxPendingHandshakes = maxPendingHandshakes;
            return this;
        }

        /** The configuration; throws {@link IllegalArgumentException} naming the field when it is invalid. */
        public TransportConfig build() {
            return new TransportConfig(clusterId, selfId, listenAddress, peers, maxFrameBytes, perPeerQueueLimit,
                    perPeerQueueBytes, snapshotChunkBytes, maxSnapshotBytes, reconnectBackoffMin,
                    reconnectBackoffMax, connectTimeout, writeBufferLowBytes, writeBufferHighBytes, ioThreads,
                    snapshotDirectory, maxPendingHandshakes);
        }
    }
}
