package io.rota.raft.transport;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.rota.proto.RaftMessage;
import io.rota.raft.core.Entry;
import io.rota.raft.core.Message;
import io.rota.testkit.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The transport over real loopback sockets: bind on port 0, learn the peers' addresses after start. */
class NettyPeerTransportTest {

    /** Where each node writes the snapshots it receives. */
    @org.junit.jupiter.api.io.TempDir
    java.nio.file.Path snapshotDir;

    private static final String CLUSTER = "rota-test";
    private static final Duration TIMEOUT = Duration.ofSeconds(20);

    private final List<Node> nodes = new ArrayList<>();

    /** A transport and what it received, checking per-sender order as messages arrive. */
    private static final class Node {
        final NettyPeerTransport transport;
        final TransportConfig config;
        final Queue<Message> received = new ConcurrentLinkedQueue<>();
        final Map<Long, AtomicLong> nextSequenceFrom = new ConcurrentHashMap<>();
        final Queue<String> orderViolations = new ConcurrentLinkedQueue<>();
        /** The peers the transport reported down (their port refused a probe). */
        final Queue<Long> reportedDown = new ConcurrentLinkedQueue<>();

        Node(TransportConfig config) {
            this.config = config;
            this.transport = new NettyPeerTransport(config);
            transport.start(this::receive, reportedDown::add);
        }

        long id() {
            return config.selfId();
        }

        /** AppendEntries in these tests carry a per-sender sequence number in prevLogIndex and the entry. */
        private void receive(Message message) {
            received.add(message);
            if (message instanceof Message.AppendEntries append) {
                long expected = nextSequenceFrom.computeIfAbsent(message.from(), f -> new AtomicLong()).getAndIncrement();
                long entrySequence = ByteBuffer.wrap(append.entries().get(0).data()).getLong();
                if (append.prevLogIndex() != expected || entrySequence != expected) {
                    orderViolations.add("from " + message.from() + ": expected " + expected + ", got "
                            + append.prevLogIndex() + "/" + entrySequence);
                }
            }
        }

        long appendsFrom(long from) {
            AtomicLong next = nextSequenceFrom.get(from);
            return next == null ? 0 : next.get();
        }
    }

    private Node start(String clusterId, long id, int port, UnaryOperator<TransportConfig.Builder> tweak) {
        TransportConfig.Builder builder = TransportConfig.builder(clusterId, id, new InetSocketAddress("127.0.0.1", port))
                .reconnectBackoff(Duration.ofMillis(10), Duration.ofMillis(200))
                .connectTimeout(Duration.ofSeconds(2))
                .snapshotDirectory(snapshotDir.resolve("node-" + id + "-" + nodes.size()));
        Node node = new Node(tweak.apply(builder).build());
        nodes.add(node);
        return node;
    }

    private Node start(long id) {
        return start(CLUSTER, id, 0, b -> b);
    }

    /** Tells every node every other node's address, as an operator would after the ports are known. */
    private static void introduce(List<Node> cluster) {
        for (Node a : cluster) {
            for (Node b : cluster) {
                if (a != b) {
                    a.config.peers().put(b.id(), b.transport.localAddress());
                }
            }
        }
    }

    private static void awaitFullMesh(List<Node> cluster) {
        for (Node a : cluster) {
            Set<Long> others = new java.util.HashSet<>();
            cluster.stream().filter(b -> b != a).forEach(b -> others.add(b.id()));
            Await.until(TIMEOUT, () -> a.transport.connectedPeers().equals(others),
                    "node " + a.id() + " connected to " + others + " (has " + a.transport.connectedPeers() + ")");
        }
    }

    private static Message.AppendEntries append(long from, long to, long sequence) {
        byte[] data = ByteBuffer.allocate(24).putLong(sequence).putLong(from).putLong(to).array();
        return new Message.AppendEntries(1, from, to, sequence, 1, List.of(Entry.command(sequence + 1, 1, data)), 0);
    }

    @AfterEach
    void closeAll() {
        nodes.forEach(n -> n.transport.close());
    }

    /**
     * A member's published address is unresolved, the initial cluster's resolved: the same endpoint all the
     * same, so learning it must not close the connection (it did, at every start), while a new port or host does.
     */
    @Test
    void aPublishedAddressEqualToTheKnownOneIsNotAChange() {
        InetSocketAddress resolved = new InetSocketAddress("127.0.0.1", 2380);
        assertTrue(NettyPeerTransport.sameEndpoint(InetSocketAddress.createUnresolved("127.0.0.1", 2380), resolved));
        assertFalse(NettyPeerTransport.sameEndpoint(InetSocketAddress.createUnresolved("127.0.0.1", 2381), resolved));
        assertFalse(NettyPeerTransport.sameEndpoint(InetSocketAddress.createUnresolved("127.0.0.2", 2380), resolved));
        assertFalse(NettyPeerTransport.sameEndpoint(resolved, null), "a peer not known before");
    }

