package io.rota.client;

import io.rota.proto.Error;
import io.rota.proto.Frame;
import io.rota.proto.Member;
import io.rota.proto.PutResponse;
import io.rota.proto.RegisterSessionResponse;
import io.rota.proto.ResponseHeader;
import io.rota.proto.SessionRef;
import io.rota.proto.StatusResponse;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Leader finding and retries against scripted members (no real cluster). */
class RetryAndHintTest {

    static Frame.Builder session(long clientId) {
        return Frame.newBuilder().setRegisterSessionResponse(RegisterSessionResponse.newBuilder().setClientId(clientId));
    }

    static Frame.Builder putOk(long revision) {
        return Frame.newBuilder().setPutResponse(PutResponse.newBuilder()
                .setHeader(ResponseHeader.newBuilder().setRevision(revision)));
    }

    static Frame.Builder error(Error.Code code, long leaderId, String leaderEndpoint) {
        return Frame.newBuilder().setError(Error.newBuilder().setCode(code).setMessage("scripted " + code)
                .setLeaderId(leaderId).setLeaderEndpoint(leaderEndpoint));
    }

    /** A leader that registers session 7 and acknowledges puts at revision 42. */
    static FakeMember leader() throws Exception {
        return new FakeMember(f -> f.hasRegisterSessionRequest() ? session(7) : putOk(42));
    }

    static List<SessionRef> puts(FakeMember m) {
        return m.received.stream().filter(Frame::hasPutRequest).map(Frame::getSession).toList();
    }

    @Test
    @DisplayName("NOT_LEADER with an endpoint: the write goes there, under the same session and sequence")
    void followsTheLeaderEndpointHint() throws Exception {
        try (FakeMember leader = leader();
             FakeMember hinting = new FakeMember(f -> f.hasRegisterSessionRequest() ? session(7)
                     : error(Error.Code.NOT_LEADER, 2, leader.endpoint()));
             RotaClient rota = RotaClient.connect(hinting.endpoint())) {
            assertEquals(42, rota.kv().put("k", "v").revision());
            SessionRef ref = SessionRef.newBuilder().setClientId(7).setSequence(1).setFirstIncomplete(1).build();
            assertEquals(List.of(ref), puts(hinting));
            assertEquals(List.of(ref), puts(leader));
        }
    }

    @Test
    @DisplayName("A follower's answer that names the leader: the next calls go to the leader, not through the follower")
    void aSuccessfulAnswerWithALeaderHintMovesTheNextCallsToTheLeader() throws Exception {
        try (FakeMember leader = leader();
             FakeMember follower = new FakeMember(f -> f.hasRegisterSessionRequest() ? session(7)
                     : putOk(41).setLeaderHint(leader.endpoint()));
             RotaClient rota = RotaClient.connect(follower.endpoint() + "," + leader.endpoint())) {
            assertEquals(41, rota.kv().put("k", "v1").revision());   // answered by the follower (forwarded)
            assertEquals(42, rota.kv().put("k", "v2").revision());   // then straight to the leader
            assertEquals(42, rota.kv().put("k", "v3").revision());
            assertEquals(1, puts(follower).size());
            assertEquals(2, puts(leader).size());
        }
    }

    @Test
    @DisplayName("A leader hint outside the configured endpoints is not followed: the list is the application's choice")
    void aLeaderHintOutsideTheConfiguredEndpointsIsIgnored() throws Exception {
        try (FakeMember leader = leader();
             FakeMember follower = new FakeMember(f -> f.hasRegisterSessionRequest() ? session(7)
                     : putOk(41).setLeaderHint(leader.endpoint()));
             RotaClient rota = RotaClient.connect(follower.endpoint())) {
            rota.kv().put("k", "v1");
            rota.kv().put("k", "v2");
            assertEquals(2, puts(follower).size());
            assertEquals(0, puts(leader).size());
        }
    }

    @Test
    @DisplayName("NOT_LEADER with only the leader's id: its client address comes from a Status call")
    void findsTheLeaderByStatusWhenTheHintHasOnlyAnId() throws Exception {
        try (FakeMember leader = leader()) {
            Member self = Member.newBuilder().setId(1).setClientAddress("127.0.0.1:1").build();
            Member lead = Member.newBuilder().setId(3).setClientAddress(leader.endpoint()).build();
            try (FakeMember follower = new FakeMember(f -> {
                if (f.hasRegisterSessionRequest()) {
                    return session(7);
                }
                if (f.hasStatusRequest()) {
                    return Frame.newBuilder().setStatusResponse(StatusResponse.newBuilder().setLeader(3)
                            .addMembers(self).addMembers(lead));
                }
                return error(Error.Code.NOT_LEADER, 3, "");
            }); RotaClient rota = RotaClient.connect(follower.endpoint())) {
                assertEquals(42, rota.kv().put("k", "v").revision());
                assertEquals(1, puts(leader).size());
                assertTrue(follower.received.stream().anyMatch(Frame::hasStatusRequest));
                rota.kv().put("k2", "v");
                assertEquals(2, puts(leader).size(), "the next write goes straight to the leader");
                assertEquals(1, puts(follower).size());
            }
        }
    }

