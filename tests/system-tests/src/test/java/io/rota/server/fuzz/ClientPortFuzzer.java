package io.rota.server.fuzz;

import io.rota.proto.Error;
import io.rota.proto.Frame;
import io.rota.proto.StatusRequest;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;

/**
 * Fuzzes one client-port connection at a time. A session pipelines a batch of well-formed frames with
 * absurd values ({@link ClientFrames}) and a Status probe, reads until every call that must be answered is
 * (each answer must be a response or a typed error with a message, never an "internal error"), then
 * optionally ends the connection with a malformed {@link Tail} and waits for the server to close it.
 * Counters go to a {@link Tally}: {@code client.frames/KIND}, {@code client.answers/...},
 * {@code client.tails/...}; anything wrong is a {@link Tally#problem}.
 */
public final class ClientPortFuzzer {

    /** How a connection ends. */
    public enum Tail {
        /** A clean close after the batch. */
        NONE,
        /** Random bytes, the first four read as a length. */
        RANDOM_BYTES,
        /** A correct length prefix around random bytes. */
        GARBAGE_PROTOBUF,
        /** A correct length prefix around a valid request with bits flipped. */
        BIT_FLIPPED,
        /** A length prefix promising more bytes than are sent, then the client closes. */
        TRUNCATED,
        /** A negative length prefix. */
        NEGATIVE_LENGTH,
        /** A length prefix of up to 2 GiB. */
        HUGE_LENGTH,
        /** A length prefix one byte over the server's frame limit. */
        JUST_OVER_MAX,
        /** A correct length prefix around a request whose auth token is not UTF-8 (it does not parse). */
        INVALID_UTF8_TOKEN;

