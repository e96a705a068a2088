package io.rota.raft.transport;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnknownFieldSet;
import io.rota.proto.RaftMessage;
import io.rota.raft.core.Configuration;
import io.rota.raft.core.Entry;
import io.rota.raft.core.Message;
import io.rota.raft.core.Snapshot;
import io.rota.raft.core.SnapshotMetadata;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The codec is lossless for every core message, and snapshots survive chunking. */
class MessageCodecTest {

    /** Where received snapshots are written, as a member's snapshot directory. */
    @org.junit.jupiter.api.io.TempDir
    static java.nio.file.Path receiveDir;

    private static final long SEED = 20261129L;

    @Test
    void everyMessageTypeRoundTrips() {
        List<Message> messages = List.of(
                new Message.RequestVote(7, 1, 2, 100, 6, false, false),
                new Message.RequestVote(8, 1, 3, 100, 6, true, true),
                new Message.RequestVoteResponse(7, 2, 1, true, false),
                new Message.RequestVoteResponse(8, 3, 1, false, true),
                new Message.AppendEntries(5, 1, 2, 10, 4, List.of(), 9),
                new Message.AppendEntries(5, 1, 2, 10, 4, List.of(), 9, true), // a commit notice
                new Message.AppendEntriesResponse(5, 2, 1, true, 12, 0, 0, 0),
                new Message.AppendEntriesResponse(5, 2, 1, false, 0, 10, 7, 3),
                new Message.Heartbeat(5, 1, 3, 11, 42),
                new Message.HeartbeatResponse(5, 3, 1, 42, 17),
                new Message.TimeoutNow(5, 1, 2),
                new Message.ReadIndexRequest(5, 2, 1, List.of(1L, 2L, Long.MAX_VALUE)),
                new Message.ReadIndexResponse(5, 1, 2, List.of(1L, 2L), 77));
        for (Message m : messages) {
            assertEquals(m, MessageCodec.fromProto(reparse(MessageCodec.toProto(m))), m.toString());
        }
    }

    /**
     * Every record the core can send, found by reflection: a new message type without a sample here fails
     * this test (the compiler already makes the codec handle it; this makes the round trip proven too).
     */
    @Test
    void everyPermittedMessageTypeRoundTrips() {
        Map<Class<?>, Message> samples = new LinkedHashMap<>();
        for (Message m : List.of(
                new Message.RequestVote(8, 1, 3, 100, 6, true, true),
                new Message.RequestVoteResponse(7, 2, 1, true, false),
                new Message.AppendEntries(5, 1, 2, 10, 4,
                        List.of(Entry.noOp(11, 5), Entry.command(12, 5, "put a=1".getBytes())), 9),
                new Message.AppendEntriesResponse(5, 2, 1, false, 0, 10, 7, 3),
                new Message.Heartbeat(5, 1, 3, 11, 42),
                new Message.HeartbeatResponse(5, 3, 1, 42, 17),
                installSnapshot(randomBytes(new Random(SEED), 2500)),
                new Message.TimeoutNow(5, 1, 2),
                new Message.ReadIndexRequest(5, 2, 1, List.of(1L, 2L, Long.MAX_VALUE)),
                new Message.ReadIndexResponse(5, 1, 2, List.of(1L, 2L), 77))) {
            samples.put(m.getClass(), m);
        }
        assertEquals(Set.of(Message.class.getPermittedSubclasses()), samples.keySet(),
                "every Message type needs a sample here");

        for (Message sent : samples.values()) {
            if (sent instanceof Message.InstallSnapshot snapshot) {
                SnapshotAssembler assembler = new SnapshotAssembler(receiveDir, 1 << 20);
                SnapshotAssembler.Outcome outcome = null;
                for (RaftMessage frame : chunks(snapshot, 1000)) {
                    outcome = assembler.accept(reparse(frame).getInstallSnapshot());
                }
                assertSameInstallSnapshot(snapshot, assertInstanceOf(SnapshotAssembler.Complete.class, outcome).message());
            } else if (sent instanceof Message.AppendEntries append) {
                assertSameAppendEntries(append, (Message.AppendEntries) MessageCodec.fromProto(reparse(MessageCodec.toProto(sent))));
            } else {
                assertEquals(sent, MessageCodec.fromProto(reparse(MessageCodec.toProto(sent))), sent.toString());
            }
        }
    }

