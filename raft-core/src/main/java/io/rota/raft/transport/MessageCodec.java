package io.rota.raft.transport;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import io.rota.proto.AppendEntries;
import io.rota.proto.AppendEntriesResponse;
import io.rota.proto.EntryType;
import io.rota.proto.Heartbeat;
import io.rota.proto.HeartbeatResponse;
import io.rota.proto.InstallSnapshot;
import io.rota.proto.RaftMessage;
import io.rota.proto.ReadIndexRequest;
import io.rota.proto.ReadIndexResponse;
import io.rota.proto.RequestVote;
import io.rota.proto.RequestVoteResponse;
import io.rota.proto.TimeoutNow;
import io.rota.raft.core.Configuration;
import io.rota.raft.core.Entry;
import io.rota.raft.core.Message;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;

/**
 * Converts between the core's {@link Message} records and the wire's {@link RaftMessage} envelope.
 * Lossless for every type: {@code fromProto(toProto(m))} equals {@code m} (entry and snapshot bytes compared
 * by content).
 *
 * <p>InstallSnapshot is the exception to one-message-one-frame: the core carries a whole snapshot, the wire
 * carries it in chunks ({@link #snapshotChunks}); {@link SnapshotAssembler} puts them back together.
 *
 * <p>Bytes are not copied on the way out: entry data and snapshot data are immutable once created (see
 * {@link Entry}), so they are wrapped, not copied. Decoding copies once, into the core's {@code byte[]}.
 */
public final class MessageCodec {

    /** Rough fixed cost of a message, for the per-peer queue's byte budget. */
    private static final int MESSAGE_OVERHEAD_BYTES = 64;

    private MessageCodec() {
    }

    /** Encodes every message type except InstallSnapshot, which travels as {@link #snapshotChunks}. */
    public static RaftMessage toProto(Message message) {
        RaftMessage.Builder envelope = RaftMessage.newBuilder();
        if (message instanceof Message.RequestVote m) {
            envelope.setRequestVote(RequestVote.newBuilder()
                    .setTerm(m.term()).setFrom(m.from()).setTo(m.to())
                    .setLastLogIndex(m.lastLogIndex()).setLastLogTerm(m.lastLogTerm())
                    .setPreVote(m.preVote()).setLeadershipTransfer(m.leadershipTransfer()));
        } else if (message instanceof Message.RequestVoteResponse m) {
            envelope.setRequestVoteResponse(RequestVoteResponse.newBuilder()
                    .setTerm(m.term()).setFrom(m.from()).setTo(m.to())
                    .setVoteGranted(m.voteGranted()).setPreVote(m.preVote()));
        } else if (message instanceof Message.AppendEntries m) {
            AppendEntries.Builder b = AppendEntries.newBuilder()
                    .setTerm(m.term()).setFrom(m.from()).setTo(m.to())
                    .setPrevLogIndex(m.prevLogIndex()).setPrevLogTerm(m.prevLogTerm())
                    .setLeaderCommit(m.leaderCommit());
            for (Entry e : m.entries()) {
                b.addEntries(toProto(e));
            }
            envelope.setAppendEntries(b);
        } else if (message instanceof Message.AppendEntriesResponse m) {
            envelope.setAppendEntriesResponse(AppendEntriesResponse.newBuilder()
                    .setTerm(m.term()).setFrom(m.from()).setTo(m.to())
                    .setSuccess(m.success()).setMatchIndex(m.matchIndex())
                    .setRejectedIndex(m.rejectedIndex()).setConflictIndex(m.conflictIndex())
                    .setConflictTerm(m.conflictTerm()));
        } else if (message instanceof Message.Heartbeat m) {
            envelope.setHeartbeat(Heartbeat.newBuilder()
                    .setTerm(m.term()).setFrom(m.from()).setTo(m.to())
                    .setCommitIndex(m.commitIndex()).setReadRound(m.readRound()));
        } else if (message instanceof Message.HeartbeatResponse m) {
            envelope.setHeartbeatResponse(HeartbeatResponse.newBuilder()
                    .setTerm(m.term()).setFrom(m.from()).setTo(m.to()).setReadRound(m.readRound())
                    .setLastLogIndex(m.lastLogIndex()));
        } else if (message instanceof Message.TimeoutNow m) {
            envelope.setTimeoutNow(TimeoutNow.newBuilder()
                    .setTerm(m.term()).setFrom(m.from()).setTo(m.to()));
        } else if (message instanceof Message.ReadIndexRequest m) {
            envelope.setReadIndexRequest(ReadIndexRequest.newBuilder()
                    .setTerm(m.term()).setFrom(m.from()).setTo(m.to()).addAllContexts(m.contexts()));
        } else if (message instanceof Message.ReadIndexResponse m) {
            envelope.setReadIndexResponse(ReadIndexResponse.newBuilder()
                    .setTerm(m.term()).setFrom(m.from()).setTo(m.to()).addAllContexts(m.contexts())
                    .setReadIndex(m.readIndex()));
        } else if (message instanceof Message.InstallSnapshot m) {
            throw new IllegalArgumentException("InstallSnapshot travels in chunks; use snapshotChunks: " + m);
        } else {
            throw new IllegalArgumentException("unknown message type " + message.getClass().getName());
        }
        return envelope.build();
    }

