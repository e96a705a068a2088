package io.rota.raft.transport;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.rota.raft.core.Message;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import java.util.stream.Collectors;

/**
 * The Netty implementation of {@link PeerTransport}.
 *
 * <p>Connection model: one TCP connection per pair of nodes, dialled by the node with the lower id and used
 * in both directions. The dialler keeps it up: after a failure or a close it dials again after an
 * exponential backoff with jitter. Messages for a peer wait in its bounded queue ({@link Peer}) until a
 * connection is up and writable.
 *
 * <p>This class only bootstraps and keeps the per-peer bookkeeping; {@link PeerChannelInitializer} builds
 * each connection's pipeline.
 *
 * <p>Log lines follow a peer's state, not its retries: one when a connection is established or
 * re-established, one when it is lost, one when the peer's port refuses connections, and one when dialling
 * starts to fail — then silence until it answers again.
 */
public final class NettyPeerTransport implements PeerTransport {

    private static final Logger log = LoggerFactory.getLogger(NettyPeerTransport.class);

    /** Lines about peers' connections; a peer that flaps cannot flood the log. */
    private static final LogLimiter linkChanges = new LogLimiter(log, 10);

    /**
     * How long a connection to a peer whose address changed is kept before it is closed: several heartbeats
     * (100 ms each by default), so that the moved member hears the commit of its own change — its
     * acknowledgement may arrive after a majority committed it, and only a later message carries the commit
     * index to it. After the close, every dial goes to the new address.
     */
    static final long ADDRESS_CHANGE_GRACE_MILLIS = 1_000;

    /**
     * A probe that a lost peer's port accepted is repeated this often, {@link #PROBES} times in all, while the
     * peer stays disconnected. A process killed with SIGKILL closes its sockets one by one: when its peer
     * connection closes before its listening socket, a probe sent at once is still accepted by the kernel
     * (a Python check here: 27 of 100 kills; 20 ms later every one was refused). One probe made the failover
     * after a leader's kill -9 take a full election timeout instead of a tick about one time in three.
     */
    static final long PROBE_INTERVAL_MILLIS = 25;
    static final int PROBES = 8;

    private final TransportConfig config;
    private final ConcurrentMap<Long, Peer> peers = new ConcurrentHashMap<>();
    private final ConnectionEvents events = new Events();

    private volatile Consumer<Message> inbound;
    private volatile LongConsumer peerDown;
    /** Hears of snapshot transfers that broke off (see {@link PeerTransport#start(Consumer, LongConsumer, LongConsumer)}). */
    private volatile LongConsumer snapshotFailed = peer -> { };
    private volatile boolean closed;
    private boolean started;
    private EventLoopGroup group;
    private Channel serverChannel;
    private volatile Bootstrap dialer;
    private volatile PeerAdmission admission = PeerAdmission.OPEN;
    /** Mutual TLS on every peer connection, or null (plaintext, the default). */
    private volatile TlsContexts tls;
    private volatile PeerIdentity identity;
    /**
     * The one event loop of a transport made by {@link #withDriverLoop}, on which the Raft driver runs its turns
     * too; null for a transport with a loop group of its own ({@link TransportConfig#ioThreads()} threads).
     */
    private final EventLoop driverLoop;
    /** Peers given messages by sends on {@link #driverLoop} since the last {@link #flush()}; loop-confined. */
    private final ArrayDeque<Peer> sentOnLoop = new ArrayDeque<>();

    public NettyPeerTransport(TransportConfig config) {
        this.config = Objects.requireNonNull(config, "config");
        this.driverLoop = null;
    }

    private NettyPeerTransport(TransportConfig config, String threadName) {
        this.config = Objects.requireNonNull(config, "config");
        ThreadFactory named = r -> {
            Thread t = new Thread(r, threadName);
            t.setDaemon(true);
            return t;
        };
        this.group = new MultiThreadIoEventLoopGroup(1, named, NioIoHandler.newFactory());
        this.driverLoop = group.next();
    }

    /**
     * A transport whose connections all live on one event loop, named {@code threadName}, that a Raft driver
     * started with {@code RaftDriver.Execution.onTransportLoop(driverLoop())} also runs its turns on (design.md P11):
     * the driver's messages to peers are written by the thread that made them, and peers' messages reach the
     * driver without waking another thread. The loop blocks while the driver fsyncs, which the driver thread
     * did anyway; a peer's frames wait in the socket meanwhile.
     */
    public static NettyPeerTransport withDriverLoop(TransportConfig config, String threadName) {
        return new NettyPeerTransport(config, threadName);
    }

    /**
     * The event loop a driver should run on ({@link #withDriverLoop}); empty for an ordinary transport. A
     * server may serve its client connections on it too (design.md P15), so that a request is stepped and
     * answered by the thread that read it.
     */
    public Optional<EventLoop> driverLoop() {
        return Optional.ofNullable(driverLoop);
    }