    @Test
    void messageOfATypeThisVersionDoesNotKnowIsATypedError() {
        RaftMessage fromTheFuture = reparse(fromANewerVersion());

        InvalidFrameException e = assertThrows(InvalidFrameException.class, () -> MessageCodec.fromProto(fromTheFuture));

        assertEquals(InvalidFrameException.Reason.UNKNOWN_TYPE, e.reason(), e.getMessage());
    }

    @Test
    void entryOfATypeThisVersionDoesNotKnowIsATypedError() {
        RaftMessage frame = RaftMessage.newBuilder().setAppendEntries(io.rota.proto.AppendEntries.newBuilder()
                .setTerm(1).setFrom(1).setTo(2).addEntries(io.rota.proto.Entry.newBuilder()
                        .setIndex(1).setTerm(1).setTypeValue(77))).build();

        InvalidFrameException e = assertThrows(InvalidFrameException.class, () -> MessageCodec.fromProto(reparse(frame)));

        assertEquals(InvalidFrameException.Reason.UNKNOWN_TYPE, e.reason(), e.getMessage());
    }

    @Test
    void malformedFramesAreTypedErrors() {
        RaftMessage entryAtIndexZero = RaftMessage.newBuilder().setAppendEntries(io.rota.proto.AppendEntries.newBuilder()
                .setTerm(1).setFrom(1).setTo(2).addEntries(io.rota.proto.Entry.newBuilder().setIndex(0).setTerm(1)))
                .build();
        for (RaftMessage frame : List.of(RaftMessage.getDefaultInstance(), entryAtIndexZero,
                HandshakeHandlerTest.handshake("rota-test", 1))) {
            InvalidFrameException e = assertThrows(InvalidFrameException.class, () -> MessageCodec.fromProto(frame));
            assertEquals(InvalidFrameException.Reason.MALFORMED, e.reason(), e.getMessage());
        }
    }

    @Test
    void appendEntriesKeepsEntryTypesAndBytes() {
        List<Entry> entries = List.of(
                Entry.noOp(11, 5),
                Entry.command(12, 5, "put a=1".getBytes()),
                Entry.command(13, 5, new byte[0]),
                Entry.command(14, 5, randomBytes(new Random(SEED), 10_000)));
        Message.AppendEntries sent = new Message.AppendEntries(5, 1, 2, 10, 4, entries, 9);

        Message.AppendEntries received =
                (Message.AppendEntries) MessageCodec.fromProto(reparse(MessageCodec.toProto(sent)));

        assertSameAppendEntries(sent, received);
    }

    @Test
    void membershipTravelsInEntriesAndSnapshots() {
        Configuration withLearners = new Configuration(Set.of(1L, 2L, 3L), Set.of(4L, 9L));
        Message.AppendEntries sent = new Message.AppendEntries(5, 1, 2, 10, 4,
                List.of(Entry.configuration(11, 5, withLearners)), 9);
        Message.AppendEntries received =
                (Message.AppendEntries) MessageCodec.fromProto(reparse(MessageCodec.toProto(sent)));
        assertSameAppendEntries(sent, received);
        assertEquals(withLearners, Configuration.decode(received.entries().get(0).data()));

        Message.InstallSnapshot snapshot = new Message.InstallSnapshot(5, 1, 4,
                new Snapshot(new SnapshotMetadata(100, 4, withLearners), randomBytes(new Random(SEED), 2500)));
        SnapshotAssembler assembler = new SnapshotAssembler(receiveDir, 1 << 20);
        SnapshotAssembler.Outcome outcome = null;
        for (RaftMessage frame : chunks(snapshot, 1000)) {
            outcome = assembler.accept(reparse(frame).getInstallSnapshot());
        }
        assertSameInstallSnapshot(snapshot, assertInstanceOf(SnapshotAssembler.Complete.class, outcome).message());

        // A sender from before learners existed sets no learners field: that means none.
        io.rota.proto.SnapshotMetadata older = io.rota.proto.SnapshotMetadata.newBuilder()
                .setLastIncludedIndex(100).setLastIncludedTerm(4).addAllVoters(List.of(1L, 2L, 3L)).build();
        assertEquals(new SnapshotMetadata(100, 4, Configuration.of(1L, 2L, 3L)), MessageCodec.fromProto(older));
    }