    /**
     * Decodes every payload except the handshake (handled before any message) and InstallSnapshot chunks
     * (see {@link SnapshotAssembler}).
     *
     * @throws IllegalArgumentException if the frame does not describe a valid core message
     */
    public static Message fromProto(RaftMessage frame) {
        return switch (frame.getPayloadCase()) {
            case REQUEST_VOTE -> {
                RequestVote m = frame.getRequestVote();
                yield new Message.RequestVote(m.getTerm(), m.getFrom(), m.getTo(), m.getLastLogIndex(),
                        m.getLastLogTerm(), m.getPreVote(), m.getLeadershipTransfer());
            }
            case REQUEST_VOTE_RESPONSE -> {
                RequestVoteResponse m = frame.getRequestVoteResponse();
                yield new Message.RequestVoteResponse(m.getTerm(), m.getFrom(), m.getTo(), m.getVoteGranted(),
                        m.getPreVote());
            }
            case APPEND_ENTRIES -> {
                AppendEntries m = frame.getAppendEntries();
                List<Entry> entries = new ArrayList<>(m.getEntriesCount());
                for (io.rota.proto.Entry e : m.getEntriesList()) {
                    entries.add(fromProto(e));
                }
                yield new Message.AppendEntries(m.getTerm(), m.getFrom(), m.getTo(), m.getPrevLogIndex(),
                        m.getPrevLogTerm(), entries, m.getLeaderCommit());
            }
            case APPEND_ENTRIES_RESPONSE -> {
                AppendEntriesResponse m = frame.getAppendEntriesResponse();
                yield new Message.AppendEntriesResponse(m.getTerm(), m.getFrom(), m.getTo(), m.getSuccess(),
                        m.getMatchIndex(), m.getRejectedIndex(), m.getConflictIndex(), m.getConflictTerm());
            }
            case HEARTBEAT -> {
                Heartbeat m = frame.getHeartbeat();
                yield new Message.Heartbeat(m.getTerm(), m.getFrom(), m.getTo(), m.getCommitIndex(),
                        m.getReadRound());
            }
            case HEARTBEAT_RESPONSE -> {
                HeartbeatResponse m = frame.getHeartbeatResponse();
                yield new Message.HeartbeatResponse(m.getTerm(), m.getFrom(), m.getTo(), m.getReadRound(),
                        m.getLastLogIndex());
            }
            case TIMEOUT_NOW -> {
                TimeoutNow m = frame.getTimeoutNow();
                yield new Message.TimeoutNow(m.getTerm(), m.getFrom(), m.getTo());
            }
            case READ_INDEX_REQUEST -> {
                ReadIndexRequest m = frame.getReadIndexRequest();
                yield new Message.ReadIndexRequest(m.getTerm(), m.getFrom(), m.getTo(), m.getContextsList());
            }
            case READ_INDEX_RESPONSE -> {
                ReadIndexResponse m = frame.getReadIndexResponse();
                yield new Message.ReadIndexResponse(m.getTerm(), m.getFrom(), m.getTo(), m.getContextsList(),
                        m.getReadIndex());
            }
            case INSTALL_SNAPSHOT -> throw new IllegalArgumentException(
                    "an InstallSnapshot chunk must go through the SnapshotAssembler");
            case HANDSHAKE -> throw new IllegalArgumentException("a second handshake on an established connection");
            case PAYLOAD_NOT_SET -> throw new IllegalArgumentException("a frame without a payload");
        };
    }

