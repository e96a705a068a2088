package io.rota.server;

import io.rota.proto.Frame;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * A tiny test-only client of the frame protocol: a blocking socket, a reader thread that sorts responses
 * by call id (streams get several), and nothing else — no retries, no leader finding. Public for the
 * benchmark in {@code io.rota.server.bench}.
 */
public final class FrameClient implements AutoCloseable {

    static final Duration WAIT = Duration.ofSeconds(15);

    private final Socket socket;
    private final DataOutputStream out;
    private final Map<Long, BlockingQueue<Frame>> responses = new ConcurrentHashMap<>();
    /** Streams whose responses are only counted: a long-running watch must not fill memory. */
    private final Set<Long> discarded = ConcurrentHashMap.newKeySet();
    private final LongAdder discardedResponses = new LongAdder();
    private final AtomicLong nextCallId = new AtomicLong(1);
    private final Thread reader;
    private volatile boolean closed;

    public FrameClient(InetSocketAddress address) {
        this(address, 0, true);
    }

    /**
     * @param receiveBufferBytes the socket's receive buffer (0: the system's default); a small one with
     *                           {@code reading} false makes a client that stops the server's writes soon
     * @param reading            start the reader thread now; otherwise only {@link #startReading()} does
     */
    FrameClient(InetSocketAddress address, int receiveBufferBytes, boolean reading) {
        try {
            socket = new Socket();
            if (receiveBufferBytes > 0) {
                socket.setReceiveBufferSize(receiveBufferBytes); // before connect, so the window is small
            }
            socket.connect(address);
            socket.setTcpNoDelay(true);
            out = new DataOutputStream(socket.getOutputStream());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        reader = new Thread(this::read, "frame-client-reader");
        reader.setDaemon(true);
        if (reading) {
            reader.start();
        }
    }

    /** Start reading responses (for a client created with {@code reading} false). */
    void startReading() {
        reader.start();
    }

    /** Send a request and wait for its (first) response; later ones on the same call id are not kept. */
    public Frame call(Frame.Builder request) {
        long callId = send(request);
        try {
            return next(callId);
        } finally {
            responses.remove(callId);   // a long-lived client makes millions of calls
        }
    }

    /** From now on, responses on {@code callId} are counted in {@link #discardedResponses()} and dropped. */
    public void discard(long callId) {
        discarded.add(callId);
        responses.remove(callId);
    }

    public long discardedResponses() {
        return discardedResponses.sum();
    }

    /** Send with a fresh call id; returns it. */
    public long send(Frame.Builder request) {
        long callId = request.getCallId() != 0 ? request.getCallId() : nextCallId.getAndIncrement();
        sendRaw(request.setCallId(callId).build().toByteArray());
        return callId;
    }

    /** A length-prefixed payload, whatever it contains. */
    synchronized void sendRaw(byte[] payload) {
        try {
            out.writeInt(payload.length);
            out.write(payload);
            out.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Only a length prefix (the server must refuse before the body arrives). */
    synchronized void sendLength(int length) {
        try {
            out.writeInt(length);
            out.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The next response on {@code callId}. */
    public Frame next(long callId) {
        return next(callId, WAIT);
    }

    Frame next(long callId, Duration wait) {
        try {
            Frame f = queue(callId).poll(wait.toMillis(), TimeUnit.MILLISECONDS);
            if (f == null) {
                throw new AssertionError("no response on call " + callId + " within " + wait.toMillis() + " ms"
                        + (closed ? " (connection closed)" : ""));
            }
            return f;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** A response on {@code callId} if one arrives within {@code wait}, else null. */
    Frame poll(long callId, Duration wait) throws InterruptedException {
        return queue(callId).poll(wait.toMillis(), TimeUnit.MILLISECONDS);
    }

    public boolean isClosed() {
        return closed;
    }

    private BlockingQueue<Frame> queue(long callId) {
        return responses.computeIfAbsent(callId, id -> new LinkedBlockingQueue<>());
    }

    private void read() {
        try (DataInputStream in = new DataInputStream(new java.io.BufferedInputStream(socket.getInputStream()))) {
            while (true) {
                byte[] payload = new byte[in.readInt()];
                in.readFully(payload);
                Frame f = Frame.parseFrom(payload);
                if (discarded.contains(f.getCallId())) {
                    discardedResponses.increment();
                } else {
                    queue(f.getCallId()).add(f);
                }
            }
        } catch (IOException e) {
            closed = true;
        }
    }

    @Override
    public void close() {
        try {
            socket.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
