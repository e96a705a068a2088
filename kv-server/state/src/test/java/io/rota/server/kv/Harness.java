package io.rota.server.kv;

import com.google.protobuf.ByteString;
import io.rota.proto.ClockStamp;
import io.rota.proto.Command;
import io.rota.proto.CommandResult;
import io.rota.proto.DeleteRangeRequest;
import io.rota.proto.Error;
import io.rota.proto.KeyValue;
import io.rota.proto.LeaseExpireRequest;
import io.rota.proto.LeaseGrantRequest;
import io.rota.proto.LeaseRevokeRequest;
import io.rota.proto.PutRequest;
import io.rota.proto.RangeRequest;
import io.rota.proto.RangeResponse;
import io.rota.proto.RegisterSessionRequest;
import io.rota.proto.SessionRef;
import io.rota.raft.core.Entry;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/** Feeds a state machine one committed entry at a time, as the Raft driver would, with a log clock. */
final class Harness {

    static final Limits LIMITS = Limits.builder().maxKeyBytes(64).maxValueBytes(256).maxTxnOps(16).maxKeys(1000)
            .maxHistoryEvents(50).maxLeases(100).maxLeaseTtlSeconds(3600).maxSessions(8).sessionTtlMs(60_000)
            .rememberedResponsesPerSession(4).build();

    final CoordinationStateMachine sm;
    long index;
    /** The term of the entries fed, and of their stamps. */
    long term = 1;
    /** How long the (simulated) leader of {@link #term} has led: each entry's log-clock stamp. */
    long nowMs = 1_000_000;
    /** Who the commands come from (Command.caller, issue 31), as a leader names the sender of a request. */
    String caller = "anonymous";
    private int secrets;
    private final Map<Long, ByteString> secretOf = new HashMap<>();

    Harness() {
        this(LIMITS);
    }

    Harness(Limits limits) {
        sm = new CoordinationStateMachine(limits);
    }

    static ByteString b(String s) {
        return ByteString.copyFrom(s, StandardCharsets.UTF_8);
    }

    static String s(ByteString b) {
        return b.toStringUtf8();
    }

    Entry entry(Command.Builder cmd) {
        if (!cmd.hasStamp()) {
            cmd.setStamp(ClockStamp.newBuilder().setTerm(term).setElapsedMs(nowMs));
        }
        return Entry.command(++index, term, cmd.build().toByteArray());
    }

    /** Applies {@code cmd} as a leader of today proposes it: from {@link #caller} unless it names one. */
    CommandResult run(Command.Builder cmd) {
        if (cmd.getCaller().isEmpty()) {
            cmd.setCaller(caller);
        }
        return runAsProposedBefore31(cmd);
    }

    /** Applies {@code cmd} as it is: without a caller, it is an entry proposed before issue 31. */
    CommandResult runAsProposedBefore31(Command.Builder cmd) {
        return sm.apply(List.of(entry(cmd))).get(0);
    }

    CommandResult put(String key, String value) {
        return run(Command.newBuilder().setPut(PutRequest.newBuilder().setKey(b(key)).setValue(b(value))));
    }

    CommandResult put(String key, String value, long lease) {
        return run(Command.newBuilder().setPut(
                PutRequest.newBuilder().setKey(b(key)).setValue(b(value)).setLease(lease)));
    }

    CommandResult delete(String key, String rangeEnd) {
        return run(Command.newBuilder().setDeleteRange(
                DeleteRangeRequest.newBuilder().setKey(b(key)).setRangeEnd(b(rangeEnd)).setPrevKv(true)));
    }

    long grant(long ttlSeconds) {
        CommandResult r = run(Command.newBuilder().setLeaseGrant(LeaseGrantRequest.newBuilder().setTTL(ttlSeconds)));
        assertFalse(r.hasError(), r::toString);
        return r.getLeaseGrant().getID();
    }

    CommandResult revoke(long id) {
        return run(Command.newBuilder().setLeaseRevoke(LeaseRevokeRequest.newBuilder().setID(id)));
    }

    /** The leader's expiry of the lease's latest renewal (what it timed, if nothing renewed it since). */
    CommandResult expire(long id) {
        long renewal = sm.leaseImages().stream().filter(l -> l.getID() == id).mapToLong(l -> l.getRenewal())
                .findFirst().orElse(0);
        return expire(id, renewal);
    }

    CommandResult expire(long id, long renewal) {
        return run(Command.newBuilder().setLeaseExpire(LeaseExpireRequest.newBuilder().setID(id).setRenewal(renewal)));
    }

    /** A session of {@link #caller}, with a secret as a leader chooses one (here from a counter, so runs repeat). */
    long register() {
        ByteString secret = ByteString.copyFrom(String.format("secret-%09d", ++secrets), StandardCharsets.UTF_8);
        CommandResult r = run(Command.newBuilder().setRegisterSession(RegisterSessionRequest.newBuilder()
                .setSecret(secret)));
        assertEquals(secret, r.getRegisterSession().getSecret());
        long client = r.getRegisterSession().getClientId();
        secretOf.put(client, secret);
        return client;
    }

    /** The session ref of {@code client}'s {@code sequence}, with the secret its registration answered. */
    SessionRef.Builder ref(long client, long sequence) {
        return SessionRef.newBuilder().setClientId(client).setSequence(sequence)
                .setSecret(secretOf.getOrDefault(client, ByteString.EMPTY));
    }

    /** The same put as a session request (client, sequence). */
    CommandResult put(long client, long sequence, String key, String value) {
        return run(Command.newBuilder().setSession(ref(client, sequence))
                .setPut(PutRequest.newBuilder().setKey(b(key)).setValue(b(value))));
    }

    KeyValue get(String key) {
        RangeResponse r = sm.range(RangeRequest.newBuilder().setKey(b(key)).build());
        return r.getKvsCount() == 0 ? null : r.getKvs(0);
    }

    static void assertError(Error.Code code, CommandResult r) {
        assertEquals(code, r.getError().getCode(), r::toString);
    }
}
