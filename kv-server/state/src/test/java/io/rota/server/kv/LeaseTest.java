package io.rota.server.kv;

import io.rota.proto.ClockStamp;
import io.rota.proto.Command;
import io.rota.proto.CommandResult;
import io.rota.proto.Error;
import io.rota.proto.Event;
import io.rota.proto.LeaseCheckpointRequest;
import io.rota.proto.LeaseGrantRequest;
import io.rota.proto.LeaseKeepAliveRequest;
import io.rota.proto.LeaseTimeToLiveRequest;
import io.rota.proto.LeaseTimeToLiveResponse;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static io.rota.server.kv.Harness.assertError;
import static io.rota.server.kv.Harness.b;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Leases in the state machine: time comes only from the log; revoke and expiry delete keys in one revision. */
class LeaseTest {

    private final Harness h = new Harness();

    private LeaseTimeToLiveResponse ttl(long id) {
        return h.sm.timeToLive(LeaseTimeToLiveRequest.newBuilder().setID(id).setKeys(true).build());
    }

    /** Let log time pass: an entry stamped {@code ms} later by the same leader. */
    private void passMs(long ms) {
        h.nowMs += ms;
        h.put("clock", "tick");
    }

    private CommandResult keepAlive(long lease) {
        return h.run(Command.newBuilder().setLeaseKeepAlive(LeaseKeepAliveRequest.newBuilder().setID(lease)));
    }

    @Test
    void grantAssignsDeterministicIdsAndTakesTheTtlAsLogged() {
        long first = h.grant(10);
        assertEquals(h.index, first);    // the id is the index of the granting entry
        CommandResult explicit = h.run(Command.newBuilder().setLeaseGrant(LeaseGrantRequest.newBuilder().setID(3).setTTL(1)));
        assertEquals(3, explicit.getLeaseGrant().getID());
        // No minimum here: the leader raised the TTL before proposing, so no member's flags decide it
        // (issue 11, hole 3; RequestRouter raises it, ServerSimulationTest checks replicas agree).
        assertEquals(1, explicit.getLeaseGrant().getTTL());
        assertError(Error.Code.INVALID_ARGUMENT,
                h.run(Command.newBuilder().setLeaseGrant(LeaseGrantRequest.newBuilder().setTTL(0))));
        assertError(Error.Code.INVALID_ARGUMENT,
                h.run(Command.newBuilder().setLeaseGrant(LeaseGrantRequest.newBuilder().setID(3).setTTL(5))));
        assertEquals(5, h.grant(10));    // the id is its entry index (3 and 4 were refused grants)
        assertEquals(1, h.sm.revision());   // granting writes no revision
        assertEquals(List.of(1L, 3L, 5L), h.sm.leases().getLeasesList().stream().map(l -> l.getID()).toList());
    }

    @Test
    @DisplayName("issue 31: a grant or keep-alive whose stamp does not count (another term, no leader) is refused; log time may lag there")
    void aKeepAliveWithoutACountingStampIsRefusedAndMovesNoDeadline() {
        long lease = h.grant(10);
        passMs(4_000);
        long remaining = ttl(lease).getTTL();
        // The leader of term 1 stamped it, but it was appended in term 2 (it lost and won again between): its
        // elapsed time is not this term's, so log time stands still, however late the keep-alive really came.
        h.term = 2;
        ClockStamp old = ClockStamp.newBuilder().setTerm(1).setElapsedMs(h.nowMs + 60_000).build();
        assertError(Error.Code.UNAVAILABLE, h.run(Command.newBuilder().setStamp(old)
                .setLeaseKeepAlive(LeaseKeepAliveRequest.newBuilder().setID(lease))));
        assertEquals(remaining, ttl(lease).getTTL(), "a refused keep-alive moves no deadline");
        assertError(Error.Code.UNAVAILABLE, h.run(Command.newBuilder().setStamp(ClockStamp.getDefaultInstance())
                .setLeaseGrant(LeaseGrantRequest.newBuilder().setTTL(10))));
        assertEquals(1, h.sm.leases().getLeasesCount(), "nothing granted");
        // Stamped by the leader of the entry's own term: counted, and the keep-alive renews.
        assertEquals(10, keepAlive(lease).getLeaseKeepAlive().getTTL());
        assertEquals(10, ttl(lease).getTTL());
    }

