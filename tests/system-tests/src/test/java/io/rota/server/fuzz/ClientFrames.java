package io.rota.server.fuzz;

import com.google.protobuf.ByteString;
import io.rota.proto.AuthDisableRequest;
import io.rota.proto.AuthEnableRequest;
import io.rota.proto.AuthRequest;
import io.rota.proto.AuthRoleAddRequest;
import io.rota.proto.AuthRoleGetRequest;
import io.rota.proto.AuthRoleGrantPermissionRequest;
import io.rota.proto.AuthRoleListRequest;
import io.rota.proto.AuthStatusRequest;
import io.rota.proto.AuthUserAddRequest;
import io.rota.proto.AuthUserGetRequest;
import io.rota.proto.AuthUserGrantRoleRequest;
import io.rota.proto.AuthUserListRequest;
import io.rota.proto.AuthenticateRequest;
import io.rota.proto.Compare;
import io.rota.proto.DeleteRangeRequest;
import io.rota.proto.Error;
import io.rota.proto.Frame;
import io.rota.proto.LeaseGrantRequest;
import io.rota.proto.LeaseKeepAliveRequest;
import io.rota.proto.LeaseLeasesRequest;
import io.rota.proto.LeaseRevokeRequest;
import io.rota.proto.LeaseTimeToLiveRequest;
import io.rota.proto.Member;
import io.rota.proto.Permission;
import io.rota.proto.PublishMemberRequest;
import io.rota.proto.PutRequest;
import io.rota.proto.PutResponse;
import io.rota.proto.RangeRequest;
import io.rota.proto.RangeResponse;
import io.rota.proto.RegisterSessionRequest;
import io.rota.proto.RequestOp;
import io.rota.proto.SessionKeepAliveRequest;
import io.rota.proto.SessionRef;
import io.rota.proto.StatusRequest;
import io.rota.proto.TxnRequest;
import io.rota.proto.WatchCancelRequest;
import io.rota.proto.WatchCreateRequest;
import io.rota.proto.WatchProgressRequest;
import io.rota.proto.WatchRequest;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Random;

/**
 * Seeded generators of client-port input: well-formed {@link Frame}s whose fields hold absurd values, and
 * the malformed tails a connection may end with. Everything a fuzzed write can touch is at or above
 * {@link #FUZZ_PREFIX} (a write with an empty key has no range end): a test keeps the data it checks for
 * loss below that prefix (e.g. under {@code "acked/"}).
 *
 * <p>The key space of fuzzed writes is bounded ({@value #KEY_SPACE} suffixes, values of at most
 * {@value #MAX_VALUE_BYTES} bytes, rare exceptions of one oversized key or value), so a run of a million
 * frames does not fill the server's memory with legitimate data.
 *
 * <p>Authentication is fuzzed too: auth requests ({@code Frame.auth_request}, field 30) with garbage, huge
 * and wrong-typed contents, and on any frame an {@code auth_token} (field 5) that is garbage, huge, a forged
 * look-alike of a signed token (even one naming root), or sent with a wrong wire type. While auth is disabled
 * only harmless auth calls are made (a login, user and role queries, status): any caller may manage auth
 * then, as in etcd, and a fuzzed enable would lock the test's own clients out. With
 * {@link #authEnabled(boolean)} every auth call is sent, and each must be refused.
 *
 * <p>Frames that are mangled on purpose (a {@linkplain #bitFlipped bit-flipped} request, {@linkplain #garbage
 * random bytes} behind a length) are mostly unparseable, but some parse, and then the server rightly does
 * what they say. So these too keep the promises above: one that parses into a request {@link #stray} names
 * is drawn again. Seed 7995664785814 showed why: a flipped DeleteRange {@code key "fuzz/512"} became
 * {@code "Fuzz\257512"} with range end {@code "\0"} (every key from there up) and deleted the test's
 * {@code acked/} keys, which the check then reported as lost acknowledged writes.
 */
public final class ClientFrames {

