package io.rota.server.sim;

import com.google.protobuf.ByteString;
import io.rota.proto.AlarmCommand;
import io.rota.proto.AlarmRequest;
import io.rota.proto.AlarmType;
import io.rota.proto.AuthCommand;
import io.rota.proto.AuthDisableRequest;
import io.rota.proto.AuthEnableRequest;
import io.rota.proto.AuthRoleAddRequest;
import io.rota.proto.AuthRoleDeleteRequest;
import io.rota.proto.AuthRoleGrantPermissionRequest;
import io.rota.proto.AuthRoleRevokePermissionRequest;
import io.rota.proto.AuthUserAddRequest;
import io.rota.proto.AuthUserChangePasswordRequest;
import io.rota.proto.AuthUserDeleteRequest;
import io.rota.proto.AuthUserGrantRoleRequest;
import io.rota.proto.AuthUserRevokeRoleRequest;
import io.rota.proto.ClockStamp;
import io.rota.proto.Command;
import io.rota.proto.Compare;
import io.rota.proto.CompactionRequest;
import io.rota.proto.DeleteRangeRequest;
import io.rota.proto.LeaseCheckpointRequest;
import io.rota.proto.LeaseExpireRequest;
import io.rota.proto.LeaseGrantRequest;
import io.rota.proto.LeaseKeepAliveRequest;
import io.rota.proto.LeaseRevokeRequest;
import io.rota.proto.Member;
import io.rota.proto.Permission;
import io.rota.proto.PublishMemberRequest;
import io.rota.proto.PutRequest;
import io.rota.proto.RangeRequest;
import io.rota.proto.RegisterMemberRequest;
import io.rota.proto.RegisterSessionRequest;
import io.rota.proto.RegisteredMember;
import io.rota.proto.RequestOp;
import io.rota.proto.RetireMemberRequest;
import io.rota.proto.SessionKeepAliveRequest;
import io.rota.proto.SessionRef;
import io.rota.proto.StoreSnapshot;
import io.rota.proto.TxnRequest;
import io.rota.proto.UpdateMemberRequest;
import io.rota.server.kv.CoordinationStateMachine;
import io.rota.server.kv.Limits;
import io.rota.server.lease.LogClock;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Commands for the apply-totality sweep (issue 30): every {@link Command} op, filled with boundary values —
 * empty and huge-but-legal (and just-too-large) keys and values, negative and extreme numbers, ids that are
 * 0, unknown, removed, duplicate or someone else's, peer addresses that are not host:port, member names that
 * are not names, session refs of live and dead sessions, bogus clock stamps — and, now and then, bytes that
 * are no {@code Command} at all. They are meant to be proposed straight to the leader's Raft driver, past
 * the request router and every admission check the leader runs, so that apply on every member sees them.
 *
 * <p>Drawn from the world's seeded random and from the proposing leader's applied state (live leases with
 * their renewals, members, the revision), so a seed replays the same commands.
 */
final class CommandGenerator {

    /** Peer and client addresses: the member-add crash's "n4:71010" first, then every other way to be wrong. */
    static final List<String> ADDRESSES = List.of(
            "n4:71010", "h:", ":1", "h:0", "h:-1", "h:65536", "h:65535", "h:1", "h", "", ":", "h:+1", "h:00001",
            "h:99999999999999999999", "h:1:2", "::1", "[::1]:7000", "[::1]", "ü:7000", "ホスト:7000", "h:١٢٣",
            "h:\u0663", "a,b:1", "a b:1", " h:1", "h:1 ", "h :1", "h:1\n", "h\u0000:1", "\u0000", "h:0x10",
            "h:2147483648", "h:-2147483648", "sim:1", "sim:2", "sim:0", "sim:9", "n4:7004", "n5:7005", "n6:7006");
    static final List<String> NAMES = List.of(
            "", "n1", "n2", "n4", "n5", "n 4", "n,4", "ü", "-", ".", "_", "n4\n", "\u0000", "root", "a".repeat(300),
            "n4:7004", "ok-name.1", "ok_name_2");

