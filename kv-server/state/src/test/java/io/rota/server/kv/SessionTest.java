package io.rota.server.kv;

import com.google.protobuf.ByteString;
import io.rota.proto.Command;
import io.rota.proto.CommandResult;
import io.rota.proto.Error;
import io.rota.proto.PutRequest;
import io.rota.proto.RegisterSessionRequest;
import io.rota.proto.SessionKeepAliveRequest;
import io.rota.proto.StoreSnapshot;
import org.junit.jupiter.api.Test;

import static io.rota.server.kv.Harness.assertError;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Exactly-once client sessions (Raft thesis §6.3), expiring by the time carried in the log. */
class SessionTest {

    private final Harness h = new Harness();

    @Test
    void clientIdIsTheIndexOfTheRegisteringEntry() {
        h.put("x", "y");
        assertEquals(2, h.register());
    }

    @Test
    void aRetriedSequenceGetsTheRememberedResponseAndIsNotAppliedAgain() {
        long client = h.register();
        CommandResult first = h.put(client, 1, "counter", "1");
        CommandResult retry = h.put(client, 1, "counter", "1");
        assertEquals(first, retry);
        assertEquals(2, h.sm.revision());
        assertEquals(1, h.get("counter").getVersion());
        // A new sequence is applied.
        h.put(client, 2, "counter", "2");
        assertEquals(2, h.get("counter").getVersion());
    }

    @Test
    void errorsAreRememberedTooSoARetrySeesTheSameOutcome() {
        long client = h.register();
        CommandResult first = h.put(client, 1, "", "v");
        assertError(Error.Code.INVALID_ARGUMENT, first);
        assertEquals(first, h.put(client, 1, "", "v"));
    }

    @Test
    void sequencesOutsideTheWindowAreRefusedNotReapplied() {
        long client = h.register();
        for (long seq = 1; seq <= Harness.LIMITS.rememberedResponsesPerSession() + 1; seq++) {
            h.put(client, seq, "k", "v" + seq);
        }
        long version = h.get("k").getVersion();
        assertError(Error.Code.OUTCOME_UNKNOWN, h.put(client, 1, "k", "again"));
        assertEquals(version, h.get("k").getVersion());
        assertFalse(h.put(client, 2, "k", "v2").hasError());   // still remembered
        assertEquals(version, h.get("k").getVersion());
    }

    @Test
    void unknownSessionIsTyped() {
        assertError(Error.Code.SESSION_EXPIRED, h.put(12345, 1, "k", "v"));
        assertEquals(1, h.sm.revision());
    }

    @Test
    void sessionExpiresByLogTimeUnlessKeptAlive() {
        long idle = h.register();
        long busy = h.register();
        long kept = h.register();
        long ttl = Harness.LIMITS.sessionTtlMs();
        h.nowMs += ttl;                                  // exactly the TTL: still alive
        h.put(busy, 1, "a", "1");
        h.run(Command.newBuilder().setSessionKeepAlive(SessionKeepAliveRequest.newBuilder().setClientId(kept)
                .setSecret(h.ref(kept, 1).getSecret())));
        h.nowMs += 1;
        assertError(Error.Code.SESSION_EXPIRED, h.put(idle, 1, "a", "2"));
        assertFalse(h.put(busy, 2, "a", "2").hasError());
        assertFalse(h.put(kept, 1, "b", "1").hasError());
        assertError(Error.Code.SESSION_EXPIRED,
                h.run(Command.newBuilder().setSessionKeepAlive(SessionKeepAliveRequest.newBuilder().setClientId(idle)
                        .setSecret(h.ref(idle, 1).getSecret()))));
    }

    @Test
    void registeringBeyondTheBoundEvictsTheLeastRecentlyActive() {
        long oldest = h.register();
        h.nowMs += 1;
        long[] others = new long[Harness.LIMITS.maxSessions() - 1];
        for (int i = 0; i < others.length; i++) {
            others[i] = h.register();
        }
        h.nowMs += 1;
        h.put(oldest, 1, "k", "v");                     // now the oldest is the most recently active
        h.register();
        assertFalse(h.put(oldest, 2, "k", "v").hasError());
        assertError(Error.Code.SESSION_EXPIRED, h.put(others[0], 1, "k", "v"));
    }

    @Test
    void sequenceZeroIsInvalid() {
        long client = h.register();
        assertError(Error.Code.INVALID_ARGUMENT, h.put(client, 0, "k", "v"));
    }

