package io.rota.server.lab;

import io.rota.raft.core.Message;
import io.rota.raft.transport.PeerTransport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongConsumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Lab mode's two powers, each bounded: the controller runs only {@code cluster.sh ACTION NAME} for the four
 * allowed actions and a plain member name, in the cluster's directory; the partition switch drops Raft
 * traffic both ways while cut and lets it through again once healed.
 */
class LabControllerTest {

    @TempDir
    Path dir;

    @Test
    void runsClusterShWithTheActionAndTheNameOnly() throws Exception {
        Path script = dir.resolve("cluster.sh");
        Files.writeString(script, "echo \"$1 $2 in $ROTA_CLUSTER_DIR\"\nexit 3\n");
        try (LabController lab = new LabController(script, dir, new LabPartition(new Recording()))) {
            LabController.Result r = lab.member("pause", "n2").get(30, TimeUnit.SECONDS);
            assertEquals(3, r.exitCode());
            assertEquals("pause n2 in " + dir + "\n", r.output());
            assertThrows(IllegalArgumentException.class, () -> lab.member("rm", "n2"));
            assertThrows(IllegalArgumentException.class, () -> lab.member("kill", "n2; rm -rf /"));
            assertThrows(IllegalArgumentException.class, () -> lab.member("kill", null));
            try (var files = Files.list(dir)) {
                assertEquals(List.of(script), files.toList(), "the output file is removed");
            }
        }
    }

    @Test
    void aCutMemberNeitherSendsNorHears() {
        Recording inner = new Recording();
        LabPartition partition = new LabPartition(inner);
        List<Message> heard = new ArrayList<>();
        partition.start(heard::add, peer -> heard.add(null));
        Message m = new Message.TimeoutNow(1, 2, 3);
        partition.cut(true);
        assertTrue(partition.send(m), "a cut cable does not say so");
        inner.inbound.accept(m);
        inner.peerDown.accept(2);
        assertTrue(inner.sent.isEmpty() && heard.isEmpty());
        assertEquals(Set.of(), partition.connectedPeers());
        partition.cut(false);
        assertTrue(partition.send(m));
        inner.inbound.accept(m);
        assertEquals(List.of(m), inner.sent);
        assertEquals(List.of(m), heard);
        assertFalse(partition.isCut());
    }

    /** Records what is sent, and hands the test the inbound sinks. */
    private static final class Recording implements PeerTransport {
        final List<Message> sent = new ArrayList<>();
        Consumer<Message> inbound;
        LongConsumer peerDown;

        @Override
        public void start(Consumer<Message> inbound, LongConsumer peerDown) {
            this.inbound = inbound;
            this.peerDown = peerDown;
        }

        @Override
        public InetSocketAddress localAddress() {
            return new InetSocketAddress("127.0.0.1", 1);
        }

        @Override
        public boolean send(Message message) {
            return sent.add(message);
        }

        @Override
        public Set<Long> connectedPeers() {
            return Set.of(2L);
        }

        @Override
        public void close() {
        }
    }
}