    @Test
    void everyPairExchangesTenThousandMessagesInOrderOverOneConnection() throws Exception {
        int perPair = 10_000;
        List<Node> cluster = new ArrayList<>();
        for (long id = 1; id <= 3; id++) {
            cluster.add(start(CLUSTER, id, 0, b -> b.perPeerQueueLimit(2 * perPair)));
        }
        introduce(cluster);
        awaitFullMesh(cluster);

        List<Thread> senders = new ArrayList<>();
        for (Node sender : cluster) {
            Thread thread = new Thread(() -> {
                for (int seq = 0; seq < perPair; seq++) {
                    for (Node to : cluster) {
                        if (to != sender && !sender.transport.send(append(sender.id(), to.id(), seq))) {
                            throw new AssertionError("dropped message " + seq + " to " + to.id());
                        }
                    }
                }
            }, "sender-" + sender.id());
            senders.add(thread);
            thread.start();
        }
        for (Thread thread : senders) {
            thread.join(TIMEOUT.toMillis());
        }

        for (Node receiver : cluster) {
            for (Node sender : cluster) {
                if (sender != receiver) {
                    Await.until(TIMEOUT, () -> receiver.appendsFrom(sender.id()) >= perPair,
                            perPair + " messages " + sender.id() + "->" + receiver.id()
                                    + " (got " + receiver.appendsFrom(sender.id()) + ")");
                }
            }
            assertTrue(receiver.orderViolations.isEmpty(), () -> "out of order: " + receiver.orderViolations);
            assertEquals(2L * perPair, receiver.received.size());
        }
        for (Node a : cluster) {
            for (Node b : cluster) {
                if (a == b) {
                    continue;
                }
                PeerStats stats = a.transport.stats().get(b.id());
                assertEquals(1, stats.connections(), "one connection " + a.id() + "-" + b.id() + ": " + stats);
                assertEquals(perPair, stats.sent(), stats.toString());
                assertEquals(perPair, stats.received(), stats.toString());
                assertEquals(0, stats.dropped(), stats.toString());
                if (a.id() > b.id()) {
                    assertEquals(0, stats.dialAttempts(), "the higher id " + a.id() + " never dials " + b.id());
                } else {
                    assertTrue(stats.dialAttempts() >= 1, stats.toString());
                }
            }
        }
    }

    @Test
    void diallerReconnectsToAPeerRestartedOnTheSamePort() {
        List<Node> cluster = List.of(start(1), start(2), start(3));
        introduce(cluster);
        awaitFullMesh(cluster);
        Node one = cluster.get(0);
        Node two = cluster.get(1);
        Node three = cluster.get(2);
        int port = three.transport.localAddress().getPort();

        three.transport.close();
        Await.until(TIMEOUT, () -> !one.transport.connectedPeers().contains(3L), "node 1 notices 3 is gone");
        Await.until(TIMEOUT, () -> !two.transport.connectedPeers().contains(3L), "node 2 notices 3 is gone");
        assertTrue(one.transport.send(append(1, 3, 0)), "queued while 3 is down");

        Node restarted = start(CLUSTER, 3, port, b -> b.peers(Map.of(
                1L, one.transport.localAddress(), 2L, two.transport.localAddress())));
        awaitFullMesh(List.of(one, two, restarted));

        assertTrue(one.transport.send(append(1, 3, 1)));
        assertTrue(two.transport.send(append(2, 3, 0)));
        assertTrue(restarted.transport.send(append(3, 1, 0)));
        Await.until(TIMEOUT, () -> restarted.appendsFrom(1) == 2, "the queued and the new message 1->3 arrive");
        Await.until(TIMEOUT, () -> restarted.appendsFrom(2) == 1, "2->3 arrives");
        Await.until(TIMEOUT, () -> one.appendsFrom(3) == 1, "3->1 arrives");
        assertTrue(restarted.orderViolations.isEmpty(), restarted.orderViolations::toString);

        PeerStats oneToThree = one.transport.stats().get(3L);
        assertEquals(2, oneToThree.connections(), oneToThree.toString());
        assertTrue(oneToThree.dialAttempts() >= 2, oneToThree.toString());
        assertEquals(0, restarted.transport.stats().get(1L).dialAttempts(), "the higher id does not dial");
    }