    private static final byte[] VARINT_OVERFLOW = {(byte) 0x50, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF,
            (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, (byte) 0x01};

    private final SplittableRandom random;
    private final Limits limits = Limits.defaults();
    /** Keys used so far (a few), to hit existing ones. */
    private final List<ByteString> keys = new ArrayList<>();
    /** Client ids of sessions registered so far (live or expired since). */
    final List<Long> sessions = new ArrayList<>();
    /** Their secrets, as registering answered them (issue 31). */
    final Map<Long, ByteString> secrets = new HashMap<>();
    /** Their callers, as the registering entry named them (invariant 9). */
    final Map<Long, String> owners = new HashMap<>();
    /** Lease ids granted so far (live or not since). */
    final List<Long> leases = new ArrayList<>();
    /** What the command being built may still hold: requests in its txn tree, values of a megabyte. */
    private int opsLeft;
    private int hugeLeft;

    CommandGenerator(SplittableRandom random) {
        this.random = random;
    }

    /**
     * The next entry to append: a command's bytes, or (one time in 25) bytes that are not a command.
     * {@code leader} is the member that will propose it; its state and stamp fill the boundary values.
     */
    byte[] next(SimMember leader) {
        if (random.nextInt(25) == 0) {
            return raw(leader);
        }
        return command(leader).toByteArray();
    }

    Command command(SimMember leader) {
        opsLeft = 2 * limits.maxTxnOps();
        hugeLeft = 1;
        CoordinationStateMachine sm = leader.stateMachine;
        Command.Builder c = Command.newBuilder();
        stamp(c, leader);
        // Issue 31: the caller a leader names (or none, as in entries proposed before it).
        c.setCaller(pick("", "anonymous", "user:root", "user:mallory"));
        if (random.nextInt(6) == 0) {
            c.setSession(sessionRef());
        }
        switch (random.nextInt(18)) {
            case 0 -> c.setPut(put());
            case 1 -> c.setDeleteRange(delete());
            case 2 -> c.setTxn(txn(random.nextInt(5) == 0 ? 34 : 3));
            case 3 -> c.setLeaseGrant(LeaseGrantRequest.newBuilder()
                    .setTTL(pick(0L, -1L, 1L, 2L, 60L, limits.maxLeaseTtlSeconds(), limits.maxLeaseTtlSeconds() + 1,
                            Long.MAX_VALUE, Long.MIN_VALUE))
                    .setID(random.nextBoolean() ? 0 : leaseId()));
            case 4 -> c.setLeaseRevoke(LeaseRevokeRequest.newBuilder().setID(leaseId()));
            case 5 -> c.setLeaseKeepAlive(LeaseKeepAliveRequest.newBuilder().setID(leaseId()));
            case 6 -> {
                LeaseCheckpointRequest.Builder cp = LeaseCheckpointRequest.newBuilder();
                List<StoreSnapshot.LeaseImage> live = sm.leaseImages();
                for (int i = random.nextInt(4); i > 0; i--) {
                    StoreSnapshot.LeaseImage l = live.isEmpty() || random.nextInt(3) == 0 ? null
                            : live.get(random.nextInt(live.size()));
                    cp.addCheckpoints(LeaseCheckpointRequest.Checkpoint.newBuilder()
                            .setID(l != null ? l.getID() : leaseId())
                            .setRenewal(l != null && random.nextBoolean() ? l.getRenewal() : extreme())
                            .setRemainingMs(pick(0L, -1L, 1L, 500L, Long.MAX_VALUE, Long.MIN_VALUE,
                                    l != null ? l.getRemainingMs() : 1000L)));
                }
                c.setLeaseCheckpoint(cp);
            }
            case 7 -> {
                List<StoreSnapshot.LeaseImage> live = sm.leaseImages();
                LeaseExpireRequest.Builder ex = LeaseExpireRequest.newBuilder().setID(leaseId()).setRenewal(extreme());
                if (!live.isEmpty() && random.nextBoolean()) {
                    StoreSnapshot.LeaseImage l = live.get(random.nextInt(live.size()));
                    ex.setID(l.getID()).setRenewal(random.nextBoolean() ? l.getRenewal() : l.getRenewal() + 1);
                }
                c.setLeaseExpire(ex);
            }
            case 8 -> c.setRegisterSession(RegisterSessionRequest.newBuilder().setSecret(randomSecret()));
            case 9 -> {
                long id = sessionId();
                c.setSessionKeepAlive(SessionKeepAliveRequest.newBuilder().setClientId(id).setSecret(secret(id)));
            }
            case 10 -> c.setPublishMember(PublishMemberRequest.newBuilder().setMember(member(sm)));
            case 11 -> c.setRegisterMember(RegisterMemberRequest.newBuilder().setName(name()).setPeerAddress(address())
                    .setClientAddress(address()).setLearner(random.nextBoolean())
                    .setIdFloor(random.nextBoolean() ? 0 : pick(memberId(sm), 3L, 5L, 100L, -1L, -2L,
                            Long.MAX_VALUE, Long.MAX_VALUE - 1, Long.MIN_VALUE)));
            case 12 -> c.setRetireMember(RetireMemberRequest.newBuilder().setId(memberId(sm)));
            case 13 -> c.setUpdateMember(UpdateMemberRequest.newBuilder().setId(memberId(sm)).setPeerAddress(address())
                    .setInConfiguration(random.nextBoolean()));
            case 14 -> {
                AlarmCommand.Builder a = AlarmCommand.newBuilder().setMemberId(memberId(sm))
                        .setAccountedBytes(extreme()).setQuotaBytes(extreme());
                int action = random.nextInt(5);
                if (action < 3) {
                    a.setAction(AlarmRequest.AlarmAction.forNumber(random.nextInt(3) == 0 ? 2 : action));
                } else {
                    a.setActionValue(action == 3 ? 99 : -1);
                }
                int type = random.nextInt(4);
                if (type < 2) {
                    a.setAlarm(AlarmType.forNumber(type));
                } else {
                    a.setAlarmValue(type == 2 ? 7 : -5);
                }
                c.setAlarm(a);
            }
            case 15 -> c.setCompaction(CompactionRequest.newBuilder().setRevision(pick(0L, -1L, 1L, sm.revision(),
                    sm.revision() + 1, sm.revision() - 1, sm.compactRevision(), sm.compactRevision() + 1,
                    Long.MAX_VALUE, Long.MIN_VALUE)));
            case 16 -> c.setAuth(auth());
            default -> { }   // no operation at all
        }
        return c.build();
    }

    // ---- stamps and sessions ---------------------------------------------------------------------------

    /** Mostly the leader's own stamp (as the router puts on); sometimes none, a wrong term, or a wild elapsed time. */
    private void stamp(Command.Builder c, SimMember leader) {
        ClockStamp real = LogClock.stamp(leader.driver.leadership(), leader.clock.nanoTime());
        switch (random.nextInt(10)) {
            case 0 -> { }
            case 1 -> c.setStamp(real.toBuilder().setTerm(real.getTerm() + pick(1L, -1L, Long.MAX_VALUE)));
            case 2 -> c.setStamp(real.toBuilder().setElapsedMs(pick(-1L, 0L, Long.MIN_VALUE,
                    real.getElapsedMs() + 3_600_000L, real.getElapsedMs() - 10_000L)));
            case 3 -> c.setStamp(real.toBuilder().setElapsedMs(Long.MAX_VALUE / pick(1L, 2L, 1_000L)));
            default -> c.setStamp(real);
        }
    }

    private SessionRef sessionRef() {
        long seq = pick(0L, 1L, 2L, 255L, 256L, 257L, 10_000L, -1L, Long.MAX_VALUE);
        long id = sessionId();
        return SessionRef.newBuilder().setClientId(id).setSecret(secret(id)).setSequence(seq)
                .setFirstIncomplete(pick(0L, 1L, seq, seq + 1, seq - 300, -1L)).build();
    }

    /** Mostly the session's own secret; sometimes none or a guess. */
    private ByteString secret(long clientId) {
        return random.nextInt(4) != 0 ? secrets.getOrDefault(clientId, ByteString.EMPTY) : randomSecret();
    }

    /** 16 random bytes as a leader chooses them, or none, or a byte. */
    private ByteString randomSecret() {
        byte[] b = new byte[pick(16, 0, 1)];
        random.nextBytes(b);
        return ByteString.copyFrom(b);
    }

    private long sessionId() {
        if (!sessions.isEmpty() && random.nextInt(3) != 0) {
            return sessions.get(random.nextInt(sessions.size()));
        }
        return pick(0L, 1L, -1L, Long.MAX_VALUE, random.nextLong(1, 10_000));
    }

    private long leaseId() {
        if (!leases.isEmpty() && random.nextInt(3) != 0) {
            return leases.get(random.nextInt(leases.size()));
        }
        return pick(0L, 1L, -1L, Long.MAX_VALUE, Long.MIN_VALUE, random.nextLong(1, 10_000));
    }

    private long memberId(CoordinationStateMachine sm) {
        List<Long> known = new ArrayList<>();
        sm.registry().forEach(r -> known.add(r.getId()));
        sm.members().forEach(m -> known.add(m.getId()));
        if (!known.isEmpty() && random.nextInt(3) != 0) {
            return known.get(random.nextInt(known.size()));
        }
        return pick(0L, 1L, 2L, 3L, 6L, -1L, Long.MAX_VALUE, Long.MIN_VALUE, random.nextLong(1, 1_000));
    }

    // ---- members -----------------------------------------------------------------------------------------

    private String address() {
        return random.nextInt(8) == 0 ? "h" + random.nextInt(100) + ":" + random.nextInt(1, 65536)
                : ADDRESSES.get(random.nextInt(ADDRESSES.size()));
    }

    private String name() {
        return random.nextInt(6) == 0 ? "m" + random.nextInt(50) : NAMES.get(random.nextInt(NAMES.size()));
    }

    private Member member(CoordinationStateMachine sm) {
        Member.Builder m = Member.newBuilder().setId(memberId(sm)).setName(name()).setClientAddress(address())
                .setPeerAddress(address());
        if (random.nextBoolean()) {
            m.setHttpAddress(address()).setEtcdAddress(address());
        }
        List<RegisteredMember> registry = sm.registry();
        if (!registry.isEmpty() && random.nextInt(4) == 0) {
            // A member that exists, republishing itself (its own id and name) with a wrong address.
            RegisteredMember r = registry.get(random.nextInt(registry.size()));
            m.setId(r.getId()).setName(r.getName().isEmpty() ? "x" : r.getName());
        }
        return m.build();
    }

    // ---- key-value ---------------------------------------------------------------------------------------

    private ByteString key() {
        if (!keys.isEmpty() && random.nextInt(3) == 0) {
            return keys.get(random.nextInt(keys.size()));
        }
        ByteString k = switch (random.nextInt(10)) {
            case 0 -> ByteString.EMPTY;
            case 1 -> ByteString.copyFrom(new byte[] {0});
            case 2 -> ByteString.copyFrom(new byte[] {(byte) 0xFF, (byte) 0xFF});
            case 3 -> bytes(limits.maxKeyBytes());
            case 4 -> bytes(limits.maxKeyBytes() + 1);
            case 5 -> ByteString.copyFromUtf8("ü/ключ/" + random.nextInt(10));
            default -> ByteString.copyFromUtf8("g/" + random.nextInt(40));
        };
        if (keys.size() < 64 && k.size() <= 64) {
            keys.add(k);
        }
        return k;
    }

    private ByteString rangeEnd(ByteString key) {
        return switch (random.nextInt(6)) {
            case 0 -> ByteString.copyFrom(new byte[] {0});
            case 1 -> key.concat(ByteString.copyFrom(new byte[] {0}));
            case 2 -> key.isEmpty() ? ByteString.EMPTY : key.substring(0, key.size() - 1);   // below the key
            case 3 -> key();
            default -> ByteString.EMPTY;
        };
    }

    private ByteString value() {
        int r = random.nextInt(40);
        if (r < 2 && hugeLeft-- <= 0) {
            r = 2;
        }
        return switch (r) {
            case 0 -> bytes(limits.maxValueBytes());         // huge but legal
            case 1 -> bytes(limits.maxValueBytes() + 1);     // one byte too many
            case 2, 3 -> bytes(random.nextInt(4_096, 65_536));
            case 4, 5, 6 -> ByteString.EMPTY;
            default -> bytes(random.nextInt(1, 64));
        };
    }

    private ByteString bytes(int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < Math.min(n, 256); i++) {
            b[i] = (byte) random.nextInt(256);
        }
        return ByteString.copyFrom(b);
    }

