package io.rota.chaos.net;

import io.rota.testkit.Await;
import io.rota.testkit.Ports;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The proxy against a frame-echo server: forwarding, one-way drops that keep framing, partition, heal. */
class FaultProxyTest {

    private ServerSocket echo;
    private FaultProxy proxy;

    @BeforeEach
    void start() throws IOException {
        echo = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread t = new Thread(this::echoLoop, "echo");
        t.setDaemon(true);
        t.start();
        proxy = new FaultProxy("test", Ports.freePort(), echo::getLocalPort);
    }

    @AfterEach
    void stop() throws IOException {
        proxy.close();
        echo.close();
    }

    /** Echoes every frame back, on each accepted connection. */
    private void echoLoop() {
        while (!echo.isClosed()) {
            try {
                Socket s = echo.accept();
                Thread t = new Thread(() -> {
                    try (s) {
                        DataInputStream in = new DataInputStream(s.getInputStream());
                        DataOutputStream out = new DataOutputStream(s.getOutputStream());
                        while (true) {
                            byte[] frame = new byte[in.readInt()];
                            in.readFully(frame);
                            out.writeInt(frame.length);
                            out.write(frame);
                            out.flush();
                        }
                    } catch (IOException closed) {
                        // the connection ended
                    }
                });
                t.setDaemon(true);
                t.start();
            } catch (IOException closed) {
                return;
            }
        }
    }

    private Socket connect() throws IOException {
        Socket s = new Socket(InetAddress.getLoopbackAddress(), proxy.port());
        s.setSoTimeout(2_000);
        return s;
    }

    private static void send(Socket s, String text) throws IOException {
        DataOutputStream out = new DataOutputStream(s.getOutputStream());
        byte[] b = text.getBytes(StandardCharsets.UTF_8);
        out.writeInt(b.length);
        out.write(b);
        out.flush();
    }

    private static String receive(Socket s) throws IOException {
        DataInputStream in = new DataInputStream(s.getInputStream());
        byte[] b = new byte[in.readInt()];
        in.readFully(b);
        return new String(b, StandardCharsets.UTF_8);
    }

    @Test
    void forwardsFramesBothWays() throws IOException {
        try (Socket s = connect()) {
            send(s, "hello");
            assertEquals("hello", receive(s));
        }
    }

    @Test
    void oneWayDropLosesWholeFramesAndKeepsTheStreamFramed() throws IOException {
        try (Socket s = connect()) {
            send(s, "before");
            assertEquals("before", receive(s));
            proxy.setForwarding(false, true);
            send(s, "dropped-1");
            send(s, "dropped-2");
            Await.until(Duration.ofSeconds(5), () -> proxy.framesDropped() == 2, "two frames dropped");
            proxy.setForwarding(true, true);
            send(s, "after");
            assertEquals("after", receive(s));
        }
    }

    @Test
    void droppingTheReturnDirectionStillDeliversTheRequest() throws IOException {
        try (Socket s = connect()) {
            proxy.setForwarding(true, false);
            send(s, "lost-answer");
            Await.until(Duration.ofSeconds(5), () -> proxy.framesDropped() == 1, "the echo dropped");
            assertThrows(SocketTimeoutException.class, () -> receive(s));
        }
    }

    @Test
    void partitionCutsConnectionsAndRefusesNewOnesUntilHealed() throws IOException {
        Socket s = connect();
        proxy.setForwarding(false, false);
        assertThrows(IOException.class, () -> {
            send(s, "x");
            receive(s);
        });
        s.close();
        try (Socket refused = connect()) {
            assertThrows(IOException.class, () -> {
                send(refused, "y");
                receive(refused);
            });
        }
        proxy.setForwarding(true, true);
        assertTrue(proxy.isHealthy());
        try (Socket healed = connect()) {
            send(healed, "back");
            assertEquals("back", receive(healed));
        }
    }
}
