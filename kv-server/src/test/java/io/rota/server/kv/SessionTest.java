package io.rota.server.kv;

import io.rota.proto.Command;
import io.rota.proto.CommandResult;
import io.rota.proto.Error;
import io.rota.proto.SessionKeepAliveRequest;
import org.junit.jupiter.api.Test;

import static io.rota.server.kv.Harness.assertError;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

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
        assertError(Error.Code.INVALID_ARGUMENT, h.put(client, 1, "k", "again"));
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
        h.run(Command.newBuilder().setSessionKeepAlive(SessionKeepAliveRequest.newBuilder().setClientId(kept)));
        h.nowMs += 1;
        assertError(Error.Code.SESSION_EXPIRED, h.put(idle, 1, "a", "2"));
        assertFalse(h.put(busy, 2, "a", "2").hasError());
        assertFalse(h.put(kept, 1, "b", "1").hasError());
        assertError(Error.Code.SESSION_EXPIRED,
                h.run(Command.newBuilder().setSessionKeepAlive(SessionKeepAliveRequest.newBuilder().setClientId(idle))));
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
                .setSession(io.rota.proto.SessionRef.newBuilder().setClientId(client).setSequence(sequence)
                        .setFirstIncomplete(firstIncomplete))
                .setPut(io.rota.proto.PutRequest.newBuilder().setKey(Harness.b(key)).setValue(Harness.b("v"))));
    }

    @Test
    void responsesBelowTheClientsFirstIncompleteSequenceAreForgottenAndLateCopiesRefused() {
        long client = h.register();
        CommandResult first = put(client, 1, 1, "a");
        put(client, 3, 1, "c");                          // 2 is still in flight
        assertEquals(first, put(client, 1, 1, "a"), "a retry of 1 is answered from memory");
        put(client, 4, 2, "d");                          // the client is done with 1 (thesis §6.3)
        assertError(Error.Code.INVALID_ARGUMENT, put(client, 1, 1, "a"));
        assertFalse(put(client, 2, 2, "b").hasError(), "2 was never applied: it is applied now, once");
        put(client, 5, 5, "e");
        assertError(Error.Code.INVALID_ARGUMENT, put(client, 2, 2, "b"));  // a late copy, after the client moved on
        assertEquals(1, h.get("b").getVersion());
        assertError(Error.Code.INVALID_ARGUMENT, put(client, 6, 7, "f"));  // first_incomplete above its own sequence
    }
}
