package io.rota.server.fuzz;

import com.google.protobuf.ByteString;
import io.rota.proto.AppendEntries;
import io.rota.proto.AppendEntriesResponse;
import io.rota.proto.Entry;
import io.rota.proto.Heartbeat;
import io.rota.proto.InstallSnapshot;
import io.rota.proto.PeerHandshake;
import io.rota.proto.RaftMessage;
import io.rota.proto.ReadIndexRequest;
import io.rota.proto.RequestVote;
import io.rota.proto.RequestVoteResponse;
import io.rota.proto.SnapshotMetadata;
import io.rota.proto.TimeoutNow;

import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.Random;

/**
 * Fuzzes one peer-port connection at a time. Peer frames are a 4-byte length and a {@code RaftMessage}; the
 * first must be a handshake naming the cluster, the protocol version and the dialling node (a member with a
 * lower id than the one dialled).
 *
 * <p>What is fuzzed is what a sender that is not a member can do: garbage, bad lengths, handshakes that
 * must be refused, Raft messages before a handshake. Some {@link Case}s claim a member's identity in the
 * handshake (there is no authentication; the peer port belongs on a trusted network) in order to reach the
 * code behind it: they then send only messages that must be dropped — from a non-member, addressed to
 * another node, malformed — or messages with a stale term (0) and absurd indexes, which Raft ignores. A
 * forged message with a fresh term from a claimed member would legitimately disrupt the cluster; it is not
 * sent. Every case must end with the server closing the connection, or (stale messages) with it staying up.
 */
public final class PeerPortFuzzer {

    /** One kind of peer-port connection. */
    public enum Case {
        RANDOM_BYTES(false, false), NEGATIVE_LENGTH(false, true), HUGE_LENGTH(false, true),
        JUST_OVER_MAX(false, true), TRUNCATED_HANDSHAKE(false, false), WRONG_CLUSTER(false, true),
        WRONG_VERSION(false, true), UNKNOWN_NODE(false, true), OWN_ID(false, true), HIGHER_ID(false, true),
        MESSAGE_BEFORE_HANDSHAKE(false, true),
        /** Claims a member, then sends a message whose sender is not that member (a non-member id). */
        NON_MEMBER_SENDER(true, true),
        /** Claims a member, then sends a message addressed to another node. */
        MISADDRESSED(true, true),
        /** Claims a member, then sends garbage frames. */
        GARBAGE_AFTER_HANDSHAKE(true, true),
        /** Claims a member, then sends term-0 messages with absurd indexes; the server keeps the connection. */
        STALE_TERM_ABSURD_INDEXES(true, false),
        /**
         * A handshake with every field drawn from boundary values — cluster id (empty, another, unicode, huge, the
         * right one), node id (0, the receiver's own, a real member, one above the members: unknown, added or
         * removed, huge), protocol version (0, 1, 2, the largest), fresh, refusal text (none, short, huge,
         * unicode) — then a half-close. A combination that would pass as a real member (the right cluster and
         * version, a lower member's id) is sent only when {@link #claims} allows, else its id is made unknown.
         */
        HANDSHAKE_FIELDS(false, false);

        private final boolean claimsMember;
        private final boolean serverMustClose;

        Case(boolean claimsMember, boolean serverMustClose) {
            this.claimsMember = claimsMember;
            this.serverMustClose = serverMustClose;
        }

        /** Whether the case passes the handshake by claiming a member's id. */
        public boolean claimsMember() {
            return claimsMember;
        }

        /** Whether the member must close the connection (a refused handshake or a refused frame). */
        public boolean serverMustClose() {
            return serverMustClose;
        }
    }

