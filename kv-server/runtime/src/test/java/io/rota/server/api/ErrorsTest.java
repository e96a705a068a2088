package io.rota.server.api;

import io.rota.proto.Error;
import io.rota.raft.node.RaftException;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.CompletionException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The server's one error map: the driver's codes as the protocol's, and the typed retry-after. */
class ErrorsTest {

    @Test
    @DisplayName("every RaftException code maps to a protocol code, and the message travels with it")
    void everyRaftCodeMaps() {
        Map<RaftException.Code, Error.Code> expected = new EnumMap<>(RaftException.Code.class);
        expected.put(RaftException.Code.NOT_LEADER, Error.Code.NOT_LEADER);
        expected.put(RaftException.Code.UNAVAILABLE, Error.Code.UNAVAILABLE);
        expected.put(RaftException.Code.NO_LEADER, Error.Code.UNAVAILABLE);
        expected.put(RaftException.Code.TIMEOUT, Error.Code.TIMEOUT);
        expected.put(RaftException.Code.BUSY, Error.Code.UNAVAILABLE);
        expected.put(RaftException.Code.STOPPED, Error.Code.UNAVAILABLE);
        for (RaftException.Code code : RaftException.Code.values()) {
            Error.Builder error = Errors.fromRaft(new RaftException(code, "why " + code));
            assertEquals(expected.get(code), error.getCode(), "a row for " + code);
            assertTrue(error.getMessage().contains("why " + code), error.getMessage());
        }
    }

    @Test
    @DisplayName("a member that gave up retrying an UNAVAILABLE tells the client its retry interval as retry-after")
    void gaveUpSetsRetryAfterOnUnavailableOnly() {
        Duration tick = Duration.ofMillis(100);
        Error noLeader = Frames.error(Error.Code.UNAVAILABLE, "no leader is known");
        assertEquals(100, Errors.gaveUp(noLeader, tick).getRetryAfterMs());
        assertEquals("no leader is known", Errors.gaveUp(noLeader, tick).getMessage());

        Error full = noLeader.toBuilder().setRetryAfterMs(1_000).build();
        assertSame(full, Errors.gaveUp(full, tick), "a retry-after already said stands");

        Error timeout = Frames.error(Error.Code.TIMEOUT, "no quorum in time");
        assertSame(timeout, Errors.gaveUp(timeout, tick), "a TIMEOUT may have been applied: no advice to wait");
    }

    @Test
    @DisplayName("one unwrap: a CompletionException's cause, anything else as it is")
    void unwrap() {
        RaftException busy = new RaftException(RaftException.Code.BUSY, "full");
        assertSame(busy, Errors.unwrap(new CompletionException(busy)));
        assertSame(busy, Errors.unwrap(busy));
        assertTrue(Errors.isRaft(new CompletionException(busy), RaftException.Code.BUSY));
    }

    @Test
    @DisplayName("a refused membership change is MEMBERSHIP_REFUSED with the core's reason; retry-after when it passes with time")
    void everyMembershipRefusalCarriesItsReason() {
        for (io.rota.raft.core.ConfChangeResult.Reason reason : io.rota.raft.core.ConfChangeResult.Reason.values()) {
            io.rota.raft.node.ConfChangeRefusedException e = new io.rota.raft.node.ConfChangeRefusedException(
                    io.rota.raft.core.ConfChange.promote(4), reason);
            Error error = Errors.of(new CompletionException(e), null);
            assertEquals(Error.Code.MEMBERSHIP_REFUSED, error.getCode());
            assertEquals(reason.name(), error.getMembershipRefusal());
            assertEquals(e.retryable(), error.getMembershipRetryable());
            assertEquals(e.retryable() ? Errors.MEMBERSHIP_RETRY_AFTER_MS : 0, error.getRetryAfterMs());
        }
    }

    @Test
    @DisplayName("issue 32: QUORUM_AT_RISK says how many voters answer, how many are needed, who answers, and what to do; no retry-after")
    void quorumAtRiskSaysWhoAnswersAndWhatToDo() {
        io.rota.raft.node.ConfChangeRefusedException e = new io.rota.raft.node.ConfChangeRefusedException(
                io.rota.raft.core.ConfChange.remove(2), io.rota.raft.core.ConfChangeResult.Reason.QUORUM_AT_RISK,
                java.util.Set.of(1L, 2L), io.rota.raft.core.Configuration.of(1L, 2L, 3L));
        Error error = Errors.of(new CompletionException(e), null);
        assertEquals("remove 2 refused: the new configuration would have 2 voters, of which 1 answers (1), short of"
                + " the 2 votes it needs to commit anything; members answering within an election timeout: 1, 2. "
                + Errors.QUORUM_AT_RISK_ADVICE, error.getMessage());
        assertEquals(0, error.getRetryAfterMs());
        assertEquals(false, error.getMembershipRetryable());
    }
}