    /** Who is admitted beyond the handshake's checks (default {@link PeerAdmission#OPEN}); set before start. */
    public synchronized void setAdmission(PeerAdmission admission) {
        if (started) {
            throw new IllegalStateException("set the admission before start");
        }
        this.admission = Objects.requireNonNull(admission, "admission");
    }

    /**
     * Mutual TLS for every peer connection (set before start): both sides present a certificate chaining to
     * the peer CA in {@code tls}, and {@code identity} checks that it names the member the handshake claims.
     * New connections take {@code tls}'s contexts current at their start, so a reloaded certificate is used
     * from the next (re)connection on.
     */
    public synchronized void setTls(TlsContexts tls, PeerIdentity identity) {
        if (started) {
            throw new IllegalStateException("set TLS before start");
        }
        this.tls = Objects.requireNonNull(tls, "tls");
        this.identity = Objects.requireNonNull(identity, "identity");
    }

    /**
     * Learn (or change) the address of peer {@code id} while running (issue 13: a member added to the
     * cluster; `member update`: a member moved). The handshake admits ids of the peers table, so this also
     * admits it. A changed address closes the connection the peer has now: a dialler's next dial reads the
     * table, so it goes to the new address at once instead of keeping a link to where the member no longer
     * is meant to be (etcd's transport likewise redials a peer whose URLs were updated).
     */
    public void addPeer(long id, InetSocketAddress address) {
        if (id == config.selfId()) {
            return;
        }
        InetSocketAddress before = config.peers().put(id, address);
        if (!sameEndpoint(address, before)) {
            log.info("Node {} knows peer {} at {}", config.selfId(), id, address);
            if (before != null) {
                closeConnection(id, ADDRESS_CHANGE_GRACE_MILLIS);
            }
        }
    }

    /**
     * Whether two peer addresses name the same endpoint: host as written and port. {@code equals} is not
     * enough: a member's published address is unresolved (looked up at each dial) while the initial cluster's
     * is resolved, and the two are never equal, so every member's own publication used to drop and redial a
     * good connection at start.
     */
    static boolean sameEndpoint(InetSocketAddress a, InetSocketAddress b) {
        return b != null && a.getPort() == b.getPort() && a.getHostString().equals(b.getHostString());
    }

    /**
     * Forget peer {@code id} (a member removed from the cluster): its connection closes and the handshake
     * refuses it from now on; messages still queued for it are dropped with the connection.
     */
    public void removePeer(long id) {
        if (config.peers().remove(id) == null) {
            return;
        }
        log.info("Node {} forgets peer {} (removed from the cluster)", config.selfId(), id);
        closeConnection(id, 0);
    }

    private void closeConnection(long id, long afterMillis) {
        Peer peer = peers.get(id);
        if (peer != null) {
            Channel ch = peer.channel();
            if (ch != null) {
                // After whatever its event loop has queued for it (messages sent before the change go out first),
                // and for an address change after the grace above.
                Runnable close = ch::close;
                try {
                    ch.eventLoop().schedule(close, afterMillis, TimeUnit.MILLISECONDS);
                } catch (RejectedExecutionException shuttingDown) {
                    ch.close();
                }
            }
        }
    }

    /** The peers this transport knows now, by id. */
    public Map<Long, InetSocketAddress> knownPeers() {
        return Map.copyOf(config.peers());
    }

    @Override
    public synchronized void start(Consumer<Message> inbound, LongConsumer peerDown, LongConsumer snapshotFailed) {
        this.snapshotFailed = Objects.requireNonNull(snapshotFailed, "snapshotFailed");
        start(inbound, peerDown);
    }