    @Test
    void snapshotOfThreeAndAHalfChunksRoundTrips() {
        int chunk = 1024;
        Message.InstallSnapshot sent = installSnapshot(randomBytes(new Random(SEED), 3 * chunk + chunk / 2));

        List<RaftMessage> frames = chunks(sent, chunk);
        assertEquals(4, frames.size());
        SnapshotAssembler assembler = new SnapshotAssembler(receiveDir, 1 << 20);
        for (int i = 0; i < 3; i++) {
            assertFalse(frames.get(i).getInstallSnapshot().getDone());
            assertInstanceOf(SnapshotAssembler.Pending.class, assembler.accept(reparse(frames.get(i)).getInstallSnapshot()));
        }
        SnapshotAssembler.Outcome last = assembler.accept(reparse(frames.get(3)).getInstallSnapshot());

        Message.InstallSnapshot received = assertInstanceOf(SnapshotAssembler.Complete.class, last).message();
        assertSameInstallSnapshot(sent, received);
        assertFalse(assembler.inProgress());
    }

    @Test
    void emptySnapshotIsOneChunk() {
        Message.InstallSnapshot sent = installSnapshot(new byte[0]);
        List<RaftMessage> frames = chunks(sent, 1024);
        assertEquals(1, frames.size());
        SnapshotAssembler.Outcome outcome = new SnapshotAssembler(receiveDir, 1024).accept(frames.get(0).getInstallSnapshot());
        assertSameInstallSnapshot(sent, assertInstanceOf(SnapshotAssembler.Complete.class, outcome).message());
    }

    @Test
    void missingChunkIsRejectedAndThePartialSnapshotDiscarded() {
        List<RaftMessage> frames = chunks(installSnapshot(new byte[4000]), 1000);
        SnapshotAssembler assembler = new SnapshotAssembler(receiveDir, 1 << 20);
        assembler.accept(frames.get(0).getInstallSnapshot());

        SnapshotAssembler.Outcome outcome = assembler.accept(frames.get(2).getInstallSnapshot());

        assertTrue(assertInstanceOf(SnapshotAssembler.Rejected.class, outcome).reason().contains("expected offset 1000"),
                outcome.toString());
        assertFalse(assembler.inProgress());
        // The rest of that transfer is refused too: it no longer starts at offset 0.
        assertInstanceOf(SnapshotAssembler.Rejected.class, assembler.accept(frames.get(3).getInstallSnapshot()));
    }

    @Test
    void chunkWithoutItsBeginningIsRejected() {
        List<RaftMessage> frames = chunks(installSnapshot(new byte[3000]), 1000);
        SnapshotAssembler.Outcome outcome = new SnapshotAssembler(receiveDir, 1 << 20).accept(frames.get(1).getInstallSnapshot());
        assertInstanceOf(SnapshotAssembler.Rejected.class, outcome);
    }

    @Test
    void newSnapshotReplacesAPartialOne() {
        SnapshotAssembler assembler = new SnapshotAssembler(receiveDir, 1 << 20);
        List<RaftMessage> older = chunks(installSnapshot(new byte[3000]), 1000);
        assembler.accept(older.get(0).getInstallSnapshot());

        Message.InstallSnapshot newer = new Message.InstallSnapshot(6, 1, 2, new Snapshot(
                new SnapshotMetadata(200, 6, Configuration.of(1L, 2L, 3L)), randomBytes(new Random(SEED), 1500)));
        SnapshotAssembler.Outcome outcome = null;
        for (RaftMessage frame : chunks(newer, 1000)) {
            outcome = assembler.accept(frame.getInstallSnapshot());
        }
        assertSameInstallSnapshot(newer, assertInstanceOf(SnapshotAssembler.Complete.class, outcome).message());
    }

    /** The announced total is checked before the first byte is written; nothing is left on disk. */
    @Test
    void snapshotLargerThanTheMaximumIsRejected() throws Exception {
        SnapshotAssembler assembler = new SnapshotAssembler(receiveDir, 2500);
        List<RaftMessage> frames = chunks(installSnapshot(new byte[3000]), 1000);

        SnapshotAssembler.Outcome outcome = assembler.accept(frames.get(0).getInstallSnapshot());

        assertTrue(assertInstanceOf(SnapshotAssembler.Rejected.class, outcome).reason().contains("maximum snapshot size"));
        assertFalse(assembler.inProgress());
        try (var files = java.nio.file.Files.list(receiveDir)) {
            assertEquals(List.of(), files.filter(f -> f.toString().endsWith(".tmp")).toList());
        }
    }