    /** Every key a fuzzed write can touch starts with this or is empty. */
    public static final String FUZZ_PREFIX = "fuzz/";
    private static final byte[] FUZZ = FUZZ_PREFIX.getBytes(StandardCharsets.US_ASCII);
    private static final int KEY_SPACE = 2_000;
    private static final int MAX_VALUE_BYTES = 64;
    /** The server's default key limit (Limits.defaults): one byte more is refused. */
    private static final int OVER_MAX_KEY = 8 * 1024 + 1;
    /** The server's default value limit, plus one. */
    private static final int OVER_MAX_VALUE = 1024 * 1024 + 1;
    /**
     * Client ids a real client of a test cluster may hold (a session's id is the index of its registering
     * entry): a frame naming one in its session could answer or discard that client's requests, so no fuzzed
     * frame does.
     */
    private static final long REAL_CLIENT_IDS = 1L << 20;
    /** Redraws of a mangled frame before giving up (a stray one is rare: a few in a thousand). */
    private static final int MAX_REDRAWS = 1_000;
    private static final long[] ABSURD_LONGS = {0, 1, -1, 2, Long.MAX_VALUE, Long.MIN_VALUE, Integer.MAX_VALUE,
            Integer.MIN_VALUE, Long.MAX_VALUE - 1, 1L << 40, -(1L << 40)};

    /** Kinds of a well-formed frame, for the tally. */
    public enum Kind {
        RANGE, PUT, DELETE_RANGE, TXN, HUGE_TXN, LEASE_GRANT, LEASE_REVOKE, LEASE_KEEP_ALIVE, LEASE_TIME_TO_LIVE,
        LEASE_LEASES, WATCH_CREATE, WATCH_CANCEL, WATCH_PROGRESS, REGISTER_SESSION, SESSION_KEEP_ALIVE, STATUS,
        PUBLISH_NON_MEMBER, RESPONSE_AS_REQUEST, AUTH, EMPTY_BODY
    }

    /**
     * A generated request: its kind, whether the server must answer its call id at least once, and its wire
     * bytes (the frame's, or the frame's with a field of the wrong wire type appended, which still parses).
     */
    public record Request(Kind kind, Frame frame, boolean answered, byte[] wire) {
        Request(Kind kind, Frame frame, boolean answered) {
            this(kind, frame, answered, frame.toByteArray());
        }
    }

    /** Field numbers of Frame the wrong-wire-type cases use (see rota.proto). */
    private static final int AUTH_TOKEN_FIELD = 5;
    private static final int AUTH_REQUEST_FIELD = 30;
    /** Users and roles the fuzz names: a small space, and never the checks' own users (root). */
    private static final String[] NAMES = {"", "alice", "bob", "fuzz", "x".repeat(300), "r\u00f6le", "a/b", "\u0000"};

    private final Random random;
    private final int members;
    private boolean authEnabled;

    /**
     * @param random  the seeded source of every choice
     * @param members the cluster size: PublishMember requests use ids above it (a non-member), never a member's
     */
    public ClientFrames(Random random, int members) {
        this.random = random;
        this.members = members;
    }

    /**
     * Whether the cluster under fuzz has auth enabled: then auth administration (user add, grants, enable,
     * disable) is fuzzed as well, all of it refused to callers without root's token.
     *
     * @return this generator
     */
    public ClientFrames authEnabled(boolean enabled) {
        this.authEnabled = enabled;
        return this;
    }