    private PutRequest put() {
        return PutRequest.newBuilder().setKey(key()).setValue(value())
                .setLease(random.nextInt(3) == 0 ? leaseId() : 0).setPrevKv(random.nextBoolean())
                .setIgnoreValue(random.nextInt(5) == 0).setIgnoreLease(random.nextInt(5) == 0).build();
    }

    private DeleteRangeRequest delete() {
        ByteString k = key();
        return DeleteRangeRequest.newBuilder().setKey(k).setRangeEnd(rangeEnd(k)).setPrevKv(random.nextBoolean())
                .build();
    }

    private RangeRequest range() {
        ByteString k = key();
        return RangeRequest.newBuilder().setKey(k).setRangeEnd(rangeEnd(k)).setLimit(pick(0L, -1L, 1L, Long.MAX_VALUE))
                .setRevision(pick(0L, -1L, 1L, Long.MAX_VALUE)).setKeysOnly(random.nextBoolean())
                .setCountOnly(random.nextInt(4) == 0).setSortOrderValue(random.nextInt(5) - 1)
                .setSortTargetValue(random.nextInt(7) - 1).setMinModRevision(pick(0L, -1L, Long.MAX_VALUE))
                .setMaxCreateRevision(pick(0L, -1L, 1L, Long.MIN_VALUE)).build();
    }