    @Override
    public synchronized void start(Consumer<Message> inbound, LongConsumer peerDown) {
        if (started) {
            throw new IllegalStateException("already started");
        }
        started = true;
        this.inbound = Objects.requireNonNull(inbound, "inbound");
        this.peerDown = Objects.requireNonNull(peerDown, "peerDown");
        if (group == null) {
            group = new MultiThreadIoEventLoopGroup(config.ioThreads(), NioIoHandler.newFactory());
        }
        WriteBufferWaterMark waterMark =
                new WriteBufferWaterMark(config.writeBufferLowBytes(), config.writeBufferHighBytes());
        ChannelFuture bound = new ServerBootstrap()
                .group(group)
                .channel(NioServerSocketChannel.class)
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.SO_KEEPALIVE, true)
                .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, waterMark)
                .childHandler(PeerChannelInitializer.accepting(config, events, admission, tls, identity))
                .bind(config.listenAddress())
                .awaitUninterruptibly();
        if (!bound.isSuccess()) {
            group.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
            throw new IllegalStateException("node " + config.selfId() + " cannot listen on "
                    + config.listenAddress() + ": " + bound.cause(), bound.cause());
        }
        serverChannel = bound.channel();
        dialer = new Bootstrap()
                .group(group)
                .channel(NioSocketChannel.class)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.SO_KEEPALIVE, true)
                .option(ChannelOption.WRITE_BUFFER_WATER_MARK, waterMark)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) config.connectTimeout().toMillis());
        // Peers' addresses may be learnt after start; look for new ones to dial now and then.
        long scanMillis = config.reconnectBackoffMin().toMillis();
        group.scheduleAtFixedRate(this::dialKnownPeers, 0, scanMillis, TimeUnit.MILLISECONDS);
        log.info("Node {} of cluster '{}' listens for peers on {}{}", config.selfId(), config.clusterId(),
                localAddress(), tls == null ? "" : " (mutual TLS, " + tls.provider().name().toLowerCase()
                        + ", certificate serial " + tls.serial() + ")");
    }

    @Override
    public InetSocketAddress localAddress() {
        if (serverChannel == null) {
            throw new IllegalStateException("not started");
        }
        return (InetSocketAddress) serverChannel.localAddress();
    }

    @Override
    public boolean send(Message message) {
        Objects.requireNonNull(message, "message");
        if (message.to() == config.selfId()) {
            throw new IllegalArgumentException("node " + config.selfId() + " cannot send to itself: " + message);
        }
        Peer peer = peer(message.to());
        if (closed || !peer.offer(message)) {
            return false;
        }
        if (driverLoop != null && driverLoop.inEventLoop()) {
            // The driver on its loop: written by flush() at the end of its batch of sends (before its fsync).
            if (!peer.flushPending) {
                peer.flushPending = true;
                if (sentOnLoop.isEmpty()) {
                    driverLoop.execute(this::flush);  // for a sender that never flushes: after its task (no wake-up)
                }
                sentOnLoop.add(peer);
            }
        } else {
            peer.scheduleDrain();
        }
        dial(peer);
        return true;
    }

    @Override
    public void flush() {
        if (driverLoop == null || !driverLoop.inEventLoop()) {
            return;
        }
        for (Peer peer; (peer = sentOnLoop.poll()) != null; ) {
            peer.flushPending = false;
            peer.drainNow();
            // Not connected yet: the connection's activation writes them.
        }
    }

    @Override
    public Set<Long> connectedPeers() {
        return peers.values().stream()
                .filter(p -> p.channel() != null)
                .map(p -> p.id)
                .collect(Collectors.toUnmodifiableSet());
    }

    /** Counters per peer, for status pages. */
    public Map<Long, PeerStats> stats() {
        Map<Long, PeerStats> stats = new TreeMap<>();
        peers.forEach((id, peer) -> stats.put(id, peer.stats()));
        return stats;
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (serverChannel == null) {
            if (group != null) {
                group.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
            }
            return;
        }
        serverChannel.close().awaitUninterruptibly(1, TimeUnit.SECONDS);
        for (Peer peer : peers.values()) {
            Channel ch = peer.channel();
            if (ch != null) {
                ch.close();
            }
        }
        group.shutdownGracefully(20, 2000, TimeUnit.MILLISECONDS).awaitUninterruptibly(3, TimeUnit.SECONDS);
        log.info("Node {} closed its peer transport", config.selfId());
    }

    private Peer peer(long id) {
        return peers.computeIfAbsent(id, i -> new Peer(i, config, peer -> snapshotFailed.accept(peer)));
    }

    private void dialKnownPeers() {
        for (long id : config.peers().keySet()) {
            if (id > config.selfId()) {
                dial(peer(id));
            }
        }
    }

    /** Starts a dial cycle to a higher-id peer unless one is running. Any thread. */
    private void dial(Peer peer) {
        if (peer.id < config.selfId() || dialer == null || closed || peer.dialling.get()
                || !peer.dialling.compareAndSet(false, true)) {
            return;
        }
        InetSocketAddress address = config.peers().get(peer.id);
        if (address == null) {
            peer.dialling.set(false);
            return;
        }
        peer.countDialAttempt();
        long connectionsBefore = peer.connections();
        ChannelFuture connect;
        try {
            connect = dialer.clone()
                    .handler(PeerChannelInitializer.dialling(config, peer.id, events, admission, tls, identity))
                    .connect(address);
        } catch (RejectedExecutionException shuttingDown) {
            return;
        }
        connect.addListener((ChannelFuture f) -> {
            if (f.isSuccess()) {
                // Handshake refusals and later disconnects both end here; a disconnect was logged already.
                f.channel().closeFuture().addListener(c -> redialLater(peer, address,
                        peer.connections() > connectionsBefore ? null
                                : "the connection closed before the handshake completed (see that node's log)"));
            } else {
                redialLater(peer, address, String.valueOf(f.cause().getMessage()));
            }
        });
    }

    /**
     * Ends a dial cycle: dial again after an exponential backoff with jitter. {@code failure} says why the
     * dial failed, or is null when a handshaken connection ended; the first failure since the peer was last
     * connected is logged, the retries are not.
     */
    private void redialLater(Peer peer, InetSocketAddress address, String failure) {
        if (closed) {
            return;
        }
        int failures = peer.failedDials.incrementAndGet();
        long delayMillis = backoffMillis(failures);
        if (failure != null && peer.unreachableReported.compareAndSet(false, true)) {
            linkChanges.info("Node {} cannot reach peer {} at {}: {}; dialling again with backoff (up to {} ms), "
                            + "quietly until it answers", config.selfId(), peer.id, address, failure,
                    config.reconnectBackoffMax().toMillis());
        }
        try {
            group.schedule(() -> {
                peer.dialling.set(false);
                dial(peer);
            }, delayMillis, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException shuttingDown) {
            // closing: no more dials
        }
    }

    /**
     * After a connection to {@code peerId} closed: is its process still there? One bare TCP connect, closed
     * at once (the peer's handshake handler drops it silently). A refused connect means nothing listens
     * on the peer's port any more — it crashed or was killed — and the node hears of it at once instead of
     * after an election timeout. An accepted connect is asked again {@link #PROBES} times while the peer stays
     * disconnected (a dying process may accept for a moment); a timeout says nothing and is ignored.
     */
    private void probe(long peerId, int probesLeft) {
        InetSocketAddress address = config.peers().get(peerId);
        Bootstrap d = dialer;
        if (address == null || d == null || closed || peer(peerId).channel() != null) {
            return;   // forgotten, closing, or connected again: nothing to find out
        }
        try {
            d.clone().handler(new ChannelInboundHandlerAdapter()).connect(address).addListener((ChannelFuture f) -> {
                if (f.isSuccess()) {
                    f.channel().close();
                    if (probesLeft > 1) {   // accepted by a process that may be dying: ask again (PROBES)
                        f.channel().eventLoop().schedule(() -> probe(peerId, probesLeft - 1), PROBE_INTERVAL_MILLIS,
                                TimeUnit.MILLISECONDS);
                    }
                } else if (f.cause() instanceof ConnectException && !closed) {
                    peer(peerId).unreachableReported.set(true); // this line says it; the redials need not
                    linkChanges.info("Node {}: peer {} refuses connections at {}; its process is gone",
                            config.selfId(), peerId, address);
                    peerDown.accept(peerId);
                }
            });
        } catch (RejectedExecutionException shuttingDown) {
            // closing: nothing to report
        }
    }

    /** Backoff after the n-th consecutive failure: min·2^(n-1), capped at max, with "equal jitter". */
    private long backoffMillis(int failures) {
        long min = config.reconnectBackoffMin().toMillis();
        long max = config.reconnectBackoffMax().toMillis();
        long backoff = Math.min(max, min << Math.min(failures - 1, 30));
        long half = Math.max(1, backoff / 2);
        return half + ThreadLocalRandom.current().nextLong(half + 1);
    }

    /** The handlers' reports; called on event loops. */
    private final class Events implements ConnectionEvents {

        @Override
        public void connected(long peerId, Channel channel) {
            if (closed) {
                channel.close();
                return;
            }
            Peer peer = peer(peerId);
            boolean again = peer.connections() > 0;
            Channel replaced = peer.attach(channel);
            if (replaced != null && replaced != channel) {
                linkChanges.info("Node {}: peer {} reconnected; closing its previous connection", config.selfId(),
                        peerId);
                replaced.close();
            }
            linkChanges.info("Node {} {} peer {} ({} {})", config.selfId(), again ? "reconnected to" : "connected to",
                    peerId, peerId > config.selfId() ? "dialled" : "accepted from", channel.remoteAddress());
            peer.scheduleDrain();
        }

        @Override
        public void disconnected(long peerId, Channel channel) {
            peer(peerId).abandonSnapshot(channel);
            if (peer(peerId).detach(channel) && !closed) {
                linkChanges.info("Node {} lost its connection to peer {} ({})", config.selfId(), peerId,
                        channel.remoteAddress());
                probe(peerId, PROBES);
            }
        }

        @Override
        public void writable(long peerId, Channel channel) {
            peer(peerId).scheduleDrain();
        }

        @Override
        public void delivered(long peerId, Message message) {
            Peer peer = peer(peerId);
            peer.countReceived();
            peer.noteReceived(message);
            inbound.accept(message);
        }

        @Override
        public void rejected(long peerId) {
            peer(peerId).countRejected();
        }

        @Override
        public void refusedBy(long peerId, String reason) {
            admission.refusedBy(peerId, reason);
        }
    }
}