    @Test
    void revokeDeletesAllTheLeaseKeysInOneRevision() {
        long lease = h.grant(10);
        h.put("a", "1", lease);
        h.put("b", "2", lease);
        h.put("free", "3");
        List<Long> revisions = new ArrayList<>();
        List<Event> events = new ArrayList<>();
        h.sm.setListener((rev, evs) -> {
            revisions.add(rev);
            events.addAll(evs);
        });
        long before = h.sm.revision();
        CommandResult r = h.revoke(lease);
        assertEquals(before + 1, r.getLeaseRevoke().getHeader().getRevision());
        assertEquals(List.of(before + 1), revisions);
        assertEquals(List.of(Event.EventType.DELETE, Event.EventType.DELETE), events.stream().map(Event::getType).toList());
        assertNull(h.get("a"));
        assertNull(h.get("b"));
        assertEquals("3", h.get("free").getValue().toStringUtf8());
        assertError(Error.Code.LEASE_NOT_FOUND, h.revoke(lease));
    }

    @Test
    void revokingALeaseWithoutKeysWritesNoRevision() {
        long lease = h.grant(10);
        h.revoke(lease);
        assertEquals(1, h.sm.revision());
    }

    @Test
    void putWithAnUnknownLeaseFailsTyped() {
        assertError(Error.Code.LEASE_NOT_FOUND, h.put("k", "v", 42));
        assertEquals(1, h.sm.revision());
    }

    @Test
    void reattachingAKeyMovesItToTheNewLease() {
        long one = h.grant(10);
        long two = h.grant(10);
        h.put("k", "v", one);
        h.put("k", "v", two);
        assertEquals(List.of(), ttl(one).getKeysList());
        assertEquals(List.of(b("k")), ttl(two).getKeysList());
        h.revoke(one);
        assertEquals(two, h.get("k").getLease());
    }

    @Test
    void expireCommandRevokesTheLeaseAndItsKeys() {
        long lease = h.grant(10);
        h.put("lock", "me", lease);
        h.nowMs += 10_000;
        CommandResult r = h.expire(lease);
        assertEquals(h.sm.revision(), r.getLeaseExpire().getHeader().getRevision());
        assertNull(h.get("lock"));
        assertEquals(List.of(), h.sm.leases().getLeasesList());
    }

    @Test
    void timeToLiveIsComputedFromLogTime() {
        long lease = h.grant(10);                 // deadline = grant's log time + 10 s
        assertEquals(10, ttl(lease).getTTL());
        assertEquals(10, ttl(lease).getGrantedTTL());
        passMs(6_500);
        assertEquals(4, ttl(lease).getTTL());     // 3.5 s left, rounded up
        passMs(60_000);
        assertEquals(0, ttl(lease).getTTL());     // past its deadline; only the leader's Expire ends it

        keepAlive(lease);
        assertEquals(10, ttl(lease).getTTL());

        long renewal = h.index;
        passMs(1_000);
        h.run(Command.newBuilder().setLeaseCheckpoint(LeaseCheckpointRequest.newBuilder().addCheckpoints(
                LeaseCheckpointRequest.Checkpoint.newBuilder().setID(lease).setRemainingMs(3_000).setRenewal(renewal))));
        assertEquals(3, ttl(lease).getTTL());
        passMs(2_500);
        assertEquals(1, ttl(lease).getTTL());
    }