    @Test
    @DisplayName("UNAVAILABLE, then success: the retry reuses the sequence; the next write takes the next one")
    void aRetryReusesTheSequence() throws Exception {
        AtomicInteger puts = new AtomicInteger();
        // Only puts count: the client's connection-state probe (a Status call while it is SUSPENDED) may come
        // in between, and must not use up one of the two scripted failures.
        try (FakeMember m = new FakeMember(f -> f.hasRegisterSessionRequest() ? session(9)
                : !f.hasPutRequest() ? Frame.newBuilder().setStatusResponse(StatusResponse.newBuilder())
                : puts.incrementAndGet() <= 2 ? error(Error.Code.UNAVAILABLE, 0, "") : putOk(5));
             RotaClient rota = RotaClient.connect(m.endpoint())) {
            rota.kv().put("a", "1");
            rota.kv().put("b", "2");
            assertEquals(List.of(1L, 1L, 1L, 2L), puts(m).stream().map(SessionRef::getSequence).toList());
            assertTrue(puts(m).stream().allMatch(s -> s.getClientId() == 9));
        }
    }

    @Test
    @DisplayName("a write whose sequence would pass the session's remembered window waits for an older one")
    void aWriteBeyondTheSessionWindowWaitsForAnOlderOneToEnd() throws Exception {
        // The cluster remembers 2 responses per session; the first write's first attempt is never answered and
        // its retry (after the 1 s attempt timeout) is refused for good, so it ends well inside the later
        // write's 10 s deadline, which also runs while that write waits (a deadline race made this flaky).
        AtomicInteger slowAttempts = new AtomicInteger();
        try (FakeMember m = new FakeMember(f -> f.hasRegisterSessionRequest()
                ? Frame.newBuilder().setRegisterSessionResponse(RegisterSessionResponse.newBuilder().setClientId(9)
                        .setRememberedResponses(2))
                : !f.getPutRequest().getKey().toStringUtf8().equals("slow") ? putOk(5)
                : slowAttempts.incrementAndGet() == 1 ? null : error(Error.Code.INVALID_ARGUMENT, 0, ""));
             RotaClient rota = RotaClient.builder().endpoints(m.endpoint()).callTimeout(Duration.ofSeconds(10))
                     .attemptTimeout(Duration.ofSeconds(1)).build()) {
            var slow = rota.kv().putAsync(bytes("slow"), bytes("1"), 0);
            rota.kv().put("a", "1");                                  // sequence 2: within 2 of sequence 1
            var late = rota.kv().putAsync(bytes("b"), bytes("1"), 0); // sequence 3 would be 2 past 1
            assertFalse(late.isDone(), "waits while sequence 1 may still be retried");
            assertTrue(puts(m).stream().allMatch(p -> p.getSequence() <= 2), "sequence 3 is not sent yet");
            assertThrows(Exception.class, slow::join);                // sequence 1 ends, refused on its retry
            late.get(10, java.util.concurrent.TimeUnit.SECONDS);
            SessionRef third = puts(m).get(puts(m).size() - 1);
            assertEquals(3, third.getSequence());
            assertEquals(3, third.getFirstIncomplete(), "nothing older is in flight any more");
        }
    }

    @Test
    @DisplayName("thesis §6.3, issue 31: a session that ends after an attempt that may have been applied fails the write"
            + " as outcome unknown (TIMEOUT); it is not re-sent under a new session")
    void aWriteThatMayHaveBeenAppliedIsNotResentAfterItsSessionEnds() throws Exception {
        AtomicInteger registrations = new AtomicInteger();
        AtomicInteger attempts = new AtomicInteger();
        // The first attempt is never answered (it may have been applied), the session is then evicted.
        try (FakeMember m = new FakeMember(f -> f.hasRegisterSessionRequest() ? session(7 + registrations.getAndIncrement())
                : !f.hasPutRequest() ? Frame.newBuilder().setStatusResponse(StatusResponse.newBuilder())
                : attempts.incrementAndGet() == 1 ? null
                : f.getSession().getClientId() == 7 ? error(Error.Code.SESSION_EXPIRED, 0, "") : putOk(5));
             RotaClient rota = RotaClient.builder().endpoints(m.endpoint()).callTimeout(Duration.ofSeconds(10))
                     .attemptTimeout(Duration.ofMillis(300)).build()) {
            RotaException e = assertThrows(RotaException.class, () -> rota.kv().put("k", "v"));
            assertEquals(RotaException.Code.TIMEOUT, e.code());
            assertTrue(e.getMessage().contains("outcome unknown"), e.getMessage());
            assertTrue(puts(m).stream().allMatch(p -> p.getClientId() == 7), "never re-sent: " + puts(m));
            assertEquals(2, puts(m).size());
        }
    }

