package io.rota.server.fuzz;

import com.google.protobuf.Descriptors.FieldDescriptor;
import io.rota.proto.AuthRequest;
import io.rota.proto.AuthenticateRequest;
import io.rota.proto.Error;
import io.rota.proto.Frame;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * The client port with well-formed requests of every type ({@link WellFormedRequests} filling one of
 * {@code Frame}'s request bodies), shaped by a {@link DoorGuard}: one connection per session, which may log in
 * first (auth on), then pipelines a batch and reads until every call is answered. A well-formed frame must
 * never close the connection; every answer is a response or a typed error (a code, a message, never
 * "internal error"). A frame over the request limit is sent last, alone, and must be answered
 * REQUEST_TOO_LARGE (then the server closes: that is its right for one). Counts go to
 * {@code client.<caller>.sent/<body>} and {@code client.<caller>.answers/<body>.<outcome>}.
 */
public final class ClientDoor {

    /** Frame's request bodies: every member of its oneof named *_request. */
    public static final List<String> BODIES = Frame.getDescriptor().getOneofs().get(0).getFields().stream()
            .map(FieldDescriptor::getName).filter(n -> n.endsWith("_request")).toList();
    private static final int MAX_ANSWER_BYTES = 64 << 20;

    private final WellFormedRequests gen;
    private final DoorGuard guard;
    private final DoorGuard.Caller caller;
    private final Tally tally;
    /** The largest frame the member decodes, length prefix included: --max-request-bytes + its envelope. */
    private final int maxFrameBytes;
    private final Duration deadline;
    private String user;
    private String password;

    public ClientDoor(WellFormedRequests gen, DoorGuard guard, DoorGuard.Caller caller, Tally tally,
                      int maxFrameBytes, Duration deadline) {
        this.gen = gen;
        this.guard = guard;
        this.caller = caller;
        this.tally = tally;
        this.maxFrameBytes = maxFrameBytes;
        this.deadline = deadline;
    }

    /** Log in as {@code user} at the start of every session (auth on); the token goes on every frame. */
    public ClientDoor as(String user, String password) {
        this.user = user;
        this.password = password;
        return this;
    }

    /** A generated frame for {@code callId} the guard admits, and the name of its body. */
    public Frame next(long callId) {
        for (int attempt = 0; ; attempt++) {
            Frame.Builder f = Frame.newBuilder().setCallId(callId);
            gen.fillOneof(f, "body", BODIES);
            Random r = gen.random();
            if (r.nextInt(12) == 0) {
                f.setSession(io.rota.proto.SessionRef.newBuilder().setClientId(r.nextLong()).setSequence(r.nextLong()));
            }
            f.setForwarded(r.nextInt(25) == 0);
            if (guard.admit(f, caller, r)) {
                return f.build();
            }
            if (attempt > 1_000) {
                throw new IllegalStateException("the guard refused 1,000 frames in a row");
            }
        }
    }

    /**
     * One connection to {@code address} with {@code requests} generated frames.
     *
     * @return the number of generated frames sent
     */
    public long session(InetSocketAddress address, int requests) {
        String who = "client." + caller.name().toLowerCase(java.util.Locale.ROOT);
        try (Socket socket = new Socket()) {
            socket.connect(address, 5_000);
            socket.setTcpNoDelay(true);
            socket.setSoTimeout((int) deadline.toMillis());
            DataOutputStream out = new DataOutputStream(socket.getOutputStream());
            DataInputStream in = new DataInputStream(socket.getInputStream());
            String token = "";
            if (user != null) {
                write(out, Frame.newBuilder().setCallId(1).setAuthRequest(AuthRequest.newBuilder()
                        .setAuthenticate(AuthenticateRequest.newBuilder().setName(user).setPassword(password))).build());
                Frame login = readUntil(in, 1);
                if (login == null || login.hasError()) {
                    tally.problem(who + ": could not log in as " + user + ": " + login);
                    return 0;
                }
                token = login.getAuthResponse().getToken();
            }
            long base = 1_000 + gen.random().nextInt(1 << 20);
            Map<Long, String> pending = new HashMap<>();
            ByteArrayOutputStream buf = new ByteArrayOutputStream();
            DataOutputStream batch = new DataOutputStream(buf);
            Frame oversized = null;
            long sent = 0;
            for (int i = 0; i < requests; i++) {
                Frame f = next(base + i);
                if (!token.isEmpty()) {
                    f = f.toBuilder().setAuthToken(token).build();
                }
                String body = f.getBodyCase().name();
                byte[] bytes = f.toByteArray();
                sent++;
                tally.add(who + ".sent/" + body);
                // Only a frame the decoder refuses is answered on call id 0 and then closed; a smaller one over
                // the request limit is decoded and answered on its own call id, like any other.
                if (bytes.length + 4 > maxFrameBytes) {
                    oversized = oversized == null ? f : oversized;   // sent alone, at the end
                    continue;
                }
                batch.writeInt(bytes.length);
                batch.write(bytes);
                // A watch answers per watch (a cancel of an unknown id may answer nothing): not waited for.
                if (!f.hasWatchRequest()) {
                    pending.put(f.getCallId(), body);
                }
            }
            out.write(buf.toByteArray());
            out.flush();
            long end = System.nanoTime() + 2 * deadline.toNanos();
            while (!pending.isEmpty()) {
                Frame answer = read(in);
                if (answer == null) {
                    tally.problem(who + ": " + address + " closed a connection that sent only well-formed frames; "
                            + pending.size() + " calls unanswered, e.g. " + pending.values().iterator().next()
                            + " (seed: see the test's first line)");
                    return sent;
                }
                String body = pending.remove(answer.getCallId());
                if (body != null) {
                    outcome(who, body, answer);
                }
                if (!pending.isEmpty() && System.nanoTime() - end > 0) {
                    throw new SocketTimeoutException(pending.size() + " calls unanswered, e.g. "
                            + pending.values().iterator().next());
                }
            }
            if (oversized != null) {
                String body = oversized.getBodyCase().name();
                Frame answer;
                try {
                    write(out, oversized);
                    answer = readUntil(in, 0);
                } catch (IOException e) {
                    // The member answers at the length prefix and closes without reading the body, so the rest
                    // of this write, or the read after it, may meet a closed socket: refused all the same.
                    tally.add(who + ".answers/" + body + ".over-limit.closed");
                    tally.add(who + ".sessions-answered");
                    return sent;
                }
                if (answer == null || !answer.hasError() || answer.getError().getCode() != Error.Code.REQUEST_TOO_LARGE) {
                    tally.problem(who + ": a " + body + " over the request limit was answered " + answer);
                } else {
                    tally.add(who + ".answers/" + body + ".over-limit.REQUEST_TOO_LARGE");
                }
            }
            tally.add(who + ".sessions-answered");
            return sent;
        } catch (SocketTimeoutException e) {
            tally.problem(who + ": " + address + " hung: " + e.getMessage());
            return 0;
        } catch (IOException e) {
            tally.problem(who + ": " + address + " broke a connection that sent only well-formed frames: " + e);
            return 0;
        }
    }

    private void outcome(String who, String body, Frame answer) {
        if (answer.hasError()) {
            Error e = answer.getError();
            tally.add(who + ".answers/" + body + "." + e.getCode());
            if (e.getCode() == Error.Code.CODE_UNSPECIFIED || e.getCode() == Error.Code.UNRECOGNIZED
                    || e.getMessage().isEmpty()) {
                tally.problem(who + ": untyped error for a " + body + ": " + answer);
            } else if (e.getMessage().startsWith("internal error")) {
                tally.problem(who + ": internal error for a " + body + ": " + e.getMessage());
            }
        } else {
            tally.add(who + ".answers/" + body + ".ok");
        }
    }

    private static void write(DataOutputStream out, Frame f) throws IOException {
        byte[] b = f.toByteArray();
        out.writeInt(b.length);
        out.write(b);
        out.flush();
    }

    /** The first answer on {@code callId} (others dropped), or null at the end of the stream. */
    private static Frame readUntil(DataInputStream in, long callId) throws IOException {
        for (Frame f = read(in); f != null; f = read(in)) {
            if (f.getCallId() == callId) {
                return f;
            }
        }
        return null;
    }

    private static Frame read(DataInputStream in) throws IOException {
        int length;
        try {
            length = in.readInt();
        } catch (EOFException e) {
            return null;
        }
        if (length < 0 || length > MAX_ANSWER_BYTES) {
            throw new IOException("bad length prefix " + length);
        }
        byte[] body = new byte[length];
        in.readFully(body);
        return Frame.parseFrom(body);
    }
}