    /**
     * A peer's address changed while its old connection is up (`member update` of a running member): the
     * dialler drops the link to the old address and dials the new one at once.
     */
    @Test
    void aChangedAddressClosesTheOldConnectionAndDialsTheNewOne() {
        List<Node> cluster = List.of(start(1), start(2));
        introduce(cluster);
        awaitFullMesh(cluster);
        Node one = cluster.get(0);
        Node oldTwo = cluster.get(1);

        Node movedTwo = start(CLUSTER, 2, 0, b -> b.peers(Map.of(1L, one.transport.localAddress())));
        one.transport.addPeer(2, movedTwo.transport.localAddress());
        Await.until(TIMEOUT, () -> !oldTwo.transport.connectedPeers().contains(1L), "the old link is closed");
        Await.until(TIMEOUT, () -> movedTwo.transport.connectedPeers().contains(1L), "node 1 dialled the new address");
        assertTrue(one.transport.send(append(1, 2, 0)));
        Await.until(TIMEOUT, () -> movedTwo.appendsFrom(1) == 1, "1->2 arrives at the new address");
        assertEquals(0, oldTwo.appendsFrom(1), "nothing went to the old address");
    }

    @Test
    void nodeOfAnotherClusterIsRefusedAndNeverDelivers() {
        Logger handshakeLog = (Logger) LoggerFactory.getLogger(HandshakeHandler.class);
        ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        handshakeLog.addAppender(logged);
        try {
            Node victim = start(2);
            Node intruder = start("other-cluster", 1, 0, b -> b.peers(Map.of(2L, victim.transport.localAddress())));
            victim.config.peers().put(1L, intruder.transport.localAddress());
            for (int seq = 0; seq < 10; seq++) {
                intruder.transport.send(append(1, 2, seq));
            }

            String expectedLine = "expected cluster id 'rota-test' but received cluster id 'other-cluster'";
            Await.until(TIMEOUT, () -> logLines(logged).stream().anyMatch(l -> l.contains(expectedLine)),
                    "the victim logs the refusal");
            Await.until(TIMEOUT, () -> intruder.transport.stats().get(2L).dialAttempts() >= 3,
                    "the intruder has tried a few times");

            assertTrue(victim.received.isEmpty(), () -> "delivered: " + victim.received);
            assertTrue(victim.transport.connectedPeers().isEmpty());
            assertTrue(intruder.transport.connectedPeers().isEmpty());
            assertEquals(0, intruder.transport.stats().get(2L).sent());
        } finally {
            handshakeLog.detachAppender(logged);
        }
    }

    /**
     * A process killed with SIGKILL may close its peer connection before its listening socket, so the probe
     * sent when the connection drops can still be accepted. The transport asks again while the peer stays
     * away, and reports it down once its port refuses. Here the lost peer's "port" is a socket the test closes
     * right after it accepted the first connect; with a single probe, nothing was ever reported.
     */
    @Test
    void aLostPeerIsReportedDownWhenItsPortStopsAcceptingAfterAMoment() throws Exception {
        Node one = start(1);
        Node two = start(2);
        introduce(List.of(one, two));
        awaitFullMesh(List.of(one, two));
        try (ServerSocket dying = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
            one.config.peers().put(2L, new InetSocketAddress("127.0.0.1", dying.getLocalPort()));
            two.transport.close();   // the connection drops; node 1 probes the port that still accepts
            dying.setSoTimeout((int) TIMEOUT.toMillis());
            dying.accept().close();
        }
        Await.until(TIMEOUT, () -> one.reportedDown.contains(2L), "node 1 reports peer 2 down once its port refuses");
    }

    @Test
    void fullQueueDropsTheNewestInsteadOfBlocking() throws IOException {
        int limit = 100;
        int downPort;
        try (ServerSocket probe = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            downPort = probe.getLocalPort();
        }
        Node node = start(CLUSTER, 1, 0, b -> b.perPeerQueueLimit(limit)
                .peers(Map.of(2L, new InetSocketAddress("127.0.0.1", downPort))));

        int accepted = 0;
        int refused = 0;
        long begin = System.nanoTime();
        for (int seq = 0; seq < limit + 50; seq++) {
            if (node.transport.send(append(1, 2, seq))) {
                accepted++;
            } else {
                refused++;
            }
        }
        Duration took = Duration.ofNanos(System.nanoTime() - begin);

        assertEquals(limit, accepted);
        assertEquals(50, refused);
        assertTrue(took.compareTo(Duration.ofSeconds(1)) < 0, "send must not block, took " + took);
        PeerStats stats = node.transport.stats().get(2L);
        assertEquals(50, stats.dropped(), stats.toString());
        assertEquals(limit, stats.queued(), stats.toString());
    }

