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
import java.util.List;

/**
 * Converts between the core's {@link Message} records and the wire's {@link RaftMessage} envelope.
 * Lossless for every type: {@code fromProto(toProto(m))} equals {@code m} (entry and snapshot bytes compared
 * by content). Both directions are exhaustive at compile time: encoding is a {@link Message.Visitor},
 * decoding a switch without default over the envelope's payload case. A frame that makes no valid message
 * is an {@link InvalidFrameException}, never silently dropped.
 *
 * <p>InstallSnapshot is the exception to one-message-one-frame: the core carries a whole snapshot, the wire
 * carries it in chunks ({@link #snapshotChunks}); {@link SnapshotAssembler} puts them back together.
 *
 * <p>Bytes are not copied on the way out: entry data and snapshot data are immutable once created (see
 * {@link Entry}), so they are wrapped, not copied. Decoding copies once, into the core's {@code byte[]}.
 */
public final class MessageCodec {

    /** Rough fixed cost of a message, for the per-peer queue's byte budget. */
    private static final long MESSAGE_OVERHEAD_BYTES = 64;

    private MessageCodec() {
    }

    /** Encodes every message type except InstallSnapshot, which travels as {@link #snapshotChunks}. */
    public static RaftMessage toProto(Message message) {
        return message.accept(ENCODER);
    }

    /** One encoder per message type (a {@link Message.Visitor}: a new type does not compile until it has one). */
    private static final Message.Visitor<RaftMessage> ENCODER = new Encoder();

    private static final class Encoder implements Message.Visitor<RaftMessage> {

        @Override
        public RaftMessage visit(Message.RequestVote m) {
            return RaftMessage.newBuilder().setRequestVote(RequestVote.newBuilder()
                    .setTerm(m.term()).setFrom(m.from()).setTo(m.to())
                    .setLastLogIndex(m.lastLogIndex()).setLastLogTerm(m.lastLogTerm())
                    .setPreVote(m.preVote()).setLeadershipTransfer(m.leadershipTransfer())).build();
        }

        @Override
        public RaftMessage visit(Message.RequestVoteResponse m) {
            return RaftMessage.newBuilder().setRequestVoteResponse(RequestVoteResponse.newBuilder()
                    .setTerm(m.term()).setFrom(m.from()).setTo(m.to())
                    .setVoteGranted(m.voteGranted()).setPreVote(m.preVote())).build();
        }

        @Override
        public RaftMessage visit(Message.AppendEntries m) {
            AppendEntries.Builder b = AppendEntries.newBuilder()
                    .setTerm(m.term()).setFrom(m.from()).setTo(m.to())
                    .setPrevLogIndex(m.prevLogIndex()).setPrevLogTerm(m.prevLogTerm())
                    .setLeaderCommit(m.leaderCommit()).setCommitNotice(m.commitNotice());
            for (Entry e : m.entries()) {
                b.addEntries(toProto(e));
            }
            return RaftMessage.newBuilder().setAppendEntries(b).build();
        }

        @Override
        public RaftMessage visit(Message.AppendEntriesResponse m) {
            return RaftMessage.newBuilder().setAppendEntriesResponse(AppendEntriesResponse.newBuilder()
                    .setTerm(m.term()).setFrom(m.from()).setTo(m.to())
                    .setSuccess(m.success()).setMatchIndex(m.matchIndex())
                    .setRejectedIndex(m.rejectedIndex()).setConflictIndex(m.conflictIndex())
                    .setConflictTerm(m.conflictTerm())).build();
        }

        @Override
        public RaftMessage visit(Message.Heartbeat m) {
            return RaftMessage.newBuilder().setHeartbeat(Heartbeat.newBuilder()
                    .setTerm(m.term()).setFrom(m.from()).setTo(m.to())
                    .setCommitIndex(m.commitIndex()).setReadRound(m.readRound())).build();
        }

        @Override
        public RaftMessage visit(Message.HeartbeatResponse m) {
            return RaftMessage.newBuilder().setHeartbeatResponse(HeartbeatResponse.newBuilder()
                    .setTerm(m.term()).setFrom(m.from()).setTo(m.to()).setReadRound(m.readRound())
                    .setLastLogIndex(m.lastLogIndex())).build();
        }

        @Override
        public RaftMessage visit(Message.InstallSnapshot m) {
            throw new IllegalArgumentException("InstallSnapshot travels in chunks; use snapshotChunks: " + m);
        }

        @Override
        public RaftMessage visit(Message.TimeoutNow m) {
            return RaftMessage.newBuilder().setTimeoutNow(TimeoutNow.newBuilder()
                    .setTerm(m.term()).setFrom(m.from()).setTo(m.to())).build();
        }

        @Override
        public RaftMessage visit(Message.ReadIndexRequest m) {
            return RaftMessage.newBuilder().setReadIndexRequest(ReadIndexRequest.newBuilder()
                    .setTerm(m.term()).setFrom(m.from()).setTo(m.to()).addAllContexts(m.contexts())).build();
        }