    @Test
    @DisplayName("issue 31: SESSION_EXPIRED on a write's only attempt (not applied): re-sent under a new session,"
            + " with that session's secret")
    void aWriteRefusedForItsSessionAloneIsResentUnderANewOne() throws Exception {
        AtomicInteger registrations = new AtomicInteger();
        try (FakeMember m = new FakeMember(f -> f.hasRegisterSessionRequest()
                ? Frame.newBuilder().setRegisterSessionResponse(RegisterSessionResponse.newBuilder()
                        .setClientId(7 + registrations.get())
                        .setSecret(com.google.protobuf.ByteString.copyFromUtf8("secret-" + registrations.getAndIncrement())))
                : !f.hasPutRequest() ? Frame.newBuilder().setStatusResponse(StatusResponse.newBuilder())
                : f.getSession().getClientId() == 7 ? error(Error.Code.SESSION_EXPIRED, 0, "") : putOk(5));
             RotaClient rota = RotaClient.connect(m.endpoint())) {
            assertEquals(5, rota.kv().put("k", "v").revision());
            assertEquals(List.of(7L, 8L), puts(m).stream().map(SessionRef::getClientId).toList());
            assertEquals(List.of("secret-0", "secret-1"), puts(m).stream().map(p -> p.getSecret().toStringUtf8()).toList());
        }
    }

    @Test
    @DisplayName("issue 31: OUTCOME_UNKNOWN (the session no longer remembers the answer) is final: TIMEOUT, not retried")
    void anOutcomeUnknownIsFinal() throws Exception {
        try (FakeMember m = new FakeMember(f -> f.hasRegisterSessionRequest() ? session(7)
                : !f.hasPutRequest() ? Frame.newBuilder().setStatusResponse(StatusResponse.newBuilder())
                : error(Error.Code.OUTCOME_UNKNOWN, 0, ""));
             RotaClient rota = RotaClient.connect(m.endpoint())) {
            RotaException e = assertThrows(RotaException.class, () -> rota.kv().put("k", "v"));
            assertEquals(RotaException.Code.TIMEOUT, e.code());
            assertEquals(1, puts(m).size());
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }

    @Test
    @DisplayName("a member that is down is skipped; INVALID_ARGUMENT is final and not retried")
    void skipsADeadMemberAndDoesNotRetryAnInvalidArgument() throws Exception {
        int deadPort;
        try (ServerSocket s = new ServerSocket(0)) {
            deadPort = s.getLocalPort();
        }
        try (FakeMember m = new FakeMember(f -> f.hasRegisterSessionRequest() ? session(1)
                : error(Error.Code.INVALID_ARGUMENT, 0, ""));
             RotaClient rota = RotaClient.connect("127.0.0.1:" + deadPort + "," + m.endpoint())) {
            RotaException e = assertThrows(RotaException.class, () -> rota.kv().put("k", "v"));
            assertEquals(RotaException.Code.INVALID_ARGUMENT, e.code());
            assertTrue(e.getMessage().contains("scripted INVALID_ARGUMENT"), e.getMessage());
            assertEquals(1, puts(m).size());
        }
    }

    @Test
    @DisplayName("no member reachable: the call fails with TIMEOUT at its deadline, not before, not much after")
    void failsAtTheDeadlineWhenNothingAnswers() throws Exception {
        try (FakeMember silent = new FakeMember(f -> null);
             RotaClient rota = RotaClient.builder().endpoints(silent.endpoint())
                     .callTimeout(Duration.ofMillis(600)).attemptTimeout(Duration.ofMillis(200)).build()) {
            long start = System.nanoTime();
            RotaException e = assertThrows(RotaException.class, () -> rota.kv().get("k"));
            long ms = (System.nanoTime() - start) / 1_000_000;
            assertEquals(RotaException.Code.TIMEOUT, e.code());
            assertTrue(ms >= 550 && ms < 5_000, "took " + ms + " ms");
            assertTrue(silent.received.size() >= 2, "retried: " + silent.received.size());
        }
    }

    @Test
    @DisplayName("prefix ends follow etcd: last byte below 0xff incremented, trailing 0xff dropped, none -> \\0")
    void prefixEnd() {
        assertArrayEquals("a/c".getBytes(), Kv.prefixEnd("a/b".getBytes()));
        assertArrayEquals(new byte[] {'a' + 1}, Kv.prefixEnd(new byte[] {'a', (byte) 0xff}));
        assertArrayEquals(new byte[] {0}, Kv.prefixEnd(new byte[] {(byte) 0xff, (byte) 0xff}));
        assertArrayEquals(new byte[] {0}, Kv.prefixEnd(new byte[0]));
    }
}