    /**
     * A txn tree: sometimes deeper than the limit (a chain of {@code depth}), sometimes with more compares or
     * ops than the limit; at most {@link #opsLeft} requests in all.
     */
    private TxnRequest txn(int depth) {
        TxnRequest.Builder t = TxnRequest.newBuilder();
        int compares = Math.min(opsLeft, random.nextInt(10) == 0 ? limits.maxTxnOps() + 1 : random.nextInt(4));
        opsLeft -= compares;
        for (int i = 0; i < compares; i++) {
            t.addCompare(compare());
        }
        int ops = Math.min(opsLeft, random.nextInt(12) == 0 ? limits.maxTxnOps() / 2 + 1 : random.nextInt(4));
        opsLeft -= ops;
        for (int i = 0; i < ops; i++) {
            if (depth > 5 ? i == 0 : depth > 0 && random.nextInt(4) == 0) {
                RequestOp nested = RequestOp.newBuilder().setRequestTxn(txn(depth - 1)).build();
                if (random.nextBoolean()) {
                    t.addSuccess(nested);
                } else {
                    t.addFailure(nested);
                }
                continue;
            }
            RequestOp op = switch (random.nextInt(4)) {
                case 0 -> RequestOp.newBuilder().setRequestRange(range()).build();
                case 1 -> RequestOp.newBuilder().setRequestDeleteRange(delete()).build();
                case 2 -> RequestOp.getDefaultInstance();   // no request at all
                default -> RequestOp.newBuilder().setRequestPut(put()).build();
            };
            if (random.nextBoolean()) {
                t.addSuccess(op);
            } else {
                t.addFailure(op);
            }
        }
        return t.build();
    }

