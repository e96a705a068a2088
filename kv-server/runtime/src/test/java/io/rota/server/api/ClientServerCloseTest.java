package io.rota.server.api;

import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.util.concurrent.EventExecutor;
import io.rota.server.watch.WatchHub;
import io.rota.testkit.Await;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link ClientServer#close()} ends every client connection. Netty 4.2 closes a loop's channels on shutdown
 * only if the loop notices the shutdown before its task phase; with no quiet period, a loop that is running
 * tasks when the shutdown starts ends without closing them. Here every loop is held inside a task while
 * close() starts, so that case happens every time, not only under load (where it made
 * RotaClientWatchFailoverTest's watch wait forever on a stopped member). No Raft node: the connection sends
 * nothing.
 */
class ClientServerCloseTest {

    @Test
    @DisplayName("close() ends every client connection, even when the event loops are running tasks as it starts")
    void closeEndsConnectionsWhileTheLoopsRunTasks() throws Exception {
        ServerMetrics metrics = new ServerMetrics();
        // The router reads the state machine's auth state when it is built: a real (empty) one.
        ClientServer server = new ClientServer(settings(), null,
                new io.rota.server.kv.CoordinationStateMachine(io.rota.server.kv.Limits.builder().build()), null,
                new WatchHub(1, () -> 1, 100, 10), null, null, metrics);
        CountDownLatch release = new CountDownLatch(1);
        Thread closer = new Thread(server::close, "client-server-close");
        try (Socket client = new Socket()) {
            client.connect(server.localAddress(), 5_000);
            client.setSoTimeout(10_000);
            Await.until(Duration.ofSeconds(10), () -> metrics.connections.sum() == 1, "the connection is accepted");

            List<EventExecutor> loops = new ArrayList<>();
            server.eventLoops().forEach(loops::add);
            CountDownLatch busy = new CountDownLatch(loops.size());
            for (EventExecutor loop : loops) {
                loop.execute(() -> {
                    busy.countDown();
                    try {
                        release.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
            }
            assertTrue(busy.await(10, TimeUnit.SECONDS), "every loop runs the holding task");

            closer.start();
            // Let the loops go once close() blocks. By then a close() that left the connections to the loops'
            // shutdown has started it; one that closes them itself is waiting for the loops to do so.
            Await.until(Duration.ofSeconds(10), () -> closer.getState() == Thread.State.WAITING
                    || closer.getState() == Thread.State.TIMED_WAITING, "close() waits");
            release.countDown();
            closer.join(10_000);
            assertFalse(closer.isAlive(), "close() returned");

            assertEquals(-1, read(client), "the client sees the end of the connection (-2: none within 10 s)");
            assertEquals(0, metrics.connections.sum(), "the server saw the connection end too");
        } finally {
            release.countDown();
            if (closer.getState() == Thread.State.NEW) {
                server.close();
            }
        }
    }

    @Test
    @DisplayName("on the driver's loop (P15), close() ends every client connection and leaves the loop running")
    void closeOnASharedLoopEndsConnectionsAndLeavesTheLoop() throws Exception {
        ServerMetrics metrics = new ServerMetrics();
        EventLoopGroup driverGroup = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        EventLoop driverLoop = driverGroup.next();
        try {
            ClientServer server = new ClientServer(settings(), null,
                    new io.rota.server.kv.CoordinationStateMachine(io.rota.server.kv.Limits.builder().build()), null,
                    new WatchHub(1, () -> 1, 100, 10), null, null, metrics, null, driverLoop);
            assertSame(driverLoop, server.eventLoops(), "the port serves its connections on the loop it was given");
            try (Socket client = new Socket()) {
                client.connect(server.localAddress(), 5_000);
                client.setSoTimeout(10_000);
                Await.until(Duration.ofSeconds(10), () -> metrics.connections.sum() == 1, "the connection is accepted");

                server.close();

                assertEquals(-1, read(client), "the client sees the end of the connection (-2: none within 10 s)");
                // channelInactive runs as a task after the close; no loop shutdown waits for it here.
                Await.until(Duration.ofSeconds(10), () -> metrics.connections.sum() == 0,
                        "the server saw the connection end too");
            }
            assertFalse(driverLoop.isShuttingDown(), "the driver's loop is not the port's to stop");
            assertTrue(driverLoop.submit(() -> true).get(10, TimeUnit.SECONDS), "the loop still runs tasks");
        } finally {
            driverGroup.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    private static ClientServer.Settings settings() {
        return ClientServer.Settings.builder(new InetSocketAddress("127.0.0.1", 0))
                .maxFrameBytes(1 << 20).requestTimeout(Duration.ofSeconds(5)).retryInterval(Duration.ofMillis(100))
                .readAttemptTimeout(Duration.ofSeconds(2)).minLeaseTtlSeconds(2).version("test").build();
    }

    /** The next byte, -1 at the end of the stream, or -2 if the read timed out (the connection stayed open). */
    private static int read(Socket client) throws IOException {
        try {
            return client.getInputStream().read();
        } catch (SocketTimeoutException stillOpen) {
            return -2;
        }
    }
}
