package io.rota.chaos.net;

import io.rota.proto.Error;
import io.rota.proto.Frame;
import io.rota.proto.Member;
import io.rota.proto.StatusResponse;
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
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The grid's direction semantics with three frame-echo "members": {@code block(a, b)} drops exactly the
 * frames a sends to b, whichever of the two dialled; clients living beside a member are cut the same way, and
 * the members' addresses in their answers are rewritten into proxies.
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
        network = new Network(3, Ports::freePort);
        network.start(i -> members[i].getLocalPort());
        network.startClients(i -> members[i].getLocalPort());
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
        return roundTrip(network.address(from, to));
    }

    /** A client living beside member {@code home} sends one frame to member {@code to}: is it echoed? */
    private boolean clientRoundTrip(int home, int to) {
        return roundTrip(network.clientEndpoints(home).split(",")[to]);
    }

    private static boolean roundTrip(String address) {
        return Arrays.equals(new byte[]{42}, echo(address, new byte[]{42}));
    }

    /** Sends one frame to {@code address}; the frame that comes back, or null if none does within 500 ms. */
    private static byte[] echo(String address, byte[] frame) {
        String[] hostPort = address.split(":");
        try (Socket s = new Socket(hostPort[0], Integer.parseInt(hostPort[1]))) {
            s.setSoTimeout(500);
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            out.writeInt(frame.length);
            out.write(frame);
            out.flush();
            DataInputStream in = new DataInputStream(s.getInputStream());
            byte[] back = new byte[in.readInt()];
            in.readFully(back);
            return back;
        } catch (IOException e) {
            return null;
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

    @Test
    void clientsReachEveryMemberWhenHealthy() {
        for (int home = 0; home < 3; home++) {
            for (int to = 0; to < 3; to++) {
                assertTrue(clientRoundTrip(home, to), "client of " + home + " -> " + to);
            }
        }
    }

    @Test
    void aPartitionCutsClientsFromTheMembersOnTheOtherSide() {
        network.isolate(List.of(2));
        assertTrue(clientRoundTrip(2, 2), "a client still reaches its own member");
        assertFalse(clientRoundTrip(2, 0));
        assertFalse(clientRoundTrip(0, 2));
        assertTrue(clientRoundTrip(0, 1));
        network.heal();
        assertTrue(clientRoundTrip(2, 0));
        assertTrue(clientRoundTrip(0, 2));
    }

    @Test
    void aOneWayBlockDropsTheClientsRequestsOrTheAnswers() {
        network.block(0, 1);
        assertFalse(clientRoundTrip(0, 1), "requests of 0's clients to 1 are dropped");
        assertFalse(clientRoundTrip(1, 0), "0's answers to 1's clients are dropped");
        assertTrue(clientRoundTrip(1, 2));
    }

    @Test
    void aLeaderHintOrAMemberListNamesTheProxiesNotTheMembers() throws Exception {
        String member1 = "127.0.0.1:" + members[1].getLocalPort();
        String proxy = network.clientEndpoints(2).split(",")[1];
        Frame notLeader = Frame.newBuilder().setCallId(7).setError(Error.newBuilder()
                .setCode(Error.Code.NOT_LEADER).setLeaderId(2).setLeaderEndpoint(member1)).build();
        Frame answered = Frame.parseFrom(echo(network.clientEndpoints(2).split(",")[0], notLeader.toByteArray()));
        assertEquals(proxy, answered.getError().getLeaderEndpoint());
        assertEquals(7, answered.getCallId());

        Frame status = Frame.newBuilder().setStatusResponse(StatusResponse.newBuilder()
                .addMembers(Member.newBuilder().setId(2).setClientAddress(member1).setPeerAddress("127.0.0.1:1"))).build();
        answered = Frame.parseFrom(echo(network.clientEndpoints(2).split(",")[2], status.toByteArray()));
        assertEquals(proxy, answered.getStatusResponse().getMembers(0).getClientAddress());
        assertEquals("127.0.0.1:1", answered.getStatusResponse().getMembers(0).getPeerAddress());
    }
}
