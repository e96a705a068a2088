package io.rota.raft.transport;

import io.netty.channel.Channel;
import io.netty.util.AttributeKey;
import io.rota.proto.RaftMessage;
import io.rota.raft.core.Message;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Iterator;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

/**
 * The transport's view of one peer: its bounded outbound queue, its current connection and its counters.
 *
 * <p>Sending is a hand-off: {@link #offer} (any thread, never blocks) appends to the queue, and
 * {@link #scheduleDrain} asks the connection's event loop to write what is queued. The drain writes while the
 * connection is writable and flushes per batch, so a burst of small messages shares one syscall; when
 * the connection is above its high water mark, messages stay queued until it drains below the low one.
 */
final class Peer {

    private static final Logger log = LoggerFactory.getLogger(Peer.class);

    /** Chunks of a snapshot being written on a connection; confined to that connection's event loop. */
    private static final AttributeKey<Iterator<RaftMessage>> SNAPSHOT_IN_FLIGHT =
            AttributeKey.valueOf(Peer.class, "snapshotInFlight");

    /** Flush at least this often within one drain, so the first bytes of a long batch leave early. */
    private static final int MAX_WRITES_PER_FLUSH = 256;

    final long id;
    private final TransportConfig config;

    private final Queue<Message> queue = new ConcurrentLinkedQueue<>();
    private final AtomicInteger queuedMessages = new AtomicInteger();
    private final AtomicLong queuedBytes = new AtomicLong();
    private final AtomicBoolean drainScheduled = new AtomicBoolean();
    private final AtomicReference<Channel> channel = new AtomicReference<>();

    /** True while this side has a dial cycle going: connecting, connected, or waiting to reconnect. */
    final AtomicBoolean dialling = new AtomicBoolean();
    /** Consecutive failed dials, for the backoff; reset by a successful handshake. */
    final AtomicInteger failedDials = new AtomicInteger();
    /** The current streak of failed dials has been logged; reset by a successful handshake. */
    final AtomicBoolean unreachableReported = new AtomicBoolean();

    private final LongAdder sent = new LongAdder();
    private final LongAdder dropped = new LongAdder();
    private final LongAdder received = new LongAdder();
    private final LongAdder connections = new LongAdder();
    private final LongAdder dialAttempts = new LongAdder();
    private final LongAdder rejected = new LongAdder();

    Peer(long id, TransportConfig config) {
        this.id = id;
        this.config = config;
    }

    /** Queues a message unless the queue is at its message or byte limit (then the newest is dropped). */
    boolean offer(Message message) {
        long bytes = MessageCodec.estimatedBytes(message);
        int count = queuedMessages.incrementAndGet();
        if (count > config.perPeerQueueLimit()) {
            queuedMessages.decrementAndGet();
            dropped.increment();
            return false;
        }
        // A message larger than the byte budget still goes into an empty queue, or it could never be sent.
        if (queuedBytes.addAndGet(bytes) > config.perPeerQueueBytes() && count > 1) {
            queuedBytes.addAndGet(-bytes);
            queuedMessages.decrementAndGet();
            dropped.increment();
            return false;
        }
        queue.add(message);
        return true;
    }

    /** Makes {@code ch} this peer's connection; returns the connection it replaces, if any. */
    Channel attach(Channel ch) {
        connections.increment();
        failedDials.set(0);
        unreachableReported.set(false);
        return channel.getAndSet(ch);
    }

    /** Forgets {@code ch} if it is still the current connection; true if it was. */
    boolean detach(Channel ch) {
        return channel.compareAndSet(ch, null);
    }

    Channel channel() {
        return channel.get();
    }

    void countDialAttempt() {
        dialAttempts.increment();
    }

    void countReceived() {
        received.increment();
    }

    void countRejected() {
        rejected.increment();
    }

    /** Handshaken connections so far; 0 until the first one. */
    long connections() {
        return connections.sum();
    }

    /** Asks the current connection's event loop to write the queue, unless a drain is already pending. */
    void scheduleDrain() {
        Channel ch = channel.get();
        if (ch != null && drainScheduled.compareAndSet(false, true)) {
            try {
                ch.eventLoop().execute(() -> drain(ch));
            } catch (RejectedExecutionException shuttingDown) {
                drainScheduled.set(false);
            }
        }
    }

    /**
     * Writes queued messages while {@code ch} is writable, flushing every {@value #MAX_WRITES_PER_FLUSH}
     * writes and at the end, so a burst of messages shares a few syscalls. Runs on ch's event loop. While
     * it runs, {@code drainScheduled} stays set, so senders add to the batch instead of scheduling more tasks.
     */
    private void drain(Channel ch) {
        if (ch != channel.get() || !ch.isActive()) {
            drainScheduled.set(false);
            return;
        }
        Iterator<RaftMessage> chunks = ch.attr(SNAPSHOT_IN_FLIGHT).get();
        int unflushed = 0;
        while (ch.isWritable()) {
            if (unflushed >= MAX_WRITES_PER_FLUSH) {
                ch.flush();
                unflushed = 0;
            }
            if (chunks != null && chunks.hasNext()) {
                ch.write(chunks.next(), ch.voidPromise());
                unflushed++;
                continue;
            }
            chunks = null;
            Message message = queue.poll();
            if (message == null) {
                break;
            }
            queuedMessages.decrementAndGet();
            queuedBytes.addAndGet(-MessageCodec.estimatedBytes(message));
            if (message instanceof Message.InstallSnapshot snapshot) {
                chunks = MessageCodec.snapshotChunks(snapshot, config.snapshotChunkBytes());
                sent.increment();
                continue;
            }
            RaftMessage frame = MessageCodec.toProto(message);
            if (frame.getSerializedSize() > config.maxFrameBytes()) {
                log.warn("Dropping {} to peer {}: its frame of {} bytes exceeds the maximum of {} bytes",
                        message, id, frame.getSerializedSize(), config.maxFrameBytes());
                dropped.increment();
                continue;
            }
            ch.write(frame, ch.voidPromise());
            sent.increment();
            unflushed++;
        }
        ch.attr(SNAPSHOT_IN_FLIGHT).set(chunks);
        if (unflushed > 0) {
            ch.flush();
        }
        drainScheduled.set(false);
        // A message offered between our last poll and the line above found the flag set and did not schedule
        // a drain; pick it up. If the channel is unwritable, the writability event will.
        if (!queue.isEmpty() && ch.isWritable()) {
            scheduleDrain();
        }
    }

    PeerStats stats() {
        return new PeerStats(sent.sum(), dropped.sum(), received.sum(), queuedMessages.get(), connections.sum(),
                dialAttempts.sum(), rejected.sum());
    }
}
