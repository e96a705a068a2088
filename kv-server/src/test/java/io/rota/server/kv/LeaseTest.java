package io.rota.server.kv;

import io.rota.proto.Command;
import io.rota.proto.CommandResult;
import io.rota.proto.Error;
import io.rota.proto.Event;
import io.rota.proto.LeaseCheckpointRequest;
import io.rota.proto.LeaseGrantRequest;
import io.rota.proto.LeaseKeepAliveRequest;
import io.rota.proto.LeaseTimeToLiveRequest;
import io.rota.proto.LeaseTimeToLiveResponse;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static io.rota.server.kv.Harness.assertError;
import static io.rota.server.kv.Harness.b;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Leases in the state machine: time comes only from the log; revoke and expiry delete keys in one revision. */
class LeaseTest {

    private final Harness h = new Harness();

    private LeaseTimeToLiveResponse ttl(long id, long nowMs) {
        return h.sm.timeToLive(LeaseTimeToLiveRequest.newBuilder().setID(id).setKeys(true).build(), nowMs);
    }

    @Test
    void grantAssignsDeterministicIdsAndRaisesTtlToTheMinimum() {
        long first = h.grant(10);
        assertEquals(h.index, first);    // the id is the index of the granting entry
        CommandResult explicit = h.run(Command.newBuilder().setLeaseGrant(LeaseGrantRequest.newBuilder().setID(3).setTTL(1)));
        assertEquals(3, explicit.getLeaseGrant().getID());
        assertEquals(2, explicit.getLeaseGrant().getTTL());   // min 1500 ms -> 2 s
        assertError(Error.Code.INVALID_ARGUMENT,
                h.run(Command.newBuilder().setLeaseGrant(LeaseGrantRequest.newBuilder().setID(3).setTTL(5))));
        assertEquals(4, h.grant(10));    // index 3 is taken by the explicit lease: the next free id
        assertEquals(1, h.sm.revision());   // granting writes no revision
        assertEquals(List.of(1L, 3L, 4L), h.sm.leases().getLeasesList().stream().map(l -> l.getID()).toList());
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
        assertEquals(List.of(), ttl(one, 0).getKeysList());
        assertEquals(List.of(b("k")), ttl(two, 0).getKeysList());
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
        long granted = h.nowMs;
        assertEquals(10, ttl(lease, granted).getTTL());
        assertEquals(10, ttl(lease, granted).getGrantedTTL());
        assertEquals(4, ttl(lease, granted + 6_500).getTTL());   // 3.5 s left, rounded up
        assertEquals(0, ttl(lease, granted + 60_000).getTTL());  // past its deadline; only Expire ends it

        h.nowMs = granted + 8_000;
        h.run(Command.newBuilder().setLeaseKeepAlive(LeaseKeepAliveRequest.newBuilder().setID(lease)));
        assertEquals(10, ttl(lease, h.nowMs).getTTL());
        // An earlier caller clock never reads earlier than the log time already applied.
        assertEquals(10, ttl(lease, 0).getTTL());

        h.nowMs += 1_000;
        h.run(Command.newBuilder().setLeaseCheckpoint(LeaseCheckpointRequest.newBuilder().addCheckpoints(
                LeaseCheckpointRequest.Checkpoint.newBuilder().setID(lease).setRemainingMs(3_000))));
        assertEquals(3, ttl(lease, h.nowMs).getTTL());
        assertEquals(1, ttl(lease, h.nowMs + 2_500).getTTL());
    }

    @Test
    void logTimeNeverRunsBackwards() {
        long lease = h.grant(10);
        long granted = h.nowMs;
        h.nowMs = granted - 5_000;               // a new leader whose clock is behind
        h.run(Command.newBuilder().setLeaseKeepAlive(LeaseKeepAliveRequest.newBuilder().setID(lease)));
        assertEquals(granted, h.sm.nowMs());
        assertEquals(10, ttl(lease, granted).getTTL());
    }

    @Test
    void keepAliveAndTimeToLiveOfAnUnknownLeaseAreTyped() {
        assertError(Error.Code.LEASE_NOT_FOUND,
                h.run(Command.newBuilder().setLeaseKeepAlive(LeaseKeepAliveRequest.newBuilder().setID(7))));
        StoreException e = assertThrows(StoreException.class, () -> ttl(7, 0));
        assertEquals(Error.Code.LEASE_NOT_FOUND, e.error().getCode());
    }

    @Test
    void leaseTableIsBounded() {
        Harness small = new Harness(new Limits(64, 256, 16, 1000, 50, 2, 1500, 3600, 8, 60_000, 4));
        small.grant(5);
        small.grant(5);
        assertError(Error.Code.UNAVAILABLE,
                small.run(Command.newBuilder().setLeaseGrant(LeaseGrantRequest.newBuilder().setTTL(5))));
        assertError(Error.Code.INVALID_ARGUMENT,
                small.run(Command.newBuilder().setLeaseGrant(LeaseGrantRequest.newBuilder().setTTL(3601))));
    }
}