        @Override
        public RaftMessage visit(Message.ReadIndexResponse m) {
            return RaftMessage.newBuilder().setReadIndexResponse(ReadIndexResponse.newBuilder()
                    .setTerm(m.term()).setFrom(m.from()).setTo(m.to()).addAllContexts(m.contexts())
                    .setReadIndex(m.readIndex())).build();
        }
    }

    /**
     * Decodes every payload except the handshake (handled before any message) and InstallSnapshot chunks
     * (see {@link SnapshotAssembler}). The switch over the payload case has no default, so a new case in
     * raft.proto does not compile until it is decoded here.
     *
     * @throws InvalidFrameException if the frame does not describe a valid core message:
     *                               {@link InvalidFrameException.Reason#UNKNOWN_TYPE} for a message or entry
     *                               type this version does not know (a newer peer), else
     *                               {@link InvalidFrameException.Reason#MALFORMED}
     */
    public static Message fromProto(RaftMessage frame) {
        try {
            return decode(frame);
        } catch (InvalidFrameException e) {
            throw e;
        } catch (IllegalArgumentException e) {
            // A record's own checks (e.g. AppendEntries' entries must follow prevLogIndex in order).
            throw InvalidFrameException.malformed("invalid " + frame.getPayloadCase() + ": " + e.getMessage(), e);
        }
    }

    private static Message decode(RaftMessage frame) {
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
                        m.getPrevLogTerm(), entries, m.getLeaderCommit(), m.getCommitNotice());
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
            case INSTALL_SNAPSHOT -> throw InvalidFrameException.malformed(
                    "an InstallSnapshot chunk must go through the SnapshotAssembler", null);
            case HANDSHAKE -> throw InvalidFrameException.malformed(
                    "a second handshake on an established connection", null);
            case PAYLOAD_NOT_SET -> {
                // protobuf keeps a oneof case it does not know as an unknown field: a newer peer's message.
                if (!frame.getUnknownFields().asMap().isEmpty()) {
                    throw InvalidFrameException.unknownType("a message type this version does not know (field "
                            + frame.getUnknownFields().asMap().keySet() + "); is the peer running a newer version?");
                }
                throw InvalidFrameException.malformed("a frame without a payload", null);
            }
        };
    }

    /**
     * The frames of a snapshot, at most {@code chunkBytes} data each, read lazily from the snapshot's file (so
     * a large snapshot is never in memory). Every chunk carries the metadata; the last has {@code done}. An
     * empty snapshot is one chunk. The caller closes it if it stops before the last chunk.
     */
    static SnapshotChunks snapshotChunks(Message.InstallSnapshot message, int chunkBytes) {
        return new SnapshotChunks(message, chunkBytes);
    }

    /** Bytes a message is charged in the per-peer queue's byte budget (an estimate, not its frame size). */
    public static long estimatedBytes(Message message) {
        return message.accept(ESTIMATED_BYTES);
    }

    /** A fixed cost per message, plus the payload of the two types that carry entries or snapshot data. */
    private static final Message.Visitor<Long> ESTIMATED_BYTES = new EstimatedBytes();

    private static final class EstimatedBytes implements Message.Visitor<Long> {

        @Override
        public Long visit(Message.AppendEntries m) {
            long bytes = MESSAGE_OVERHEAD_BYTES;
            for (Entry e : m.entries()) {
                bytes += e.sizeBytes();
            }
            return bytes;
        }

        @Override
        public Long visit(Message.InstallSnapshot m) {
            // The queue holds a reference to the image (a file, or bytes the core holds anyway), not a copy.
            return MESSAGE_OVERHEAD_BYTES;
        }

        @Override
        public Long visit(Message.RequestVote m) {
            return MESSAGE_OVERHEAD_BYTES;
        }

        @Override
        public Long visit(Message.RequestVoteResponse m) {
            return MESSAGE_OVERHEAD_BYTES;
        }

        @Override
        public Long visit(Message.AppendEntriesResponse m) {
            return MESSAGE_OVERHEAD_BYTES;
        }

        @Override
        public Long visit(Message.Heartbeat m) {
            return MESSAGE_OVERHEAD_BYTES;
        }

        @Override
        public Long visit(Message.HeartbeatResponse m) {
            return MESSAGE_OVERHEAD_BYTES;
        }

        @Override
        public Long visit(Message.TimeoutNow m) {
            return MESSAGE_OVERHEAD_BYTES;
        }

        @Override
        public Long visit(Message.ReadIndexRequest m) {
            return MESSAGE_OVERHEAD_BYTES;
        }

        @Override
        public Long visit(Message.ReadIndexResponse m) {
            return MESSAGE_OVERHEAD_BYTES;
        }
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
            case UNRECOGNIZED -> throw InvalidFrameException.unknownType("an entry type this version does not know ("
                    + entry.getTypeValue() + "); is the peer running a newer version?");
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