    /** A well-formed frame with absurd field values, on {@code callId}. */
    public Request request(long callId) {
        int roll = random.nextInt(1000);
        Kind kind;
        if (roll < 200) {
            kind = Kind.RANGE;
        } else if (roll < 350) {
            kind = Kind.PUT;
        } else if (roll < 420) {
            kind = Kind.DELETE_RANGE;
        } else if (roll < 520) {
            kind = Kind.TXN;
        } else if (roll < 523) {
            kind = Kind.HUGE_TXN;
        } else if (roll < 533) {
            kind = Kind.LEASE_GRANT;
        } else if (roll < 573) {
            kind = Kind.LEASE_REVOKE;
        } else if (roll < 613) {
            kind = Kind.LEASE_KEEP_ALIVE;
        } else if (roll < 653) {
            kind = Kind.LEASE_TIME_TO_LIVE;
        } else if (roll < 663) {
            kind = Kind.LEASE_LEASES;
        } else if (roll < 713) {
            kind = Kind.WATCH_CREATE;
        } else if (roll < 743) {
            kind = Kind.WATCH_CANCEL;
        } else if (roll < 753) {
            kind = Kind.WATCH_PROGRESS;
        } else if (roll < 756) {
            kind = Kind.REGISTER_SESSION;
        } else if (roll < 796) {
            kind = Kind.SESSION_KEEP_ALIVE;
        } else if (roll < 856) {
            kind = Kind.STATUS;
        } else if (roll < 866) {
            kind = Kind.PUBLISH_NON_MEMBER;
        } else if (roll < 966) {
            kind = Kind.RESPONSE_AS_REQUEST;
        } else if (roll < 986) {
            kind = Kind.AUTH;
        } else {
            kind = Kind.EMPTY_BODY;
        }
        Frame.Builder f = Frame.newBuilder().setCallId(callId);
        switch (kind) {
            case RANGE -> f.setRangeRequest(range());
            case PUT -> f.setPutRequest(put(writeKey()));
            case DELETE_RANGE -> f.setDeleteRangeRequest(delete());
            case TXN -> f.setTxnRequest(txn(random.nextInt(6), random.nextInt(6), random.nextInt(6)));
            case HUGE_TXN -> f.setTxnRequest(txn(random.nextInt(200), 129 + random.nextInt(3000), random.nextInt(50)));
            case LEASE_GRANT -> f.setLeaseGrantRequest(LeaseGrantRequest.newBuilder().setTTL(absurdLong())
                    .setID(random.nextBoolean() ? 0 : absurdLong()));
            case LEASE_REVOKE -> f.setLeaseRevokeRequest(LeaseRevokeRequest.newBuilder().setID(absurdLong()));
            case LEASE_KEEP_ALIVE -> f.setLeaseKeepAliveRequest(LeaseKeepAliveRequest.newBuilder().setID(absurdLong()));
            case LEASE_TIME_TO_LIVE -> f.setLeaseTimeToLiveRequest(LeaseTimeToLiveRequest.newBuilder()
                    .setID(absurdLong()).setKeys(random.nextBoolean()));
            case LEASE_LEASES -> f.setLeaseLeasesRequest(LeaseLeasesRequest.getDefaultInstance());
            case WATCH_CREATE -> f.setWatchRequest(WatchRequest.newBuilder().setCreateRequest(watchCreate()));
            case WATCH_CANCEL -> f.setWatchRequest(WatchRequest.newBuilder()
                    .setCancelRequest(WatchCancelRequest.newBuilder().setWatchId(absurdLong())));
            case WATCH_PROGRESS -> f.setWatchRequest(WatchRequest.newBuilder()
                    .setProgressRequest(WatchProgressRequest.getDefaultInstance()));
            case REGISTER_SESSION -> f.setRegisterSessionRequest(RegisterSessionRequest.getDefaultInstance());
            case SESSION_KEEP_ALIVE -> f.setSessionKeepAliveRequest(SessionKeepAliveRequest.newBuilder()
                    .setClientId(absurdLong()));
            case STATUS -> f.setStatusRequest(StatusRequest.getDefaultInstance());
            case PUBLISH_NON_MEMBER -> f.setPublishMemberRequest(PublishMemberRequest.newBuilder().setMember(
                    Member.newBuilder().setId(nonMemberId()).setName(random.nextBoolean() ? "" : "fake")
                            .setClientAddress(random.nextBoolean() ? "" : "256.0.0.1:99999")
                            .setPeerAddress(text(random.nextInt(20)))));
            case RESPONSE_AS_REQUEST -> responseBody(f);
            case AUTH -> f.setAuthRequest(auth());
            case EMPTY_BODY -> {
                // no body: the server must say it is not a request
            }
        }
        if (random.nextInt(10) == 0) {
            f.setSession(SessionRef.newBuilder().setClientId(foreignClientId()).setSequence(absurdLong()));
        }
        if (random.nextInt(20) == 0) {
            f.setForwarded(true);
        }
        // Rare huge tokens: each is tens of KiB, and a batch holds hundreds of frames (over TLS, all encrypted).
        int token = random.nextInt(256);
        if (token < 12) {
            f.setAuthToken(text(1 + random.nextInt(100)));
        } else if (token < 24) {
            f.setAuthToken(forgedToken());
        } else if (token == 24) {
            f.setAuthToken(text(16 * 1024 + random.nextInt(48 * 1024)));   // huge, still under the request limit
        }
        // Watch calls answer per watch (a cancel of an unknown id or a progress request may answer nothing).
        boolean answered = !f.hasWatchRequest();
        Frame frame = f.build();
        if (random.nextInt(40) == 0) {
            return new Request(kind, frame, answered, withWrongWireType(frame));
        }
        return new Request(kind, frame, answered);
    }

