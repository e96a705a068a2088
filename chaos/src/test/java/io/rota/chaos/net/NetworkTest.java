package io.rota.chaos.net;

import io.rota.server.TestCluster;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The grid's direction semantics with three frame-echo "members": {@code block(a, b)} drops exactly the
 * frames a sends to b, whichever of the two dialled.
 */
class NetworkTest {

    private final ServerSocket[] members = new ServerSocket[3];
    private Network network;

    @BeforeEach
    void start() throws IOException {
        for (int i = 0; i < 3; i++) {
            members[i] = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            ServerSocket server = members[i];
            Thread t = new Thread(() -> echo(server), "member-" + i);
            t.setDaemon(true);
            t.start();
        }
        network = new Network(3, TestCluster::freePort);
        network.start(i -> members[i].getLocalPort());
    }

    @AfterEach
    void stop() throws IOException {
        network.close();
        for (ServerSocket s : members) {
            s.close();
        }
    }

    private static void echo(ServerSocket server) {
        while (!server.isClosed()) {
            try {
                Socket s = server.accept();
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

    /** Member {@code from} dials member {@code to} through the grid and sends one frame: is it echoed? */
    private boolean roundTrip(int from, int to) {
        String[] hostPort = network.address(from, to).split(":");
        try (Socket s = new Socket(hostPort[0], Integer.parseInt(hostPort[1]))) {
            s.setSoTimeout(500);
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            out.writeInt(1);
            out.write(42);
            out.flush();
            DataInputStream in = new DataInputStream(s.getInputStream());
            return in.readInt() == 1 && in.read() == 42;
        } catch (IOException e) {
            return false;
        }
    }

    @Test
    void everyPairTalksWhenHealthy() {
        for (int a = 0; a < 3; a++) {
            for (int b = 0; b < 3; b++) {
                if (a != b) {
                    assertTrue(roundTrip(a, b), a + " -> " + b);
                }
            }
        }
    }

    @Test
    void oneWayBlockBreaksTheRoundTripOfThatPairOnly() {
        network.block(0, 1);
        assertEquals(List.of("n1->n2"), network.faults());
        assertFalse(roundTrip(0, 1), "0's request to 1 is dropped");
        assertFalse(roundTrip(1, 0), "1 dials 0: 0's answer to 1 is dropped");
        assertTrue(roundTrip(0, 2));
        assertTrue(roundTrip(2, 1));
        network.heal();
        assertTrue(roundTrip(0, 1));
        assertTrue(roundTrip(1, 0));
    }

    @Test
    void isolatingAMemberCutsItFromEveryoneElse() {
        network.isolate(List.of(2));
        assertFalse(roundTrip(2, 0));
        assertFalse(roundTrip(1, 2));
        assertTrue(roundTrip(0, 1));
        assertEquals(4, network.faults().size());
    }

    @Test
    void aBridgeCutsOnlyOnePair() {
        network.cut(0, 1);
        assertFalse(roundTrip(0, 1));
        assertFalse(roundTrip(1, 0));
        assertTrue(roundTrip(0, 2));
        assertTrue(roundTrip(1, 2));
    }
}