    /** Must match HandshakeHandler.PROTOCOL_VERSION. */
    private static final int PROTOCOL_VERSION = 1;
    /** TransportConfig.DEFAULT_MAX_FRAME_BYTES: the server's peer frame limit. */
    private static final int MAX_FRAME_BYTES = 8 << 20;
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);
    private static final long[] ABSURD = {0, 1, -1, Long.MAX_VALUE, Long.MIN_VALUE, 1L << 40, Integer.MAX_VALUE};

    private final Random random;
    private final Tally tally;
    private final String clusterId;
    private final int members;
    private final Duration deadline;
    /** Whether a HANDSHAKE_FIELDS connection may pass as a member now (each one displaces the real one). */
    private java.util.function.BooleanSupplier claims = () -> false;
    /** Speaks TLS (the members' mutual TLS) when set. */
    private javax.net.ssl.SSLSocketFactory tls;

    /**
     * @param random    the seeded source of every choice
     * @param tally     where counts ({@code peer.*}) and problems go
     * @param clusterId the cluster's --cluster-id
     * @param members   the cluster size (member ids are 1..members)
     * @param deadline  how long the server may take to close a connection it must close
     */
    public PeerPortFuzzer(Random random, Tally tally, String clusterId, int members, Duration deadline) {
        this.random = random;
        this.tally = tally;
        this.clusterId = clusterId;
        this.members = members;
        this.deadline = deadline;
    }

    /**
     * Lets HANDSHAKE_FIELDS pass as a member when {@code claims} says so (a rate limit shared by the workers).
     *
     * @return this fuzzer
     */
    public PeerPortFuzzer claims(java.util.function.BooleanSupplier claims) {
        this.claims = claims;
        return this;
    }

    /**
     * Fuzz a peer port with mutual TLS: every connection shakes hands with {@code factory} first (a member's
     * certificate, say, so the handshake's id is checked against the certificate's name).
     *
     * @return this fuzzer
     */
    public PeerPortFuzzer overTls(javax.net.ssl.SSLSocketFactory factory) {
        this.tls = factory;
        return this;
    }

    /**
     * One connection to node {@code targetId}'s peer port. A case that claims a member needs a member with a
     * lower id than the target: for node 1 it falls back to {@link Case#UNKNOWN_NODE}.
     *
     * @return the number of frames sent
     */
    public long session(InetSocketAddress address, long targetId, Case requested) {
        Case c = requested.claimsMember() && targetId == 1 ? Case.UNKNOWN_NODE : requested;
        tally.add("peer.connections/" + c);
        try (Socket plain = new Socket()) {
            plain.connect(address, (int) CONNECT_TIMEOUT.toMillis());
            Socket socket = tls == null ? plain
                    : tls.createSocket(plain, address.getHostString(), address.getPort(), true);
            socket.setTcpNoDelay(true);
            socket.setSoTimeout((int) deadline.toMillis());
            DataOutputStream out = new DataOutputStream(socket.getOutputStream());
            long claimed = 1 + random.nextInt((int) Math.max(1, targetId - 1));
            long sent = send(out, c, targetId, claimed);
            tally.add("peer.frames/" + c, sent);
            if (!c.serverMustClose) {
                socket.shutdownOutput();
            }
            drain(socket.getInputStream(), System.nanoTime() + deadline.toNanos());
            tally.add("peer.closed/" + c);
            return sent;
        } catch (SocketTimeoutException e) {
            tally.problem("peer port " + address + " did not close a " + c + " connection within "
                    + deadline.toMillis() + " ms");
            return 0;
        } catch (IOException e) {
            // A reset when writing after the server refused us is the server's right.
            tally.add("peer.io-errors/" + e.getClass().getSimpleName());
            return 0;
        }
    }

    private long send(DataOutputStream out, Case c, long target, long claimed) throws IOException {
        long frames = 1;
        switch (c) {
            case RANDOM_BYTES -> out.write(bytes(1 + random.nextInt(64)));
            case NEGATIVE_LENGTH -> {
                out.writeInt(random.nextBoolean() ? -1 : Integer.MIN_VALUE + random.nextInt(1 << 30));
                out.write(bytes(random.nextInt(32)));
            }
            case HUGE_LENGTH -> {
                out.writeInt(Integer.MAX_VALUE - random.nextInt(1 << 20));
                out.write(bytes(random.nextInt(32)));
            }
            case JUST_OVER_MAX -> {
                out.writeInt(MAX_FRAME_BYTES + 1);
                out.write(bytes(random.nextInt(32)));
            }
            case TRUNCATED_HANDSHAKE -> {
                byte[] h = handshake(clusterId, claimed, PROTOCOL_VERSION).toByteArray();
                out.writeInt(h.length + 1 + random.nextInt(100));
                out.write(h);
            }
            case WRONG_CLUSTER -> frame(out, handshake(random.nextBoolean() ? "" : clusterId + "-other", claimed,
                    PROTOCOL_VERSION));
            case WRONG_VERSION -> frame(out, handshake(clusterId, claimed, random.nextBoolean() ? 0 : 2 + random.nextInt(100)));
            case UNKNOWN_NODE -> frame(out, handshake(clusterId, random.nextBoolean() ? 0 : members + 1
                    + random.nextInt(1000), PROTOCOL_VERSION));
            case OWN_ID -> frame(out, handshake(clusterId, target, PROTOCOL_VERSION));
            case HIGHER_ID -> frame(out, handshake(clusterId, target + 1 + random.nextInt(3), PROTOCOL_VERSION));
            case MESSAGE_BEFORE_HANDSHAKE -> frame(out, freshMessage(claimed, target, ABSURD[random.nextInt(ABSURD.length)]));
            case NON_MEMBER_SENDER -> {
                frame(out, handshake(clusterId, claimed, PROTOCOL_VERSION));
                long stranger = random.nextBoolean() ? 0 : members + 1 + random.nextInt(1000);
                frame(out, freshMessage(stranger, target, hugeTerm()));
                frames++;
            }
            case MISADDRESSED -> {
                frame(out, handshake(clusterId, claimed, PROTOCOL_VERSION));
                long other = random.nextBoolean() ? claimed : members + 1 + random.nextInt(1000);
                frame(out, freshMessage(claimed, other, hugeTerm()));
                frames++;
            }
            case GARBAGE_AFTER_HANDSHAKE -> {
                frame(out, handshake(clusterId, claimed, PROTOCOL_VERSION));
                byte[] garbage = random.nextBoolean() ? staleIfParsed(() -> bytes(1 + random.nextInt(200)))
                        : staleIfParsed(() -> flip(freshMessage(claimed, target, 0).toByteArray()));
                out.writeInt(garbage.length);
                out.write(garbage);
                // Garbage that happens to parse as a valid stale message leaves the connection open: end it.
                frame(out, RaftMessage.newBuilder().setHandshake(PeerHandshake.getDefaultInstance()).build());
                frames += 2;
            }
            case HANDSHAKE_FIELDS -> frame(out, handshakeFields(target));
            case STALE_TERM_ABSURD_INDEXES -> {
                frame(out, handshake(clusterId, claimed, PROTOCOL_VERSION));
                int n = 1 + random.nextInt(50);
                for (int i = 0; i < n; i++) {
                    frame(out, staleMessage(claimed, target));
                }
                frames += n;
            }
        }
        out.flush();
        return frames;
    }

    /** A message a leader or candidate of a new term would send; only ever sent where it must be dropped. */
    private RaftMessage freshMessage(long from, long to, long term) {
        return switch (random.nextInt(4)) {
            case 0 -> RaftMessage.newBuilder().setRequestVote(RequestVote.newBuilder().setTerm(term).setFrom(from)
                    .setTo(to).setLastLogIndex(absurd()).setLastLogTerm(absurd()).setPreVote(random.nextBoolean())
                    .setLeadershipTransfer(random.nextBoolean())).build();
            case 1 -> RaftMessage.newBuilder().setAppendEntries(AppendEntries.newBuilder().setTerm(term).setFrom(from)
                    .setTo(to).setPrevLogIndex(absurd()).setPrevLogTerm(absurd()).setLeaderCommit(absurd())
                    .addEntries(Entry.newBuilder().setIndex(absurd()).setTerm(term).setData(ByteString.copyFrom(bytes(16))))).build();
            case 2 -> RaftMessage.newBuilder().setHeartbeat(Heartbeat.newBuilder().setTerm(term).setFrom(from).setTo(to)
                    .setCommitIndex(absurd()).setReadRound(absurd())).build();
            default -> RaftMessage.newBuilder().setTimeoutNow(TimeoutNow.newBuilder().setTerm(term).setFrom(from)
                    .setTo(to)).build();
        };
    }

    /** A term-0 message (older than any current term) with absurd indexes: Raft answers or ignores it. */
    private RaftMessage staleMessage(long from, long to) {
        return switch (random.nextInt(8)) {
            case 0 -> RaftMessage.newBuilder().setRequestVote(RequestVote.newBuilder().setFrom(from).setTo(to)
                    .setLastLogIndex(absurd()).setLastLogTerm(absurd()).setPreVote(random.nextBoolean())).build();
            case 1 -> {
                AppendEntries.Builder a = AppendEntries.newBuilder().setFrom(from).setTo(to).setPrevLogIndex(absurd())
                        .setPrevLogTerm(absurd()).setLeaderCommit(absurd());
                long index = absurd();
                for (int i = random.nextInt(5); i > 0; i--) {
                    a.addEntries(Entry.newBuilder().setIndex(index++).setTerm(absurd()).setTypeValue(random.nextInt(4))
                            .setData(ByteString.copyFrom(bytes(random.nextInt(64)))));
                }
                yield RaftMessage.newBuilder().setAppendEntries(a).build();
            }
            case 2 -> RaftMessage.newBuilder().setHeartbeat(Heartbeat.newBuilder().setFrom(from).setTo(to)
                    .setCommitIndex(absurd()).setReadRound(absurd())).build();
            case 3 -> RaftMessage.newBuilder().setAppendEntriesResponse(AppendEntriesResponse.newBuilder().setFrom(from)
                    .setTo(to).setSuccess(random.nextBoolean()).setMatchIndex(absurd()).setRejectedIndex(absurd())
                    .setConflictIndex(absurd()).setConflictTerm(absurd())).build();
            case 4 -> RaftMessage.newBuilder().setRequestVoteResponse(RequestVoteResponse.newBuilder().setFrom(from)
                    .setTo(to).setVoteGranted(random.nextBoolean()).setPreVote(random.nextBoolean())).build();
            case 5 -> RaftMessage.newBuilder().setReadIndexRequest(ReadIndexRequest.newBuilder().setFrom(from).setTo(to)
                    .addContexts(absurd())).build();
            case 6 -> RaftMessage.newBuilder().setInstallSnapshot(InstallSnapshot.newBuilder().setFrom(from).setTo(to)
                    .setMetadata(SnapshotMetadata.newBuilder().setLastIncludedIndex(absurd())
                            .setLastIncludedTerm(absurd()).addVoters(absurd()))
                    .setOffset(random.nextBoolean() ? 0 : absurd()).setData(ByteString.copyFrom(bytes(random.nextInt(128))))
                    .setDone(random.nextBoolean())).build();
            default -> RaftMessage.newBuilder().setTimeoutNow(TimeoutNow.newBuilder().setFrom(from).setTo(to)).build();
        };
    }

    /** A handshake of boundary values; one that would pass as a member only when {@link #claims} allows. */
    private RaftMessage handshakeFields(long target) {
        String[] clusters = {clusterId, clusterId, "", clusterId + " ", clusterId.toUpperCase(java.util.Locale.ROOT),
                "\u00e9t\u00e9", "x".repeat(10_000), clusterId + "\u0000"};
        String cluster = clusters[random.nextInt(clusters.length)];
        long[] ids = {0, target, 1 + random.nextInt(members), members + 1 + random.nextInt(20), Long.MAX_VALUE, -1,
                1L << 32};
        long id = ids[random.nextInt(ids.length)];
        int[] versions = {PROTOCOL_VERSION, PROTOCOL_VERSION, 0, 2, Integer.MAX_VALUE, -1};
        int version = versions[random.nextInt(versions.length)];
        String[] refusals = {"", "", "refused", "x".repeat(100_000), "\u00e9\n\u0000", "NOT_A_MEMBER"};
        boolean passes = cluster.equals(clusterId) && version == PROTOCOL_VERSION && id >= 1 && id < target;
        if (passes && !claims.getAsBoolean()) {
            id = members + 1 + random.nextInt(1_000);
        }
        tally.add("peer.handshake-fields/" + (passes && id < target ? "claims-a-member" : "refused"));
        return RaftMessage.newBuilder().setHandshake(PeerHandshake.newBuilder().setClusterId(cluster).setNodeId(id)
                .setProtocolVersion(version).setFresh(random.nextBoolean())
                .setRefusal(refusals[random.nextInt(refusals.length)])).build();
    }

    private static RaftMessage handshake(String cluster, long nodeId, int version) {
        return RaftMessage.newBuilder().setHandshake(PeerHandshake.newBuilder().setClusterId(cluster).setNodeId(nodeId)
                .setProtocolVersion(version)).build();
    }

    private static void frame(DataOutputStream out, RaftMessage m) throws IOException {
        byte[] b = m.toByteArray();
        out.writeInt(b.length);
        out.write(b);
    }

    /**
     * Garbage from {@code draw} that, if it happens to parse, carries no term: a flip can turn another field's
     * tag into the term's (a term-0 message with {@code from = 2} becoming one of term 2), and a message of
     * the current term under a claimed member's name would be obeyed, which the fuzz promises never to send.
     */
    static byte[] staleIfParsed(java.util.function.Supplier<byte[]> draw) {
        for (int attempt = 0; attempt < 1_000; attempt++) {
            byte[] b = draw.get();
            try {
                if (termOf(RaftMessage.parseFrom(b)) == 0) {
                    return b;
                }
            } catch (com.google.protobuf.InvalidProtocolBufferException e) {
                return b;
            }
        }
        throw new IllegalStateException("no stale or unparseable garbage in 1,000 draws");
    }

    /** The term of whichever message {@code m} holds (every Raft message has a field named term), or 0. */
    static long termOf(RaftMessage m) {
        for (Object body : m.getAllFields().values()) {
            if (body instanceof com.google.protobuf.Message message) {
                com.google.protobuf.Descriptors.FieldDescriptor term =
                        message.getDescriptorForType().findFieldByName("term");
                if (term != null && (Long) message.getField(term) != 0) {
                    return (Long) message.getField(term);
                }
            }
        }
        return 0;
    }

    private byte[] flip(byte[] b) {
        for (int i = 1 + random.nextInt(4); i > 0 && b.length > 0; i--) {
            b[random.nextInt(b.length)] ^= (byte) (1 << random.nextInt(8));
        }
        return b;
    }

    private long hugeTerm() {
        return random.nextBoolean() ? Long.MAX_VALUE : (1L << 40) + random.nextInt(1 << 30);
    }

    private long absurd() {
        return random.nextBoolean() ? ABSURD[random.nextInt(ABSURD.length)] : random.nextLong();
    }

    private byte[] bytes(int n) {
        byte[] b = new byte[n];
        random.nextBytes(b);
        return b;
    }

    /**
     * Reads and drops what the server sends (its handshake, Raft traffic to a claimed member) until it
     * closes the connection; heartbeats keep the socket busy, so the deadline bounds the whole wait.
     */
    private static void drain(InputStream in, long end) throws IOException {
        byte[] sink = new byte[8192];
        while (in.read(sink) >= 0) {
            if (System.nanoTime() - end > 0) {
                throw new SocketTimeoutException("still open");
            }
        }
    }
}
