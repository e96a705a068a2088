package io.rota.raft.transport;

import io.rota.raft.core.Configuration;
import io.rota.raft.core.Message;
import io.rota.raft.core.Snapshot;
import io.rota.raft.core.SnapshotMetadata;
import io.rota.raft.storage.SnapshotFile;
import io.rota.raft.storage.SnapshotStore;
import io.rota.testkit.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * InstallSnapshot streamed from disk to disk (§7, Figure 13 offset/data/done) over real loopback sockets,
 * with tiny chunks so that even a small snapshot is hundreds of frames: heartbeats get through while a
 * transfer runs, a transfer broken half-way is reported to the sender and leaves no partial file at the
 * receiver, and sent again it arrives whole.
 */
class SnapshotStreamingTest {

    private static final String CLUSTER = "rota-snapshot-test";
    private static final Duration TIMEOUT = Duration.ofSeconds(20);
    /** 1 MiB in 4 KiB chunks: 256 frames. */
    private static final int CHUNK_BYTES = 4 << 10;
    private static final int IMAGE_BYTES = 1 << 20;

    @TempDir
    Path dir;

    private final List<NettyPeerTransport> transports = new ArrayList<>();
    private final java.util.Map<NettyPeerTransport, TransportConfig> configs = new java.util.HashMap<>();

    /** Peers the transports reported a broken snapshot transfer to. */
    private final Queue<Long> snapshotFailures = new ConcurrentLinkedQueue<>();

    @AfterEach
    void closeAll() {
        transports.forEach(NettyPeerTransport::close);
    }

    @Test
    void heartbeatsFlowWhileASnapshotStreams() throws Exception {
        // 4 MiB (1,024 chunks): 1 MiB once streamed whole before the first heartbeat's round trip (a full suite).
        Message.InstallSnapshot install = installSnapshot(4 * IMAGE_BYTES);
        NettyPeerTransport leader = transport(1, 0, dir.resolve("leader"), m -> { });
        Receiver follower = new Receiver(dir.resolve("follower"));
        NettyPeerTransport followerTransport = transport(2, 0, follower.dir, follower::receive);
        introduce(leader, 1, followerTransport, 2);
        connect(leader, follower);

        assertTrue(leader.send(install));
        // Keep heartbeats coming for the whole transfer: each must arrive, and some while a partial file exists.
        int sent = 0;
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (follower.snapshots.isEmpty() && System.nanoTime() < deadline) {
            leader.send(new Message.Heartbeat(5, 1, 2, 0, ++sent));
            int expected = sent;
            Await.until(TIMEOUT, () -> follower.heartbeats.get() >= expected || !follower.snapshots.isEmpty(),
                    "heartbeat " + expected + " arrives");
        }
        Await.until(TIMEOUT, () -> !follower.snapshots.isEmpty(), "the snapshot arrives");
        assertTrue(follower.heartbeatsDuringTransfer.get() > 0, "no heartbeat arrived while the snapshot streamed"
                + " (" + follower.heartbeats.get() + " heartbeats in all)");
        assertSameImage(install, follower.snapshots.poll());
    }

    @Test
    void aTransferBrokenHalfWayIsReportedLeavesNoPartialFileAndArrivesWholeWhenSentAgain() throws Exception {
        // 4 MiB (1,024 chunks): long enough that the follower dies while most of it is still to come.
        Message.InstallSnapshot install = installSnapshot(4 * IMAGE_BYTES);
        NettyPeerTransport leader = transport(1, 0, dir.resolve("leader"), m -> { });
        Path followerDir = dir.resolve("follower");
        Receiver first = new Receiver(followerDir);
        NettyPeerTransport firstFollower = transport(2, 0, followerDir, first::receive);
        int port = firstFollower.localAddress().getPort();
        introduce(leader, 1, firstFollower, 2);
        connect(leader, first);

        // Break the transfer from the receiving side once a partial file exists: the follower process dies.
        first.onPartialFile = () -> firstFollower.close();
        assertTrue(leader.send(install));
        int sent = 0;
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (!snapshotFailures.contains(2L) && first.snapshots.isEmpty() && System.nanoTime() < deadline) {
            leader.send(new Message.Heartbeat(5, 1, 2, 0, ++sent));
            int expected = sent;
            Await.until(TIMEOUT, () -> first.heartbeats.get() >= expected || snapshotFailures.contains(2L)
                    || !first.snapshots.isEmpty(), "heartbeat " + expected + " arrives or the transfer breaks");
        }
        Await.until(TIMEOUT, () -> snapshotFailures.contains(2L), "the leader hears that the transfer broke off");
        Await.until(TIMEOUT, () -> partialFiles(followerDir).isEmpty(), "the partial file is deleted");

        // The follower comes back on its port; the leader's core, told of the failure, sends it again.
        // Its old transport was closed from its own event loop (in the chunk callback), which cannot wait for
        // the listening socket to close: bind again until the port is free.
        Receiver second = new Receiver(followerDir);
        NettyPeerTransport[] restarted = new NettyPeerTransport[1];
        Await.until(TIMEOUT, () -> {
            try {
                restarted[0] = transport(2, port, followerDir, second::receive);
                return true;
            } catch (IllegalStateException portStillBound) {
                return false;
            }
        }, "the follower listens on port " + port + " again");
        NettyPeerTransport secondFollower = restarted[0];
        configs.get(secondFollower).peers().put(1L, leader.localAddress());
        assertTrue(leader.send(install));
        Await.until(TIMEOUT, () -> !second.snapshots.isEmpty(), "the snapshot sent again arrives");
        assertSameImage(install, second.snapshots.poll());
        assertEquals(List.of(), partialFiles(followerDir));
    }