    @Test
    void queueByteBudgetDropsLargeMessagesBeyondIt() {
        Node node = start(CLUSTER, 1, 0, b -> b.perPeerQueueBytes(10_000));  // peer 2's address is never known
        byte[] kilobyte = new byte[1000];
        int accepted = 0;
        for (int i = 0; i < 20; i++) {
            Message.AppendEntries big = new Message.AppendEntries(1, 1, 2, i, 1,
                    List.of(Entry.command(i + 1, 1, kilobyte)), 0);
            accepted += node.transport.send(big) ? 1 : 0;
        }
        assertEquals(9, accepted, "about 1.1 kB each against a 10 kB budget");
        assertEquals(11, node.transport.stats().get(2L).dropped());
    }

    @Test
    void snapshotTravelsInChunksAndArrivesWhole() {
        int chunk = 64 * 1024;
        List<Node> cluster = List.of(
                start(CLUSTER, 1, 0, b -> b.snapshotChunkBytes(chunk).writeBufferWaterMarks(32 * 1024, 64 * 1024)),
                start(CLUSTER, 2, 0, b -> b.snapshotChunkBytes(chunk)));
        introduce(cluster);
        Message.InstallSnapshot snapshot = MessageCodecTest.installSnapshot(
                MessageCodecTest.randomBytes(new Random(7), 3 * chunk + chunk / 2));

        assertTrue(cluster.get(0).transport.send(snapshot));
        assertTrue(cluster.get(0).transport.send(new Message.TimeoutNow(5, 1, 2)));

        Node receiver = cluster.get(1);
        Await.until(TIMEOUT, () -> receiver.received.size() == 2, "the snapshot and the message behind it arrive");
        // Messages queued behind a snapshot may overtake its chunks (they never wait for a whole transfer).
        List<Message> both = new java.util.ArrayList<>(receiver.received);
        Message.InstallSnapshot arrived = (Message.InstallSnapshot) both.stream()
                .filter(m -> m instanceof Message.InstallSnapshot).findFirst().orElseThrow();
        MessageCodecTest.assertSameInstallSnapshot(snapshot, arrived);
        assertTrue(both.contains(new Message.TimeoutNow(5, 1, 2)), both.toString());
    }

    @Test
    void messageLargerThanTheMaximumFrameIsDroppedAndTheConnectionKept() {
        int maxFrame = 64 * 1024;
        List<Node> cluster = List.of(
                start(CLUSTER, 1, 0, b -> b.maxFrameBytes(maxFrame).snapshotChunkBytes(16 * 1024)),
                start(CLUSTER, 2, 0, b -> b.maxFrameBytes(maxFrame).snapshotChunkBytes(16 * 1024)));
        introduce(cluster);
        awaitFullMesh(cluster);
        Node sender = cluster.get(0);
        Node receiver = cluster.get(1);

        assertTrue(sender.transport.send(new Message.AppendEntries(1, 1, 2, 0, 1,
                List.of(Entry.command(1, 1, new byte[maxFrame])), 0)));
        assertTrue(sender.transport.send(new Message.TimeoutNow(1, 1, 2)));

        Await.until(TIMEOUT, () -> receiver.received.size() == 1, "the small message arrives");
        assertEquals(new Message.TimeoutNow(1, 1, 2), receiver.received.poll());
        assertEquals(1, sender.transport.stats().get(2L).dropped());
        assertEquals(1, sender.transport.stats().get(2L).connections(), "the connection survived");
    }

    @Test
    void messageOfAnUnknownTypeFromANewerPeerIsCountedAndTheNodeKeepsReceiving() throws IOException {
        Node node = start(2);
        node.config.peers().put(1L, new InetSocketAddress("127.0.0.1", 1)); // known, never dialled (lower id)
        try (Socket newer = new Socket()) {
            newer.connect(node.transport.localAddress(), (int) TIMEOUT.toMillis());
            DataOutputStream out = new DataOutputStream(newer.getOutputStream());
            // Node 1 of the cluster, on a version with a message type node 2 does not know.
            writeFrame(out, HandshakeHandlerTest.handshake(CLUSTER, 1));
            writeFrame(out, MessageCodecTest.fromANewerVersion());
            writeFrame(out, MessageCodec.toProto(new Message.TimeoutNow(3, 1, 2)));

            Await.until(TIMEOUT, () -> node.received.size() == 1, "the known message behind the unknown one arrives");
            assertEquals(new Message.TimeoutNow(3, 1, 2), node.received.poll());
            assertEquals(1, node.transport.stats().get(1L).rejected());
            assertEquals(Set.of(1L), node.transport.connectedPeers(), "still connected");
        }
    }

    private static void writeFrame(DataOutputStream out, RaftMessage message) throws IOException {
        byte[] body = message.toByteArray();
        out.writeInt(body.length);
        out.write(body);
        out.flush();
    }

    private static List<String> logLines(ListAppender<ILoggingEvent> appender) {
        synchronized (appender) {
            return appender.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
        }
    }
}