    /** An auth call with absurd contents; administration only when {@link #authEnabled} (it is refused then). */
    private AuthRequest auth() {
        AuthRequest.Builder a = AuthRequest.newBuilder();
        int kinds = authEnabled ? 11 : 6;
        switch (random.nextInt(kinds)) {
            case 0, 1 -> a.setAuthenticate(AuthenticateRequest.newBuilder().setName(name())
                    .setPassword(random.nextInt(4) == 0 ? text(73 + random.nextInt(10_000)) : text(random.nextInt(20))));
            case 2 -> a.setUserGet(AuthUserGetRequest.newBuilder().setName(name()));
            case 3 -> a.setUserList(AuthUserListRequest.getDefaultInstance());
            case 4 -> a.setRoleGet(AuthRoleGetRequest.newBuilder().setRole(name()));
            case 5 -> a.setStatus(AuthStatusRequest.getDefaultInstance());
            // Below: only with auth enabled, where a caller without root's token must be refused every one.
            case 6 -> a.setUserAdd(AuthUserAddRequest.newBuilder().setName(name()).setPassword(text(8))
                    .setPasswordHash(random.nextBoolean() ? "" : text(60)));   // a client may not bring a hash
            case 7 -> a.setUserGrantRole(AuthUserGrantRoleRequest.newBuilder().setUser(name()).setRole("root"));
            case 8 -> a.setRoleAdd(AuthRoleAddRequest.newBuilder().setName(name()));
            case 9 -> a.setRoleGrantPermission(AuthRoleGrantPermissionRequest.newBuilder().setName(name())
                    .setPerm(Permission.newBuilder().setPermTypeValue(random.nextInt(6)).setKey(anyKey())));
            default -> {
                if (random.nextBoolean()) {
                    a.setDisable(AuthDisableRequest.getDefaultInstance());
                } else {
                    a.setEnable(AuthEnableRequest.getDefaultInstance());
                }
            }
        }
        if (random.nextInt(20) == 0) {
            a.setRoleList(AuthRoleListRequest.getDefaultInstance());   // the oneof's last set wins
        }
        return a.build();
    }

    private String name() {
        return random.nextInt(4) == 0 ? text(random.nextInt(40)) : NAMES[random.nextInt(NAMES.length)];
    }

    /** A token in the signed format ({@code v1.<user>.<revision>.<mac>}) with a made-up signature. */
    private String forgedToken() {
        Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
        String user = random.nextBoolean() ? "root" : name();
        String revision = random.nextBoolean() ? Long.toString(absurdLong()) : text(3);
        return "v1." + b64.encodeToString(user.getBytes(StandardCharsets.UTF_8)) + "." + revision + "."
                + b64.encodeToString(randomBytes(random.nextInt(3) == 0 ? 0 : 32));
    }