    /**
     * Splits a snapshot into frames of at most {@code chunkBytes} data each, lazily (so a large snapshot
     * is not turned into frames all at once). Every chunk carries the metadata; the last has {@code done}.
     * An empty snapshot is one chunk.
     */
    public static Iterator<RaftMessage> snapshotChunks(Message.InstallSnapshot message, int chunkBytes) {
        if (chunkBytes <= 0) {
            throw new IllegalArgumentException("chunkBytes must be positive, got " + chunkBytes);
        }
        io.rota.proto.SnapshotMetadata metadata = toProto(message.snapshot().metadata());
        byte[] data = message.snapshot().data();
        return new Iterator<>() {
            private int offset;
            private boolean finished;

            @Override
            public boolean hasNext() {
                return !finished;
            }

            @Override
            public RaftMessage next() {
                if (finished) {
                    throw new NoSuchElementException();
                }
                int length = Math.min(chunkBytes, data.length - offset);
                boolean done = offset + length == data.length;
                InstallSnapshot chunk = InstallSnapshot.newBuilder()
                        .setTerm(message.term()).setFrom(message.from()).setTo(message.to())
                        .setMetadata(metadata)
                        .setOffset(offset)
                        .setData(UnsafeByteOperations.unsafeWrap(data, offset, length))
                        .setDone(done)
                        .build();
                offset += length;
                finished = done;
                return RaftMessage.newBuilder().setInstallSnapshot(chunk).build();
            }
        };
    }

    /** Bytes a message is charged in the per-peer queue's byte budget (an estimate, not its frame size). */
    public static long estimatedBytes(Message message) {
        if (message instanceof Message.AppendEntries m) {
            return MESSAGE_OVERHEAD_BYTES + m.entries().stream().mapToLong(Entry::sizeBytes).sum();
        }
        if (message instanceof Message.InstallSnapshot m) {
            return MESSAGE_OVERHEAD_BYTES + m.snapshot().data().length;
        }
        return MESSAGE_OVERHEAD_BYTES;
    }

    static io.rota.proto.Entry toProto(Entry entry) {
        return io.rota.proto.Entry.newBuilder()
                .setIndex(entry.index())
                .setTerm(entry.term())
                .setType(switch (entry.type()) {
                    case COMMAND -> EntryType.COMMAND;
                    case NO_OP -> EntryType.NO_OP;
                    case CONFIGURATION -> EntryType.CONFIGURATION;
                })
                .setData(wrap(entry.data()))
                .build();
    }

    static Entry fromProto(io.rota.proto.Entry entry) {
        Entry.Type type = switch (entry.getType()) {
            case COMMAND -> Entry.Type.COMMAND;
            case NO_OP -> Entry.Type.NO_OP;
            case CONFIGURATION -> Entry.Type.CONFIGURATION;
            case UNRECOGNIZED -> throw new IllegalArgumentException("unknown entry type " + entry.getTypeValue());
        };
        return new Entry(entry.getIndex(), entry.getTerm(), type, entry.getData().toByteArray());
    }

    static io.rota.proto.SnapshotMetadata toProto(io.rota.raft.core.SnapshotMetadata metadata) {
        return io.rota.proto.SnapshotMetadata.newBuilder()
                .setLastIncludedIndex(metadata.lastIncludedIndex())
                .setLastIncludedTerm(metadata.lastIncludedTerm())
                .addAllVoters(metadata.configuration().voters())
                .addAllLearners(metadata.configuration().learners())
                .build();
    }

    static io.rota.raft.core.SnapshotMetadata fromProto(io.rota.proto.SnapshotMetadata metadata) {
        return new io.rota.raft.core.SnapshotMetadata(metadata.getLastIncludedIndex(),
                metadata.getLastIncludedTerm(), new Configuration(new HashSet<>(metadata.getVotersList()),
                new HashSet<>(metadata.getLearnersList()))); // absent learners (an older sender): none
    }

    /** Entry data is never modified after construction, so wrapping it is safe. */
    private static ByteString wrap(byte[] data) {
        return data.length == 0 ? ByteString.EMPTY : UnsafeByteOperations.unsafeWrap(data);
    }
}
