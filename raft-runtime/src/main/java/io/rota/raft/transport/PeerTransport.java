package io.rota.raft.transport;

import io.rota.raft.core.Message;

import java.net.InetSocketAddress;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.LongConsumer;

/**
 * The port through which a Raft node talks to its peers. Raft only needs "best effort, in order per
 * peer": a message may be lost, and the algorithm retries (§5.3 "if followers crash or run slowly, or if
 * network packets are lost, the leader retries AppendEntries RPCs indefinitely").
 *
 * <p>Contract: {@link #send} never blocks the caller; inbound messages are handed to the sink on I/O
 * threads, so the sink must only enqueue them (for the driver) and return.
 */
public interface PeerTransport extends AutoCloseable {

    /**
     * Bind the listen address and start; inbound messages go to the sink, called on I/O threads (the sink
     * must not block). {@code peerDown} hears, also on I/O threads, of a peer whose connection closed and
     * whose port then refused a new one: its process is gone, not merely slow.
     */
    void start(Consumer<Message> inbound, LongConsumer peerDown);

    /**
     * As {@link #start(Consumer, LongConsumer)}; {@code snapshotFailed} also hears, on I/O threads, of a
     * peer to which an InstallSnapshot transfer broke off before its last chunk (§7): the runtime tells the
     * core ({@code RaftNode.reportSnapshotFailure}), which probes that follower again. A transport that
     * hands over a snapshot as one message never loses one half-way, and may ignore it.
     */
    default void start(Consumer<Message> inbound, LongConsumer peerDown, LongConsumer snapshotFailed) {
        start(inbound, peerDown);
    }

    /** The bound address (useful when configured with port 0). */
    InetSocketAddress localAddress();

    /**
     * Queue a message for its peer; never blocks the caller. Returns false if the peer's bounded queue is
     * full and the message was dropped (Raft tolerates loss; the caller may report the peer unreachable).
     */
    boolean send(Message message);

    /**
     * Write now what {@link #send} queued from the transport's own I/O thread. A driver that runs its turns on
     * that thread (design.md P11) calls it after each batch of sends: its messages must be on the wire before
     * it blocks in its fsync (§10.2.1), not after the turn. Sends from any other thread are written by the I/O
     * thread without it; for them, and for transports without such a thread, this does nothing.
     */
    default void flush() {
    }

    /** Peers with an established, handshaken connection. */
    Set<Long> connectedPeers();

    @Override
    void close();
}