    /**
     * {@code frame}'s bytes followed by field 5 (a string) or 30 (a message) with a wire type of a number
     * (varint, fixed32, fixed64): the parser keeps it as an unknown field, and the frame must be answered as
     * if it were not there.
     */
    private byte[] withWrongWireType(Frame frame) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(frame.toByteArray());
        int field = random.nextBoolean() ? AUTH_TOKEN_FIELD : AUTH_REQUEST_FIELD;
        int wireType = new int[] {0, 1, 5}[random.nextInt(3)];
        writeVarint(out, ((long) field << 3) | wireType);
        switch (wireType) {
            case 0 -> writeVarint(out, absurdLong());
            case 1 -> out.writeBytes(randomBytes(8));
            default -> out.writeBytes(randomBytes(4));
        }
        return out.toByteArray();
    }

    /**
     * A frame whose {@code auth_token} is not UTF-8: a proto3 string must be, so the frame does not parse
     * and the member treats it as malformed (a connection's tail).
     */
    public byte[] invalidUtf8Token() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(request(random.nextInt(1000)).frame().toBuilder().clearAuthToken().build().toByteArray());
        byte[] bad = {(byte) 0xC3, (byte) 0x28, (byte) 0xFF, (byte) 0xFE};
        writeVarint(out, (AUTH_TOKEN_FIELD << 3) | 2);
        writeVarint(out, bad.length);
        out.writeBytes(bad);
        return out.toByteArray();
    }

    private static void writeVarint(ByteArrayOutputStream out, long value) {
        while ((value & ~0x7FL) != 0) {
            out.write((int) ((value & 0x7F) | 0x80));
            value >>>= 7;
        }
        out.write((int) value);
    }

    /**
     * A request's bytes with 1–8 random bits flipped: it may still parse, or it may not; if it parses, it is
     * nothing {@link #stray} refuses (the flips are drawn again).
     */
    public byte[] bitFlipped(Frame frame) {
        byte[] original = frame.toByteArray();
        if (original.length == 0) {
            return garbage(1);
        }
        for (int attempt = 0; ; attempt++) {
            byte[] bytes = original.clone();
            int flips = 1 + random.nextInt(8);
            for (int i = 0; i < flips; i++) {
                int at = random.nextInt(bytes.length);
                bytes[at] ^= (byte) (1 << random.nextInt(8));
            }
            if (!strayIfParsed(bytes, attempt)) {
                return bytes;
            }
        }
    }

    /** {@code n} random bytes that, if they happen to parse as a frame, make nothing {@link #stray} refuses. */
    public byte[] garbage(int n) {
        for (int attempt = 0; ; attempt++) {
            byte[] bytes = randomBytes(n);
            if (!strayIfParsed(bytes, attempt)) {
                return bytes;
            }
        }
    }

    private boolean strayIfParsed(byte[] bytes, int attempt) {
        Frame parsed;
        try {
            parsed = Frame.parseFrom(bytes);
        } catch (com.google.protobuf.InvalidProtocolBufferException e) {
            return false;   // the server closes the connection: what the tail is for
        }
        String why = stray(parsed);
        if (why != null && attempt >= MAX_REDRAWS) {
            throw new IllegalStateException("no harmless mangling after " + attempt + " draws; last: " + why);
        }
        return why != null;
    }

    /**
     * Why {@code f}, if the server carried it out, could change what a fuzz test checks, or null if it cannot.
     * These are the generator's own promises, checked on any frame: a write reaches only keys at or above
     * {@link #FUZZ_PREFIX} (also inside a txn, at any depth); a PublishMember names a non-member; no
     * cluster administration (members, leadership, alarms, compaction, snapshots: none is ever generated);
     * auth administration only while auth is {@linkplain #authEnabled enabled} (then it is refused); and a
     * session never names a client id a real client may hold.
     */
    public String stray(Frame f) {
        if (f.hasSession() && f.getSession().getClientId() > 0 && f.getSession().getClientId() < REAL_CLIENT_IDS) {
            return "a session naming client id " + f.getSession().getClientId() + ", which a real client may hold";
        }
        return switch (f.getBodyCase()) {
            case PUT_REQUEST -> strayPut(f.getPutRequest());
            case DELETE_RANGE_REQUEST -> strayDelete(f.getDeleteRangeRequest());
            case TXN_REQUEST -> strayTxn(f.getTxnRequest());
            case PUBLISH_MEMBER_REQUEST -> {
                long id = f.getPublishMemberRequest().getMember().getId();
                yield id >= 1 && id <= members ? "a PublishMember naming member " + id : null;
            }
            case AUTH_REQUEST -> authEnabled || harmless(f.getAuthRequest()) ? null
                    : "auth administration (" + f.getAuthRequest().getRequestCase() + ") while auth is disabled";
            case MEMBER_ADD_REQUEST, MEMBER_REMOVE_REQUEST, MEMBER_PROMOTE_REQUEST, MEMBER_UPDATE_REQUEST,
                    MOVE_LEADER_REQUEST, ALARM_REQUEST, COMPACTION_REQUEST, SNAPSHOT_REQUEST ->
                    "cluster administration (" + f.getBodyCase() + ")";
            default -> null;
        };
    }

    private static boolean harmless(AuthRequest a) {
        return switch (a.getRequestCase()) {
            case AUTHENTICATE, USER_GET, USER_LIST, ROLE_GET, ROLE_LIST, STATUS, REQUEST_NOT_SET -> true;
            default -> false;
        };
    }

    private static String strayPut(PutRequest p) {
        return p.getKey().isEmpty() || atOrAboveFuzz(p.getKey()) ? null : "a put of " + printable(p.getKey());
    }

    /** A delete's range is [key, range_end); an empty key is refused or a no-op only without a range end. */
    private static String strayDelete(DeleteRangeRequest d) {
        boolean ok = d.getKey().isEmpty() ? d.getRangeEnd().isEmpty() : atOrAboveFuzz(d.getKey());
        return ok ? null : "a delete from " + printable(d.getKey()) + " to " + printable(d.getRangeEnd());
    }

    private static String strayTxn(TxnRequest t) {
        for (RequestOp op : concat(t.getSuccessList(), t.getFailureList())) {
            String why = switch (op.getRequestCase()) {
                case REQUEST_PUT -> strayPut(op.getRequestPut());
                case REQUEST_DELETE_RANGE -> strayDelete(op.getRequestDeleteRange());
                case REQUEST_TXN -> strayTxn(op.getRequestTxn());
                default -> null;
            };
            if (why != null) {
                return "in a txn, " + why;
            }
        }
        return null;
    }

    private static java.util.List<RequestOp> concat(java.util.List<RequestOp> a, java.util.List<RequestOp> b) {
        java.util.List<RequestOp> all = new java.util.ArrayList<>(a);
        all.addAll(b);
        return all;
    }

    /** Unsigned byte order, as the store sorts keys. */
    private static boolean atOrAboveFuzz(ByteString key) {
        return ByteString.unsignedLexicographicalComparator().compare(key, ByteString.copyFrom(FUZZ)) >= 0;
    }

    private static String printable(ByteString b) {
        return '"' + com.google.protobuf.TextFormat.escapeBytes(b.size() > 40 ? b.substring(0, 40) : b) + '"';
    }

    /** {@code n} random bytes. */
    public byte[] randomBytes(int n) {
        byte[] b = new byte[n];
        random.nextBytes(b);
        return b;
    }

    private RangeRequest range() {
        RangeRequest.Builder r = RangeRequest.newBuilder().setKey(anyKey());
        int end = random.nextInt(5);
        if (end == 1) {
            r.setRangeEnd(ByteString.copyFrom(new byte[] {0}));
        } else if (end == 2) {
            r.setRangeEnd(ByteString.copyFromUtf8("a"));   // often before the key
        } else if (end == 3) {
            r.setRangeEnd(fuzzKey());
        }
        if (random.nextBoolean()) {
            r.setLimit(absurdLong());
        }
        if (random.nextInt(3) == 0) {
            r.setRevision(absurdLong());
        }
        return r.setSerializable(random.nextBoolean()).setKeysOnly(random.nextInt(4) == 0)
                .setCountOnly(random.nextInt(4) == 0).build();
    }

    private PutRequest put(ByteString key) {
        PutRequest.Builder p = PutRequest.newBuilder().setKey(key).setValue(value());
        if (random.nextInt(4) == 0) {
            p.setLease(absurdLong());
        }
        return p.setPrevKv(random.nextBoolean()).setIgnoreValue(random.nextInt(8) == 0)
                .setIgnoreLease(random.nextInt(8) == 0).build();
    }

    private DeleteRangeRequest delete() {
        DeleteRangeRequest.Builder d = DeleteRangeRequest.newBuilder().setPrevKv(random.nextBoolean());
        if (random.nextInt(10) == 0) {
            return d.build();   // the empty key, no range end: refused or a no-op
        }
        d.setKey(fuzzKey());   // a range starting at or above the fuzz prefix stays at or above it
        int end = random.nextInt(4);
        if (end == 1) {
            d.setRangeEnd(ByteString.copyFrom(new byte[] {0}));
        } else if (end == 2) {
            d.setRangeEnd(ByteString.copyFromUtf8("a"));
        } else if (end == 3) {
            d.setRangeEnd(fuzzKey());
        }
        return d.build();
    }

    private TxnRequest txn(int compares, int success, int failure) {
        TxnRequest.Builder t = TxnRequest.newBuilder();
        for (int i = 0; i < compares; i++) {
            Compare.Builder c = Compare.newBuilder().setKey(anyKey())
                    .setResultValue(random.nextInt(6)).setTargetValue(random.nextInt(7));   // 4+, 5+: unknown
            switch (random.nextInt(6)) {
                case 0 -> c.setVersion(absurdLong());
                case 1 -> c.setCreateRevision(absurdLong());
                case 2 -> c.setModRevision(absurdLong());
                case 3 -> c.setValue(value());
                case 4 -> c.setLease(absurdLong());
                default -> {
                    // no target value at all
                }
            }
            if (random.nextInt(4) == 0) {
                c.setRangeEnd(random.nextBoolean() ? ByteString.copyFrom(new byte[] {0}) : fuzzKey());
            }
            t.addCompare(c);
        }
        for (int i = 0; i < success; i++) {
            t.addSuccess(op());
        }
        for (int i = 0; i < failure; i++) {
            t.addFailure(op());
        }
        return t.build();
    }

    private RequestOp op() {
        return switch (random.nextInt(3)) {
            case 0 -> RequestOp.newBuilder().setRequestRange(range()).build();
            case 1 -> RequestOp.newBuilder().setRequestPut(put(writeKey())).build();
            default -> RequestOp.newBuilder().setRequestDeleteRange(delete()).build();
        };
    }

    private WatchCreateRequest watchCreate() {
        WatchCreateRequest.Builder w = WatchCreateRequest.newBuilder().setKey(anyKey())
                .setStartRevision(absurdLong()).setProgressNotify(random.nextBoolean()).setPrevKv(random.nextBoolean());
        if (random.nextBoolean()) {
            w.setRangeEnd(random.nextBoolean() ? ByteString.copyFrom(new byte[] {0}) : anyKey());
        }
        for (int i = random.nextInt(3); i > 0; i--) {
            w.addFiltersValue(random.nextInt(5));   // 2+: unknown filter types
        }
        if (random.nextBoolean()) {
            w.setWatchId(absurdLong());
        }
        return w.build();
    }

    /** A response (or an error) where a request belongs. */
    private void responseBody(Frame.Builder f) {
        switch (random.nextInt(3)) {
            case 0 -> f.setRangeResponse(RangeResponse.newBuilder().setCount(absurdLong()));
            case 1 -> f.setPutResponse(PutResponse.getDefaultInstance());
            default -> f.setError(Error.newBuilder().setCodeValue(random.nextInt(20)).setMessage("fuzz"));
        }
    }

    /** A key for a write: empty, oversized (both refused), or under the fuzz prefix. */
    private ByteString writeKey() {
        int roll = random.nextInt(100);
        if (roll < 5) {
            return ByteString.EMPTY;
        }
        if (roll < 6) {
            return ByteString.copyFrom(FUZZ).concat(ByteString.copyFrom(randomBytes(OVER_MAX_KEY)));
        }
        return fuzzKey();
    }

    /** A key for a read or a watch: anything. */
    private ByteString anyKey() {
        int roll = random.nextInt(100);
        if (roll < 10) {
            return ByteString.EMPTY;
        }
        if (roll < 20) {
            return ByteString.copyFrom(randomBytes(1 + random.nextInt(16)));
        }
        if (roll < 21) {
            return ByteString.copyFrom(randomBytes(OVER_MAX_KEY));
        }
        return fuzzKey();
    }

    private ByteString fuzzKey() {
        return ByteString.copyFrom(FUZZ).concat(ByteString.copyFromUtf8(Integer.toString(random.nextInt(KEY_SPACE))));
    }

    private ByteString value() {
        if (random.nextInt(2000) == 0) {
            return ByteString.copyFrom(new byte[OVER_MAX_VALUE]);
        }
        return ByteString.copyFrom(randomBytes(random.nextInt(MAX_VALUE_BYTES + 1)));
    }

    private String text(int n) {
        StringBuilder s = new StringBuilder(n);
        for (int i = 0; i < n; i++) {
            s.append((char) (32 + random.nextInt(95)));
        }
        return s.toString();
    }

    /** An absurd client id that no real client of a test cluster holds (see {@link #REAL_CLIENT_IDS}). */
    private long foreignClientId() {
        long id = absurdLong();
        return id > 0 && id < REAL_CLIENT_IDS ? id + REAL_CLIENT_IDS : id;
    }

    private long absurdLong() {
        return random.nextInt(3) == 0 ? ABSURD_LONGS[random.nextInt(ABSURD_LONGS.length)] : random.nextLong();
    }

    /** 0 or an id above the cluster's (refused); forging a real member's address is outside the fuzz (see the docs). */
    private long nonMemberId() {
        return random.nextInt(4) == 0 ? 0 : members + 1 + random.nextInt(1_000_000);
    }
}