    @Test
    void invalidFramesAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> MessageCodec.fromProto(RaftMessage.getDefaultInstance()));
        RaftMessage entryAtIndexZero = RaftMessage.newBuilder().setAppendEntries(io.rota.proto.AppendEntries.newBuilder()
                .setTerm(1).setFrom(1).setTo(2).addEntries(io.rota.proto.Entry.newBuilder().setIndex(0).setTerm(1)))
                .build();
        assertThrows(IllegalArgumentException.class, () -> MessageCodec.fromProto(entryAtIndexZero));
        assertThrows(IllegalArgumentException.class,
                () -> MessageCodec.toProto(installSnapshot(new byte[1])));
    }

    // --- helpers

    /** A frame as a newer version might send it: a payload in a oneof field this version has never heard of. */
    static RaftMessage fromANewerVersion() {
        return RaftMessage.newBuilder().setUnknownFields(UnknownFieldSet.newBuilder()
                .addField(99, UnknownFieldSet.Field.newBuilder()
                        .addLengthDelimited(ByteString.copyFromUtf8("a message type from the future")).build())
                .build()).build();
    }

    static Message.InstallSnapshot installSnapshot(byte[] data) {
        return new Message.InstallSnapshot(5, 1, 2,
                new Snapshot(new SnapshotMetadata(100, 4, Configuration.of(1L, 2L, 3L)), data));
    }

    static List<RaftMessage> chunks(Message.InstallSnapshot message, int chunkBytes) {
        List<RaftMessage> frames = new ArrayList<>();
        for (Iterator<RaftMessage> it = MessageCodec.snapshotChunks(message, chunkBytes); it.hasNext(); ) {
            frames.add(it.next());
        }
        return frames;
    }

    /** Serialises and parses again, as the wire does. */
    static RaftMessage reparse(RaftMessage frame) {
        try {
            return RaftMessage.parseFrom(frame.toByteArray());
        } catch (com.google.protobuf.InvalidProtocolBufferException e) {
            throw new AssertionError(e);
        }
    }

    static byte[] randomBytes(Random random, int length) {
        byte[] bytes = new byte[length];
        random.nextBytes(bytes);
        return bytes;
    }

    /** Records compare arrays by reference; entries are equal here when their bytes are. */
    static void assertSameEntry(Entry expected, Entry actual) {
        assertEquals(expected.index(), actual.index());
        assertEquals(expected.term(), actual.term());
        assertEquals(expected.type(), actual.type());
        assertArrayEquals(expected.data(), actual.data(), () -> "data of " + expected);
    }

    static void assertSameAppendEntries(Message.AppendEntries expected, Message.AppendEntries actual) {
        assertEquals(new Message.AppendEntries(expected.term(), expected.from(), expected.to(), expected.prevLogIndex(),
                        expected.prevLogTerm(), List.of(), expected.leaderCommit(), expected.commitNotice()),
                new Message.AppendEntries(actual.term(), actual.from(), actual.to(), actual.prevLogIndex(),
                        actual.prevLogTerm(), List.of(), actual.leaderCommit(), actual.commitNotice()));
        assertEquals(expected.entries().size(), actual.entries().size());
        for (int i = 0; i < expected.entries().size(); i++) {
            assertSameEntry(expected.entries().get(i), actual.entries().get(i));
        }
    }

    static void assertSameInstallSnapshot(Message.InstallSnapshot expected, Message.InstallSnapshot actual) {
        assertEquals(expected.term(), actual.term());
        assertEquals(expected.from(), actual.from());
        assertEquals(expected.to(), actual.to());
        assertEquals(expected.snapshot().metadata(), actual.snapshot().metadata());
        assertTrue(Arrays.equals(bytes(expected.snapshot().data()), bytes(actual.snapshot().data())),
                "snapshot bytes differ");
    }

    /** A snapshot image's bytes, from memory or its file. */
    static byte[] bytes(io.rota.raft.core.SnapshotData data) {
        try (java.io.InputStream in = io.rota.raft.storage.SnapshotFile.open(data)) {
            return in.readAllBytes();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