    @Test
    @DisplayName("issue 11, hole 1: an expiry decided before a keep-alive does not apply after it")
    void anExpiryDecidedBeforeAKeepAliveDoesNotApplyAfterIt() {
        long lease = h.grant(10);
        long granted = h.index;
        h.put("lock", "holder", lease);
        passMs(10_000);
        // The leader's timer saw the grant's deadline pass and proposed an expiry of that renewal; a
        // keep-alive already in the log applies first and is answered TTL > 0 ...
        CommandResult kept = keepAlive(lease);
        assertEquals(10, kept.getLeaseKeepAlive().getTTL());
        // ... so the expiry, which judged the older renewal, deletes nothing.
        CommandResult expired = h.expire(lease, granted);
        assertTrue(expired.getLeaseExpire().getRenewedSince());
        assertEquals("holder", h.get("lock").getValue().toStringUtf8());
        assertEquals(10, ttl(lease).getTTL());
        // An expiry of the renewal that is current does.
        assertFalse(h.expire(lease).getLeaseExpire().getRenewedSince());
        assertNull(h.get("lock"));
    }

    @Test
    @DisplayName("a checkpoint measured before a keep-alive does not pull the kept-alive deadline back")
    void aCheckpointOfAnOlderRenewalIsSkipped() {
        long lease = h.grant(10);
        long granted = h.index;
        passMs(9_000);
        keepAlive(lease);                          // deadline now + 10 s
        h.run(Command.newBuilder().setLeaseCheckpoint(LeaseCheckpointRequest.newBuilder().addCheckpoints(
                LeaseCheckpointRequest.Checkpoint.newBuilder().setID(lease).setRemainingMs(500).setRenewal(granted))));
        assertEquals(10, ttl(lease).getTTL(), "the stale checkpoint (0.5 s left of the grant) was skipped");
    }

    @Test
    @DisplayName("issue 11, hole 2: log time counts one leader's monotonic time, never a wall clock or a gap")
    void logTimeCountsOnlyLeadersElapsedTime() {
        long lease = h.grant(10);
        long logTime = h.sm.nowMs();
        // A new leader (term 2) whose stamps start from its own start: an hour of wall-clock skew, or the
        // time between the two leaders, cannot enter; only what it measured since it began to lead.
        h.term = 2;
        h.nowMs = 2_000;
        keepAlive(lease);
        assertEquals(logTime + 2_000, h.sm.nowMs());
        assertEquals(10, ttl(lease).getTTL());
        // A stamp from another term (taken while this member led before) is not counted.
        h.run(Command.newBuilder().setPut(io.rota.proto.PutRequest.newBuilder().setKey(b("x")))
                .setStamp(io.rota.proto.ClockStamp.newBuilder().setTerm(1).setElapsedMs(3_600_000)));
        assertEquals(logTime + 2_000, h.sm.nowMs());
        // Within a term, a stamp that went back (taken earlier, appended later) does not move time back.
        h.nowMs = 1_000;
        h.put("y", "1");
        assertEquals(logTime + 2_000, h.sm.nowMs());
    }

    @Test
    void keepAliveAndTimeToLiveOfAnUnknownLeaseAreTyped() {
        assertError(Error.Code.LEASE_NOT_FOUND, keepAlive(7));
        StoreException e = assertThrows(StoreException.class, () -> ttl(7));
        assertEquals(Error.Code.LEASE_NOT_FOUND, e.error().getCode());
    }

    @Test
    void leaseTableIsBounded() {
        Harness small = new Harness(Harness.LIMITS.toBuilder().maxLeases(2).build());
        small.grant(5);
        small.grant(5);
        CommandResult full = small.run(Command.newBuilder().setLeaseGrant(LeaseGrantRequest.newBuilder().setTTL(5)));
        assertError(Error.Code.UNAVAILABLE, full);
        assertEquals(StoreException.FULL_RETRY_AFTER_MS, full.getError().getRetryAfterMs(), "a typed retry-after");
        assertError(Error.Code.INVALID_ARGUMENT,
                small.run(Command.newBuilder().setLeaseGrant(LeaseGrantRequest.newBuilder().setTTL(3601))));
    }
}