    private Compare compare() {
        ByteString k = key();
        Compare.Builder c = Compare.newBuilder().setKey(k).setResultValue(random.nextInt(6) - 1)
                .setTargetValue(random.nextInt(7) - 1);
        if (random.nextBoolean()) {
            c.setRangeEnd(rangeEnd(k));
        }
        switch (random.nextInt(6)) {   // target_union: often not the one the target names
            case 0 -> c.setVersion(extreme());
            case 1 -> c.setCreateRevision(extreme());
            case 2 -> c.setModRevision(extreme());
            case 3 -> c.setValue(value());
            case 4 -> c.setLease(leaseId());
            default -> { }
        }
        return c.build();
    }

    // ---- auth --------------------------------------------------------------------------------------------

    private AuthCommand auth() {
        AuthCommand.Builder a = AuthCommand.newBuilder();
        String user = pick("root", "alice", "", "a b", "ü", "x".repeat(300));
        String role = pick("root", "reader", "", "r,1", "ü");
        String hash = pick("", "not-a-hash", "$2a$10$0123456789012345678901uXs0D1kO6k5Kx7t9o1G0FQm9XmzEo2e",
                "$2a$04$" + "a".repeat(53));
        switch (random.nextInt(12)) {
            case 0 -> a.setUserAdd(AuthUserAddRequest.newBuilder().setName(user).setPassword(pick("", "pw"))
                    .setPasswordHash(hash));
            case 1 -> a.setUserDelete(AuthUserDeleteRequest.newBuilder().setName(user));
            case 2 -> a.setUserChangePassword(AuthUserChangePasswordRequest.newBuilder().setName(user)
                    .setPassword(pick("", "pw")).setPasswordHash(hash));
            case 3 -> a.setUserGrantRole(AuthUserGrantRoleRequest.newBuilder().setUser(user).setRole(role));
            case 4 -> a.setUserRevokeRole(AuthUserRevokeRoleRequest.newBuilder().setName(user).setRole(role));
            case 5 -> a.setRoleAdd(AuthRoleAddRequest.newBuilder().setName(role));
            case 6 -> a.setRoleDelete(AuthRoleDeleteRequest.newBuilder().setRole(role));
            case 7 -> {
                ByteString k = key();
                a.setRoleGrantPermission(AuthRoleGrantPermissionRequest.newBuilder().setName(role)
                        .setPerm(Permission.newBuilder().setPermTypeValue(random.nextInt(5) - 1).setKey(k)
                                .setRangeEnd(rangeEnd(k))));
            }
            case 8 -> {
                ByteString k = key();
                a.setRoleRevokePermission(AuthRoleRevokePermissionRequest.newBuilder().setRole(role).setKey(k)
                        .setRangeEnd(rangeEnd(k)));
            }
            case 9 -> a.setEnable(AuthEnableRequest.getDefaultInstance());
            case 10 -> a.setDisable(AuthDisableRequest.getDefaultInstance());
            default -> { }   // no change at all
        }
        if (random.nextBoolean()) {
            a.setTokenKey(random.nextInt(4) == 0 ? ByteString.EMPTY : bytes(random.nextInt(1, 64)));
        }
        return a.build();
    }

