package io.rota.raft.transport;

import io.netty.channel.Channel;
import io.netty.util.AttributeKey;
import io.rota.proto.RaftMessage;
import io.rota.raft.core.Message;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.UncheckedIOException;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongConsumer;

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

    /** The snapshot being streamed on a connection; confined to that connection's event loop. */
    private static final AttributeKey<SnapshotChunks> SNAPSHOT_IN_FLIGHT =
            AttributeKey.valueOf(Peer.class, "snapshotInFlight");

    /** Flush at least this often within one drain, so the first bytes of a long batch leave early. */
    private static final int MAX_WRITES_PER_FLUSH = 256;

    final long id;
    private final TransportConfig config;
    /** Told of a snapshot transfer to this peer that broke off before the peer acknowledged it. */
    private final LongConsumer snapshotFailed;
    /**
     * A snapshot whose last chunk was written on a connection but which the peer has not yet answered: its
     * bytes may still sit in socket buffers, so if that connection closes now the transfer failed too.
     */
    private final AtomicReference<SentSnapshot> unacknowledged = new AtomicReference<>();

    /** The connection a snapshot's last chunk went out on. */
    private record SentSnapshot(Channel channel, Message.InstallSnapshot message) {
    }

    private final Queue<Message> queue = new ConcurrentLinkedQueue<>();
    private final AtomicInteger queuedMessages = new AtomicInteger();
    private final AtomicLong queuedBytes = new AtomicLong();
    private final AtomicBoolean drainScheduled = new AtomicBoolean();
    /** In its transport's list of peers to drain at the next flush (driver on the loop; loop-confined). */
    boolean flushPending;
    private final AtomicReference<Channel> channel = new AtomicReference<>();

    /** True while this side has a dial cycle going: connecting, connected, or waiting to reconnect. */
    final AtomicBoolean dialling = new AtomicBoolean();
    /** Consecutive failed dials, for the backoff; reset by a successful handshake. */
    final AtomicInteger failedDials = new AtomicInteger();
    /** The current streak of failed dials has been logged; reset by a successful handshake. */
    final AtomicBoolean unreachableReported = new AtomicBoolean();

    private final LongAdder sent = new LongAdder();
    private final LongAdder snapshotTransfers = new LongAdder();
    private final LongAdder snapshotTransfersAbandoned = new LongAdder();
    private final LongAdder dropped = new LongAdder();
    private final LongAdder received = new LongAdder();
    private final LongAdder connections = new LongAdder();
    private final LongAdder dialAttempts = new LongAdder();
    private final LongAdder rejected = new LongAdder();

    Peer(long id, TransportConfig config, LongConsumer snapshotFailed) {
        this.id = id;
        this.config = config;
        this.snapshotFailed = snapshotFailed;
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

    /**
     * Writes the queue now: for a sender that runs on the connection's own event loop (the driver on its loop,
     * design.md P11), whose messages a scheduled drain would send only after its turn — after its fsync, and
     * after a connection it closes in that turn is gone. Even when a drain is already queued there: that one
     * then finds the queue empty. Does nothing off the loop.
     */
    void drainNow() {
        Channel ch = channel.get();
        if (ch != null && ch.eventLoop().inEventLoop()) {
            drainScheduled.set(true);
            drain(ch);
        }
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
     *
     * <p>A snapshot streams beside the queue, not in it: its next chunk is read from the file only when the
     * queue is empty and the connection writable. So heartbeats and AppendEntries never wait behind more
     * than the write buffer's high water mark of chunks, and the sender holds one chunk in memory at a time.
     */
    private void drain(Channel ch) {
        if (ch != channel.get() || !ch.isActive()) {
            drainScheduled.set(false);
            return;
        }
        SnapshotChunks transfer = ch.attr(SNAPSHOT_IN_FLIGHT).get();
        int unflushed = 0;
        while (ch.isWritable()) {
            if (unflushed >= MAX_WRITES_PER_FLUSH) {
                ch.flush();
                unflushed = 0;
            }
            Message message = queue.poll();
            if (message == null) {
                if (transfer == null) {
                    break;
                }
                RaftMessage chunk = nextChunk(transfer);
                if (chunk != null && !transfer.hasNext()) {
                    unacknowledged.set(new SentSnapshot(ch, transfer.message()));
                }
                if (chunk == null || !transfer.hasNext()) {
                    transfer = null;
                }
                if (chunk != null) {
                    ch.write(chunk, ch.voidPromise());
                    unflushed++;
                }
                continue;
            }
            queuedMessages.decrementAndGet();
            queuedBytes.addAndGet(-MessageCodec.estimatedBytes(message));
            if (message instanceof Message.InstallSnapshot snapshot) {
                if (transfer != null && transfer.sameTerm(snapshot)) {
                    // The core asked again (its retry timer), perhaps with a newer snapshot, while one of this
                    // term still streams: finish that one. Restarting would never let a transfer longer than
                    // the timer or the snapshot interval finish; the leader keeps the entries after the one
                    // under way (RaftNode.compact), so the follower continues from the log once it installs it.
                    continue;
                }
                if (transfer != null) {
                    transfer.close(); // a new term, a new leader's snapshot; the receiver restarts at offset 0
                    snapshotTransfersAbandoned.increment();
                }
                transfer = startTransfer(snapshot);
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
        ch.attr(SNAPSHOT_IN_FLIGHT).set(transfer);
        if (unflushed > 0) {
            ch.flush();
        }
        drainScheduled.set(false);
        // A message offered between our last poll and the line above found the flag set and did not schedule
        // a drain; pick it up. If the channel is unwritable, the writability event will.
        if ((!queue.isEmpty() || transfer != null) && ch.isWritable()) {
            scheduleDrain();
        }
    }

    private SnapshotChunks startTransfer(Message.InstallSnapshot snapshot) {
        try {
            SnapshotChunks transfer = MessageCodec.snapshotChunks(snapshot, config.snapshotChunkBytes());
            sent.increment();
            snapshotTransfers.increment();
            log.info("Streaming {} to peer {} in chunks of {} bytes", snapshot.snapshot(), id,
                    config.snapshotChunkBytes());
            return transfer;
        } catch (UncheckedIOException e) {
            log.warn("Cannot send {} to peer {}: {}", snapshot.snapshot(), id, e.getMessage());
            snapshotFailed.accept(id);
            return null;
        }
    }

    /** The transfer's next chunk, or null if its file failed (the transfer is then over and reported). */
    private RaftMessage nextChunk(SnapshotChunks transfer) {
        try {
            return transfer.next();
        } catch (UncheckedIOException e) {
            transfer.close();
            log.warn("Snapshot to peer {} broke off at byte {}: {}", id, transfer.offset(), e.getMessage());
            snapshotFailed.accept(id);
            return null;
        }
    }

    /**
     * {@code ch} closed: a snapshot still streaming on it, or sent whole but not yet answered, is abandoned
     * (its file closed) and reported, so the core probes the peer again instead of waiting for its retry
     * timer. On ch's event loop.
     */
    void abandonSnapshot(Channel ch) {
        SnapshotChunks transfer = ch.attr(SNAPSHOT_IN_FLIGHT).getAndSet(null);
        if (transfer != null) {
            transfer.close();
            log.info("Snapshot to peer {} abandoned at byte {} of {}: the connection closed", id, transfer.offset(),
                    transfer.message().snapshot().data().size());
            snapshotFailed.accept(id);
        }
        SentSnapshot sent = unacknowledged.get();
        if (sent != null && sent.channel() == ch && unacknowledged.compareAndSet(sent, null)) {
            log.info("Snapshot {} to peer {} was sent but not acknowledged when the connection closed",
                    sent.message().snapshot(), id);
            snapshotFailed.accept(id);
        }
    }

    /**
     * A message from the peer arrived: a successful AppendEntriesResponse of the snapshot's term reaching its
     * index answers the snapshot (§7: the follower replies once the snapshot is durable), after which a
     * closed connection loses nothing. Any other answer — to an AppendEntries sent before the snapshot, or
     * in an older term — says nothing about it, so the snapshot stays unanswered.
     */
    void noteReceived(Message message) {
        SentSnapshot sent = unacknowledged.get();
        if (sent != null && message instanceof Message.AppendEntriesResponse response && response.success()
                && response.term() == sent.message().term()
                && response.matchIndex() >= sent.message().snapshot().index()) {
            unacknowledged.compareAndSet(sent, null);
        }
    }

    PeerStats stats() {
        return new PeerStats(sent.sum(), dropped.sum(), received.sum(), queuedMessages.get(), connections.sum(),
                dialAttempts.sum(), rejected.sum(), snapshotTransfers.sum(), snapshotTransfersAbandoned.sum());
    }
}