        /** Whether the server must close on its own (the client does not half-close first). */
        boolean serverMustClose() {
            return this == NEGATIVE_LENGTH || this == HUGE_LENGTH || this == JUST_OVER_MAX;
        }
    }

    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);
    /** An answer larger than this is itself a problem (the fuzzed key space is small). */
    private static final int MAX_ANSWER_BYTES = 64 << 20;

    private final Random random;
    private final ClientFrames frames;
    private final Tally tally;
    private final int maxRequestBytes;
    private final int maxFrameBytes;
    private final Duration deadline;
    /** Speaks TLS to the port when set (the same fuzz inside TLS records), else plaintext. */
    private javax.net.ssl.SSLSocketFactory tls;

    /**
     * @param random          the seeded source of every choice
     * @param frames          the request generator (sharing {@code random})
     * @param tally           where counts and problems go
     * @param maxRequestBytes the server's --max-request-bytes: batches hold only smaller frames
     * @param maxFrameBytes   the server's frame limit, length prefix included (JUST_OVER_MAX exceeds it by one)
     * @param deadline        how long the server may take to answer a batch, or to close after a bad tail
     */
    public ClientPortFuzzer(Random random, ClientFrames frames, Tally tally, int maxRequestBytes, int maxFrameBytes,
                            Duration deadline) {
        this.random = random;
        this.frames = frames;
        this.tally = tally;
        this.maxRequestBytes = maxRequestBytes;
        this.maxFrameBytes = maxFrameBytes;
        this.deadline = deadline;
    }

    /**
     * Fuzz a TLS client port: every session shakes hands with {@code factory} first, and the frames travel
     * inside TLS records, so the fuzz reaches the decoders behind the server's TLS layer.
     *
     * @param factory a factory trusting the members' CA (and presenting a client certificate if they require one)
     * @return this fuzzer
     */
    public ClientPortFuzzer overTls(javax.net.ssl.SSLSocketFactory factory) {
        this.tls = factory;
        return this;
    }

    /**
     * One connection: {@code requests} well-formed frames and a probe, then {@code tail}.
     *
     * @return the number of frames sent (requests, probe and tail)
     */
    public long session(InetSocketAddress address, int requests, Tail tail) {
        tally.add("client.connections");
        try (Socket plain = new Socket()) {
            plain.connect(address, (int) CONNECT_TIMEOUT.toMillis());
            Socket socket = tls == null ? plain
                    : tls.createSocket(plain, address.getHostString(), address.getPort(), true);
            socket.setTcpNoDelay(true);
            socket.setSoTimeout((int) deadline.toMillis());
            DataOutputStream out = new DataOutputStream(socket.getOutputStream());
            DataInputStream in = new DataInputStream(socket.getInputStream());
            // Progress notifications of a fuzzed watch keep a socket busy: bound the session, not just each read.
            long end = System.nanoTime() + 2 * deadline.toNanos();
            long sent = 0;
            if (requests > 0) {
                try {
                    sent += batch(out, in, address, requests, end);
                } catch (SocketTimeoutException e) {
                    throw e;
                } catch (IOException e) {
                    tally.problem("client port " + address + " broke a connection that sent only well-formed frames: "
                            + e);
                    return sent;
                }
            }
            if (tail != Tail.NONE) {
                writeTail(out, tail);
                sent++;
                tally.add("client.frames/tail." + tail);
                if (!tail.serverMustClose()) {
                    socket.shutdownOutput();
                }
                awaitClose(in, tail, address, end);
            }
            return sent;
        } catch (SocketTimeoutException e) {
            tally.problem("client port " + address + " hung (" + e.getMessage() + ", tail " + tail + ")");
            return 0;
        } catch (IOException e) {
            // A failed connect, or a reset while writing a bad tail after the server closed (its right).
            tally.add("client.io-errors/" + e.getClass().getSimpleName());
            return 0;
        }
    }

    /** Sends the batch and the probe in one write, then reads until every answer is in; returns the frames sent. */
    private long batch(DataOutputStream out, DataInputStream in, InetSocketAddress address, int requests, long end)
            throws IOException {
        long base = random.nextInt(4) == 0 ? Long.MAX_VALUE - requests - 10 : random.nextInt(1 << 20);
        Map<Long, ClientFrames.Kind> pending = new HashMap<>();
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        DataOutputStream batch = new DataOutputStream(buf);
        long written = 1;   // the probe
        for (int i = 0; i < requests; i++) {
            ClientFrames.Request r = frames.request(base + i);
            byte[] bytes = r.wire();
            if (bytes.length > maxRequestBytes - 64) {
                tally.add("client.frames/skipped-over-limit");   // JUST_OVER_MAX covers that on purpose
                continue;
            }
            batch.writeInt(bytes.length);
            batch.write(bytes);
            written++;
            tally.add("client.frames/" + r.kind());
            if (r.answered()) {
                pending.put(base + i, r.kind());
            }
        }
        long probe = base + requests;
        byte[] status = Frame.newBuilder().setCallId(probe).setStatusRequest(StatusRequest.getDefaultInstance())
                .build().toByteArray();
        batch.writeInt(status.length);
        batch.write(status);
        pending.put(probe, ClientFrames.Kind.STATUS);
        tally.add("client.frames/PROBE");
        out.write(buf.toByteArray());
        out.flush();
        while (!pending.isEmpty()) {
            Frame answer = readFrame(in, address);
            if (answer == null) {
                tally.problem("client port " + address + " closed a connection that sent only well-formed frames; "
                        + pending.size() + " calls unanswered");
                return written;
            }
            ClientFrames.Kind kind = pending.remove(answer.getCallId());
            count(answer);
            if (kind != null && answer.hasError()) {
                tally.add("client.errors-by-kind/" + kind + "." + answer.getError().getCode());
            }
            if (!pending.isEmpty() && System.nanoTime() - end > 0) {
                throw new SocketTimeoutException(pending.size() + " calls unanswered");
            }
        }
        tally.add("client.batches-answered");
        return written;
    }

    private void writeTail(DataOutputStream out, Tail tail) throws IOException {
        switch (tail) {
            // Its first four bytes, read as a length, promise more than the rest (61 in 2^32 do not): no frame.
            case RANDOM_BYTES -> out.write(frames.randomBytes(1 + random.nextInt(64)));
            case GARBAGE_PROTOBUF -> {
                byte[] body = frames.garbage(random.nextInt(256));
                out.writeInt(body.length);
                out.write(body);
            }
            case BIT_FLIPPED -> {
                byte[] body = frames.bitFlipped(frames.request(random.nextInt(1000)).frame());
                out.writeInt(body.length);
                out.write(body);
            }
            case TRUNCATED -> {
                byte[] body = frames.request(1).frame().toByteArray();
                out.writeInt(body.length + 1 + random.nextInt(1000));
                out.write(body);
            }
            case NEGATIVE_LENGTH -> {
                out.writeInt(random.nextBoolean() ? -1 : Integer.MIN_VALUE + random.nextInt(1 << 30));
                out.write(frames.randomBytes(random.nextInt(32)));
            }
            case HUGE_LENGTH -> {
                out.writeInt(random.nextBoolean() ? Integer.MAX_VALUE : maxRequestBytes + 1 + random.nextInt(1 << 30));
                out.write(frames.randomBytes(random.nextInt(32)));
            }
            case INVALID_UTF8_TOKEN -> {
                byte[] body = frames.invalidUtf8Token();
                out.writeInt(body.length);
                out.write(body);
            }
            case JUST_OVER_MAX -> {
                out.writeInt(maxFrameBytes - 4 + 1);
                out.write(frames.randomBytes(random.nextInt(32)));
            }
            case NONE -> throw new IllegalArgumentException("no tail");
        }
        out.flush();
    }

    /** Reads (and counts) whatever the server still says until it closes the connection. */
    private void awaitClose(DataInputStream in, Tail tail, InetSocketAddress address, long end) throws IOException {
        try {
            for (Frame f = readFrame(in, address); f != null; f = readFrame(in, address)) {
                count(f);
                if (System.nanoTime() - end > 0) {
                    throw new SocketTimeoutException("still open");
                }
            }
            tally.add("client.tails-closed/" + tail);
        } catch (SocketException e) {
            tally.add("client.tails-closed/" + tail);   // reset: the server closed with our bytes unread
        }
    }

    /** The next frame, or null at the end of the stream. */
    private Frame readFrame(DataInputStream in, InetSocketAddress address) throws IOException {
        int length;
        try {
            length = in.readInt();
        } catch (EOFException e) {
            return null;
        }
        if (length < 0 || length > MAX_ANSWER_BYTES) {
            tally.problem("client port " + address + " sent a length prefix of " + length);
            throw new IOException("bad length " + length);
        }
        byte[] body = new byte[length];
        in.readFully(body);
        return Frame.parseFrom(body);
    }

    private void count(Frame answer) {
        if (answer.hasError()) {
            Error e = answer.getError();
            tally.add("client.answers/error." + e.getCode());
            if (e.getCode() == Error.Code.CODE_UNSPECIFIED || e.getMessage().isEmpty()) {
                tally.problem("untyped error: " + answer);
            } else if (e.getMessage().startsWith("internal error")) {
                tally.problem("internal error: " + e.getMessage());
            }
        } else {
            tally.add("client.answers/" + answer.getBodyCase());
        }
    }
}
