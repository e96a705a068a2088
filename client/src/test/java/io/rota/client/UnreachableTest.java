package io.rota.client;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Endpoints where no member's client port can be: an unknown host, a refused port, a port that closes the
 * connection on a client's first frame (as a member's peer port does), a port that answers HTTP. When every
 * endpoint is like that, a call fails naming each cause long before its call timeout (a minute here; the test's
 * own deadline is 20 s): UNAVAILABLE (not applied) when nothing can have reached a member, TIMEOUT (maybe
 * applied) when a connection closed after the request without an answer, as a crashed member's does.
 */
class UnreachableTest {

    private static final Duration CALL_TIMEOUT = Duration.ofMinutes(1);
    private static final Duration WELL_BEFORE = Duration.ofSeconds(20);

    private final List<ServerSocket> servers = new ArrayList<>();

    @AfterEach
    void close() throws IOException {
        for (ServerSocket s : servers) {
            s.close();
        }
    }

    @Test
    void everyEndpointRefusedIsUnavailableAtOnce() throws IOException {
        String a = refusedEndpoint();
        String b = refusedEndpoint();
        RotaException e = failure(a + "," + b);
        assertEquals(RotaException.Code.UNAVAILABLE, e.code(), e.getMessage());
        assertEquals("UNAVAILABLE: no member reachable, nothing was sent to a member (" + a + ": connection refused: nothing listens"
                + " there; " + b + ": connection refused: nothing listens there)", e.getMessage());
    }

    @Test
    void anUnknownHostIsNamed() {
        RotaException e = failure("no-such-host.invalid:7001");
        assertEquals(RotaException.Code.UNAVAILABLE, e.code(), e.getMessage());
        assertTrue(e.getMessage().contains("no-such-host.invalid:7001: unknown host"), e.getMessage());
    }

    @Test
    void aPortThatClosesOnTheFirstFrameOrAnswersHttpIsNotAClientPort() throws IOException {
        String peerLike = serve(in -> { });   // reads the frame, then closes: what a peer port does
        String httpLike = serve(out -> out.write("HTTP/1.1 400 Bad Request\r\n\r\n".getBytes(StandardCharsets.US_ASCII)));
        RotaException e = failure(peerLike + "," + httpLike);
        // A close after the request without an answer is also what a crashed member does: maybe applied.
        assertEquals(RotaException.Code.TIMEOUT, e.code(), e.getMessage());
        assertTrue(e.getMessage().endsWith("may or may not have been applied"), e.getMessage());
        assertTrue(e.getMessage().contains(peerLike + ": not a Rota client port"), e.getMessage());
        assertTrue(e.getMessage().contains(httpLike + ": not a Rota client port"), e.getMessage());
        assertTrue(e.getMessage().contains(peerLike + ": not a Rota client port: it closed the connection on our first"
                + " request without answering (a member's peer port does"), e.getMessage());
        assertTrue(e.getMessage().contains(httpLike + ": not a Rota client port: it answered with bytes that are not a"
                + " Rota frame ('HTTP/1.1 400 Bad...': an HTTP port?)"), e.getMessage());
    }

    @Test
    void httpBytesNeverComeFromAMemberSoNothingWasApplied() throws IOException {
        String httpLike = serve(out -> out.write("HTTP/1.1 400 Bad Request\r\n\r\n".getBytes(StandardCharsets.US_ASCII)));
        RotaException e = failure(httpLike + "," + refusedEndpoint());
        assertEquals(RotaException.Code.UNAVAILABLE, e.code(), e.getMessage());
        assertTrue(e.getMessage().startsWith("UNAVAILABLE: no member reachable, nothing was sent to a member ("
                + httpLike + ": not a Rota client port: it answered with bytes"), e.getMessage());
    }

    @Test
    void oneRefusedEndpointAmongLiveOnesIsRetriedNotFinal() throws IOException {
        // The other endpoint accepts and never answers (a slow member): the call goes on until its deadline.
        String silent = serveSilently();
        try (RotaClient client = RotaClient.builder().endpoints(refusedEndpoint() + "," + silent)
                .callTimeout(Duration.ofMillis(1500)).attemptTimeout(Duration.ofMillis(300)).build()) {
            RotaException e = assertThrows(RotaException.class, () -> client.kv().get("k"));
            assertEquals(RotaException.Code.TIMEOUT, e.code(), "a silent member may have received it: " + e.getMessage());
        }
    }

    private RotaException failure(String endpoints) {
        return assertTimeoutPreemptively(WELL_BEFORE, () -> {
            try (RotaClient client = RotaClient.builder().endpoints(endpoints).callTimeout(CALL_TIMEOUT).build()) {
                return assertThrows(RotaException.class, () -> client.kv().put("k", "v", 0));
            }
        });
    }

    private static String refusedEndpoint() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return "127.0.0.1:" + s.getLocalPort();
        }
    }

    /** What a fake server does with an accepted connection after reading what the client sent. */
    private interface Reply {
        void on(OutputStream out) throws IOException;
    }

    /** A server that reads a little of each connection, replies and closes it. */
    private String serve(Reply reply) throws IOException {
        ServerSocket server = listen();
        Thread t = new Thread(() -> {
            while (!server.isClosed()) {
                try (Socket s = server.accept()) {
                    InputStream in = s.getInputStream();
                    in.read(new byte[64]);
                    reply.on(s.getOutputStream());
                } catch (IOException e) {
                    return;
                }
            }
        }, "fake-port");
        t.setDaemon(true);
        t.start();
        return "127.0.0.1:" + server.getLocalPort();
    }

    /** A server that accepts (the kernel does, from its backlog) and never answers. */
    private String serveSilently() throws IOException {
        return "127.0.0.1:" + listen().getLocalPort();
    }

    private ServerSocket listen() throws IOException {
        ServerSocket s = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        servers.add(s);
        return s;
    }
}