    // ---- not a command -----------------------------------------------------------------------------------

    /** Bytes that are not a well-formed Command (some may still parse: apply must then treat them as one). */
    private byte[] raw(SimMember leader) {
        byte[] good = command(leader).toByteArray();
        switch (random.nextInt(6)) {
            case 0 -> {
                byte[] b = new byte[random.nextInt(64)];
                for (int i = 0; i < b.length; i++) {
                    b[i] = (byte) random.nextInt(256);
                }
                return b;
            }
            case 1 -> {   // truncated
                return java.util.Arrays.copyOf(good, good.length == 0 ? 0 : random.nextInt(good.length));
            }
            case 2 -> {   // a byte flipped
                if (good.length > 0) {
                    good[random.nextInt(good.length)] ^= (byte) (1 << random.nextInt(8));
                }
                return good;
            }
            case 3 -> {
                return VARINT_OVERFLOW.clone();
            }
            case 4 -> {   // field 10 (put) with a length far beyond the bytes
                return new byte[] {0x52, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, (byte) 0x7F, 1, 2, 3};
            }
            default -> {   // a wrong wire type for a known field, and an end-group without a start
                return random.nextBoolean() ? new byte[] {0x55, 1, 2, 3, 4} : "not protobuf at all ✗"
                        .getBytes(StandardCharsets.UTF_8);
            }
        }
    }

    // ---- picking -----------------------------------------------------------------------------------------

    private long extreme() {
        return pick(0L, 1L, -1L, Long.MAX_VALUE, Long.MIN_VALUE, (long) Integer.MAX_VALUE, (long) Integer.MIN_VALUE,
                random.nextLong(1, 1_000));
    }

    @SafeVarargs
    private <T> T pick(T... choices) {
        return choices[random.nextInt(choices.length)];
    }
}