    private CommandResult put(long client, long sequence, long firstIncomplete, String key) {
        return h.run(Command.newBuilder()
                .setSession(h.ref(client, sequence).setFirstIncomplete(firstIncomplete))
                .setPut(io.rota.proto.PutRequest.newBuilder().setKey(Harness.b(key)).setValue(Harness.b("v"))));
    }

    @Test
    void responsesBelowTheClientsFirstIncompleteSequenceAreForgottenAndLateCopiesRefused() {
        long client = h.register();
        CommandResult first = put(client, 1, 1, "a");
        put(client, 3, 1, "c");                          // 2 is still in flight
        assertEquals(first, put(client, 1, 1, "a"), "a retry of 1 is answered from memory");
        put(client, 4, 2, "d");                          // the client is done with 1 (thesis §6.3)
        assertError(Error.Code.OUTCOME_UNKNOWN, put(client, 1, 1, "a"));
        assertFalse(put(client, 2, 2, "b").hasError(), "2 was never applied: it is applied now, once");
        put(client, 5, 5, "e");
        assertError(Error.Code.OUTCOME_UNKNOWN, put(client, 2, 2, "b"));  // a late copy, after the client moved on
        assertEquals(1, h.get("b").getVersion());
        assertError(Error.Code.INVALID_ARGUMENT, put(client, 6, 7, "f"));  // first_incomplete above its own sequence
    }

    // ---- sessions belong to their caller (issue 31) ---------------------------------------------------

    /** {@code client}'s put of {@code sequence} as {@code caller} sends it, with {@code secret}. */
    private CommandResult putAs(String caller, ByteString secret, long client, long sequence, String key, String value) {
        return h.run(Command.newBuilder().setCaller(caller).setSession(h.ref(client, sequence).setSecret(secret))
                .setPut(PutRequest.newBuilder().setKey(Harness.b(key)).setValue(Harness.b(value))));
    }

    @Test
    void aWrongSecretIsAnsweredAsNoSessionAndChangesNothingInIt() {
        long alice = h.register();
        ByteString secret = h.ref(alice, 1).getSecret();
        CommandResult first = h.put(alice, 1, "k", "a1");
        ByteString guess = ByteString.copyFromUtf8("0123456789abcdef");

        CommandResult read = putAs("anonymous", guess, alice, 1, "k", "x");
        assertError(Error.Code.SESSION_EXPIRED, read);
        assertEquals(h.put(99_999, 1, "k", "x").getError().getMessage().replace("99999", String.valueOf(alice)),
                read.getError().getMessage(), "the same answer as a session that does not exist");
        assertError(Error.Code.SESSION_EXPIRED, putAs("anonymous", ByteString.EMPTY, alice, 2, "k", "x"));
        assertEquals(1, h.get("k").getVersion(), "nothing applied");

        assertEquals(first, h.put(alice, 1, "k", "a1"), "alice's remembered answer is hers still");
        assertFalse(h.put(alice, 2, "k", "a2").hasError(), "her next sequence was not swallowed");
        assertEquals("a2", Harness.s(h.get("k").getValue()));
        assertEquals(2, h.get("k").getVersion());
        assertEquals(secret, h.ref(alice, 1).getSecret());
    }

    @Test
    void anotherCallerWithTheRightSecretIsRefusedToo() {
        h.caller = "user:alice";
        long alice = h.register();
        ByteString secret = h.ref(alice, 1).getSecret();
        assertFalse(h.put(alice, 1, "k", "a1").hasError());
        assertError(Error.Code.SESSION_EXPIRED, putAs("user:bob", secret, alice, 1, "k", "b"));
        assertError(Error.Code.SESSION_EXPIRED, putAs("user:bob", secret, alice, 2, "k", "b"));
        assertError(Error.Code.SESSION_EXPIRED, h.run(Command.newBuilder().setCaller("user:bob")
                .setSessionKeepAlive(SessionKeepAliveRequest.newBuilder().setClientId(alice).setSecret(secret))));
        assertFalse(h.put(alice, 2, "k", "a2").hasError());
        assertEquals(2, h.get("k").getVersion());
    }

    @Test
    void anotherCallersRequestsDoNotKeepTheSessionAlive() {
        long alice = h.register();
        long ttl = Harness.LIMITS.sessionTtlMs();
        h.nowMs += ttl;
        putAs("user:mallory", ByteString.EMPTY, alice, 1, "k", "m");
        h.nowMs += 1;
        assertError(Error.Code.SESSION_EXPIRED, h.put(alice, 1, "k", "a"));
    }

