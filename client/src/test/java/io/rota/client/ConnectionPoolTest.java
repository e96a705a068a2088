package io.rota.client;

import io.rota.proto.Frame;
import io.rota.proto.StatusResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Which member goes first and next, and one shared connection per member. */
class ConnectionPoolTest {

    private final ClientThreads threads = new ClientThreads();

    @AfterEach
    void shutdown() {
        threads.shutdown();
    }

    private ConnectionPool pool(String... endpoints) {
        return new ConnectionPool(List.of(endpoints), threads.eventLoop, Duration.ofSeconds(1));
    }

    @Test
    @DisplayName("the first configured member goes first; a failure moves on to the next, wrapping around")
    void avoidRotatesInConfiguredOrder() {
        ConnectionPool pool = pool("a:1", "b:1", "c:1");
        assertEquals("a:1", pool.preferred());
        pool.avoid("a:1");
        assertEquals("b:1", pool.preferred());
        pool.avoid("a:1");
        assertEquals("b:1", pool.preferred(), "a member that is not preferred any more changes nothing");
        pool.avoid("b:1");
        pool.avoid("c:1");
        assertEquals("a:1", pool.preferred(), "wraps around");
        assertEquals("b:1", pool.after("a:1"));
        assertEquals("a:1", pool.after("c:1"));
    }

    @Test
    @DisplayName("a leader hint goes first, even if not configured; when it fails, the first configured member does")
    void aHintedLeaderGoesFirst() {
        ConnectionPool pool = pool("a:1", "b:1", "c:1");
        pool.prefer("c:1");
        assertEquals("c:1", pool.preferred());
        pool.prefer("leader:7");
        assertEquals("leader:7", pool.preferred());
        pool.avoid("leader:7");
        assertEquals("a:1", pool.preferred());
        assertEquals("a:1", pool.after("leader:7"));
    }

    @Test
    @DisplayName("no endpoint is refused")
    void needsAnEndpoint() {
        assertThrows(IllegalArgumentException.class, () -> pool());
    }

    @Test
    @DisplayName("callers share one connection per member; a member that is down fails with UNAVAILABLE")
    void oneConnectionPerMember() throws Exception {
        int deadPort;
        try (ServerSocket s = new ServerSocket(0)) {
            deadPort = s.getLocalPort();
        }
        try (FakeMember m = new FakeMember(f -> Frame.newBuilder().setStatusResponse(StatusResponse.getDefaultInstance()))) {
            ConnectionPool pool = pool(m.endpoint(), "127.0.0.1:" + deadPort);
            Connection first = pool.connection(m.endpoint()).get(5, TimeUnit.SECONDS);
            assertSame(first, pool.connection(m.endpoint()).get(5, TimeUnit.SECONDS));
            assertTrue(first.call(Frame.newBuilder().setStatusRequest(io.rota.proto.StatusRequest.getDefaultInstance()))
                    .get(5, TimeUnit.SECONDS).hasStatusResponse());

            CompletableFuture<Connection> down = pool.connection("127.0.0.1:" + deadPort);
            CompletionException e = assertThrows(CompletionException.class, down::join);
            RotaException r = assertInstanceOf(RotaException.class, e.getCause());
            assertEquals(RotaException.Code.UNAVAILABLE, r.code());
            pool.close();
        }
    }
}
