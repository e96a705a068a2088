package io.rota.raft.transport;

import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.embedded.EmbeddedChannel;
import io.rota.proto.InstallSnapshot;
import io.rota.proto.RaftMessage;
import io.rota.raft.core.Configuration;
import io.rota.raft.core.Message;
import io.rota.raft.core.Snapshot;
import io.rota.raft.core.SnapshotBytes;
import io.rota.raft.core.SnapshotMetadata;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * One peer's outbound snapshot (§7, Figure 13: offset, data, done) on an {@link EmbeddedChannel} whose write
 * buffer is full after one chunk, so a transfer takes many drains and other messages arrive while it streams.
 */
class PeerSnapshotTest {

    private static final int CHUNK_BYTES = 16;
    /** Ten chunks. */
    private static final int IMAGE_BYTES = 10 * CHUNK_BYTES;

    /** Peers whose snapshot transfer the peer reported broken. */
    private final List<Long> failures = new ArrayList<>();
    private final Peer peer = new Peer(2, TransportConfig.builder("peer-test", 1,
            new InetSocketAddress("127.0.0.1", 0)).snapshotChunkBytes(CHUNK_BYTES).build(), failures::add);
    private final EmbeddedChannel ch = new EmbeddedChannel();

    PeerSnapshotTest() {
        ch.config().setWriteBufferWaterMark(new WriteBufferWaterMark(1, 2)); // any message fills the buffer
        peer.attach(ch);
    }

    @Test
    void aTransferUnderWayIsNotRestartedForANewerSnapshotOfTheSameTerm() {
        peer.offer(snapshot(5, 100));
        peer.drainNow();
        assertEquals(List.of("100@0"), chunks(), "one chunk per drain");

        peer.offer(snapshot(5, 200)); // the core's retry, with the snapshot it took meanwhile
        ch.runPendingTasks();

        List<String> expected = new ArrayList<>();
        for (int offset = 0; offset < IMAGE_BYTES; offset += CHUNK_BYTES) {
            expected.add("100@" + offset + (offset + CHUNK_BYTES == IMAGE_BYTES ? " done" : ""));
        }
        assertEquals(expected, chunks(), "snapshot 100 streamed to its end; 200 not started");
        assertEquals(List.of(), failures);
    }

    @Test
    void aNewTermRestartsTheTransfer() {
        peer.offer(snapshot(5, 100));
        peer.drainNow();
        peer.offer(snapshot(6, 200)); // a new leader's (or term's) snapshot: the old transfer is void
        ch.runPendingTasks();

        List<String> sentChunks = chunks();
        assertEquals("100@0", sentChunks.get(0));
        assertEquals("200@0", sentChunks.get(1), "restarted at offset 0: " + sentChunks);
        assertEquals("200@" + (IMAGE_BYTES - CHUNK_BYTES) + " done", sentChunks.get(sentChunks.size() - 1));
        assertEquals(IMAGE_BYTES / CHUNK_BYTES + 1, sentChunks.size());
    }

    @Test
    void onlyTheSnapshotsOwnAnswerMarksItAnswered() {
        streamWhole(snapshot(5, 100));
        // Answers that say nothing about snapshot 100: to an earlier AppendEntries, a rejection, an older term.
        peer.noteReceived(new Message.AppendEntriesResponse(5, 2, 1, true, 50, 0, 0, 0));
        peer.noteReceived(new Message.AppendEntriesResponse(5, 2, 1, false, 0, 100, 1, 0));
        peer.noteReceived(new Message.AppendEntriesResponse(4, 2, 1, true, 120, 0, 0, 0));
        ch.close();
        peer.abandonSnapshot(ch);
        assertEquals(List.of(2L), failures, "the connection closed before the snapshot was answered");
    }

    @Test
    void theSnapshotsAnswerMarksItAnswered() {
        streamWhole(snapshot(5, 100));
        peer.noteReceived(new Message.AppendEntriesResponse(5, 2, 1, true, 100, 0, 0, 0));
        ch.close();
        peer.abandonSnapshot(ch);
        assertEquals(List.of(), failures, "answered: a closed connection loses nothing");
    }

    // --- helpers

    /** Chunks written so far, as "index@offset" (and " done" for the last). */
    private final List<String> sentChunks = new ArrayList<>();

    private List<String> chunks() {
        for (Object m; (m = ch.readOutbound()) != null; ) {
            InstallSnapshot c = ((RaftMessage) m).getInstallSnapshot();
            sentChunks.add(c.getMetadata().getLastIncludedIndex() + "@" + c.getOffset() + (c.getDone() ? " done" : ""));
        }
        return sentChunks;
    }

    private void streamWhole(Message.InstallSnapshot snapshot) {
        peer.offer(snapshot);
        peer.drainNow();
        ch.runPendingTasks();
        assertEquals(IMAGE_BYTES / CHUNK_BYTES, chunks().size());
    }

    private static Message.InstallSnapshot snapshot(long term, long index) {
        SnapshotMetadata metadata = new SnapshotMetadata(index, term, Configuration.of(1L, 2L, 3L));
        return new Message.InstallSnapshot(term, 1, 2, new Snapshot(metadata, new SnapshotBytes(new byte[IMAGE_BYTES])));
    }
}