    // --- helpers

    /** A 1 MiB snapshot in the leader's snapshot file, as its store writes it. */
    private Message.InstallSnapshot installSnapshot() throws IOException {
        return installSnapshot(IMAGE_BYTES);
    }

    private Message.InstallSnapshot installSnapshot(int bytes) throws IOException {
        byte[] image = new byte[bytes];
        new Random(18).nextBytes(image);
        SnapshotMetadata metadata = new SnapshotMetadata(100, 4, Configuration.of(1L, 2L, 3L));
        SnapshotFile file = new SnapshotStore(dir.resolve("leader-store")).save(metadata, out -> out.write(image));
        return new Message.InstallSnapshot(5, 1, 2, new Snapshot(metadata, file));
    }

    private NettyPeerTransport transport(long id, int port, Path snapshotDir,
                                         java.util.function.Consumer<Message> inbound) {
        TransportConfig config = TransportConfig.builder(CLUSTER, id, new InetSocketAddress("127.0.0.1", port))
                .snapshotChunkBytes(CHUNK_BYTES).writeBufferWaterMarks(8 << 10, 16 << 10)
                .reconnectBackoff(Duration.ofMillis(10), Duration.ofMillis(100))
                .snapshotDirectory(snapshotDir).build();
        NettyPeerTransport t = new NettyPeerTransport(config);
        t.start(inbound, peer -> { }, snapshotFailures::add);
        transports.add(t);
        configs.put(t, config);
        return t;
    }

    private void introduce(NettyPeerTransport a, long aId, NettyPeerTransport b, long bId) {
        configs.get(a).peers().put(bId, b.localAddress());
        configs.get(b).peers().put(aId, a.localAddress());
    }

    /** A heartbeat there and back, so the transfers below start on an open connection. */
    private static void connect(NettyPeerTransport leader, Receiver follower) {
        leader.send(new Message.Heartbeat(5, 1, 2, 0, 0));
        Await.until(TIMEOUT, () -> follower.heartbeats.get() > 0, "the leader connects to the follower");
        follower.heartbeats.set(0);
    }

    private static List<Path> partialFiles(Path dir) {
        if (!Files.exists(dir)) {
            return List.of();
        }
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(f -> f.getFileName().toString().endsWith(".tmp")).toList();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static void assertSameImage(Message.InstallSnapshot sent, Message.InstallSnapshot received)
            throws IOException {
        assertEquals(sent.snapshot().metadata(), received.snapshot().metadata());
        SnapshotFile file = assertInstanceOf(SnapshotFile.class, received.snapshot().data(),
                "a received snapshot is a file, never an array");
        try (var expected = SnapshotFile.open(sent.snapshot().data()); var actual = file.open()) {
            assertArrayEquals(expected.readAllBytes(), actual.readAllBytes());
        }
    }

    /** A follower's inbound side: counts heartbeats, noting those that arrive while a partial file exists. */
    private static final class Receiver {
        final Path dir;
        final Queue<Message.InstallSnapshot> snapshots = new ConcurrentLinkedQueue<>();
        final AtomicInteger heartbeats = new AtomicInteger();
        final AtomicInteger heartbeatsDuringTransfer = new AtomicInteger();
        volatile Runnable onPartialFile;

        Receiver(Path dir) {
            this.dir = dir;
        }

        void receive(Message m) {
            if (m instanceof Message.InstallSnapshot install) {
                snapshots.add(install);
                return;
            }
            if (m instanceof Message.Heartbeat) {
                if (!partialFiles(dir).isEmpty()) {
                    heartbeatsDuringTransfer.incrementAndGet();
                    Runnable r = onPartialFile;
                    if (r != null) {
                        onPartialFile = null;
                        new Thread(r, "test-kill-follower").start();
                    }
                }
                heartbeats.incrementAndGet();
            }
        }
    }
}