    @Test
    void ownerAndSecretSurviveASnapshot() {
        h.caller = "user:alice";
        long alice = h.register();
        CommandResult first = h.put(alice, 1, "k", "a1");
        StoreSnapshot image = h.sm.image();
        assertEquals("user:alice", image.getSessions(0).getOwner());
        assertEquals(h.ref(alice, 1).getSecret(), image.getSessions(0).getSecret());

        Harness restored = new Harness();
        restored.sm.restore(h.sm.capture().serialize());
        restored.index = h.index;
        restored.nowMs = h.nowMs;
        Command.Builder retry = Command.newBuilder().setCaller("user:alice").setSession(h.ref(alice, 1))
                .setPut(PutRequest.newBuilder().setKey(Harness.b("k")).setValue(Harness.b("a1")));
        assertEquals(first, restored.run(retry.clone()));
        assertError(Error.Code.SESSION_EXPIRED, restored.run(retry.clone().setCaller("user:bob")));
    }

    @Test
    void entriesProposedBeforeIssue31ReplayAsTheyAppliedAndTheirSessionsExpireAtANewerUse() {
        long old = h.runAsProposedBefore31(Command.newBuilder()
                .setRegisterSession(RegisterSessionRequest.getDefaultInstance())).getRegisterSession().getClientId();
        CommandResult applied = h.runAsProposedBefore31(Command.newBuilder()
                .setSession(io.rota.proto.SessionRef.newBuilder().setClientId(old).setSequence(1))
                .setPut(PutRequest.newBuilder().setKey(Harness.b("k")).setValue(Harness.b("v"))));
        assertFalse(applied.hasError(), applied::toString);
        assertError(Error.Code.SESSION_EXPIRED, h.put(old, 2, "k", "w"));
        assertEquals(1, h.get("k").getVersion());
    }

    // ---- remembered responses are bounded in bytes (issue 31) -----------------------------------------

    private static final String BIG = "v".repeat(200);

    /** A session whose puts of {@link #bigPut} answer the previous value. */
    private static long bigClient(Harness on) {
        long client = on.register();
        on.put("big" + client, BIG);
        return client;
    }

    /** A put answering the previous value: a remembered response of about {@link #BIG}'s size. */
    private static CommandResult bigPut(Harness on, long client, long sequence) {
        return on.run(Command.newBuilder().setSession(on.ref(client, sequence))
                .setPut(PutRequest.newBuilder().setKey(Harness.b("big" + client)).setValue(Harness.b(BIG)).setPrevKv(true)));
    }

    @Test
    void aSessionForgetsItsOldestResponsesOverItsByteBound() {
        Harness bounded = new Harness(Harness.LIMITS.toBuilder().rememberedBytesPerSession(500).build());
        long client = bigClient(bounded);
        CommandResult first = bigPut(bounded, client, 1);
        assertEquals(first, bigPut(bounded, client, 1), "one answer fits");
        bigPut(bounded, client, 2);
        bigPut(bounded, client, 3);                         // over 500 bytes: 1 goes
        long version = bounded.get("big" + client).getVersion();
        assertError(Error.Code.OUTCOME_UNKNOWN, bigPut(bounded, client, 1));
        assertEquals(version, bounded.get("big" + client).getVersion(), "not applied again");
        assertFalse(bigPut(bounded, client, 3).hasError(), "the newest is remembered");
        assertEquals(version, bounded.get("big" + client).getVersion());
    }

    @Test
    void overTheTotalByteBoundTheLeastRecentlyActiveSessionsForget() {
        Harness bounded = new Harness(Harness.LIMITS.toBuilder().rememberedBytesTotal(700).build());
        long[] clients = new long[4];
        for (int i = 0; i < clients.length; i++) {
            clients[i] = bigClient(bounded);
            bounded.nowMs += 1;
            bigPut(bounded, clients[i], 1);              // each remembers about 220 bytes
        }
        long total = bounded.sm.image().getSessionsList().stream()
                .mapToLong(s -> s.getResponsesList().stream().mapToLong(r -> r.getSerializedSize()).sum()).sum();
        assertTrue(total <= 700, "remembered " + total + " bytes");
        assertError(Error.Code.OUTCOME_UNKNOWN, bigPut(bounded, clients[0], 1));
        assertEquals(2, bounded.get("big" + clients[0]).getVersion(), "not applied again");
        assertFalse(bigPut(bounded, clients[3], 1).hasError(), "the most recently active session still remembers");
        assertEquals(2, bounded.get("big" + clients[3]).getVersion());
    }
}
