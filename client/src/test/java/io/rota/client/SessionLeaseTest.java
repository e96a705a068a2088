package io.rota.client;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The shared session lease's loss bookkeeping, without a server (Leases.session is tested in kv-server's LockCycleTest). */
class SessionLeaseTest {

    private static SessionLease session() {
        return new SessionLease(new Lease(0x2a, Duration.ofSeconds(10)), 123L);
    }

    @Test
    @DisplayName("a loss tells every listener once, later losses nothing; a listener added after the loss is told at once")
    void lossIsToldOnce() {
        SessionLease s = session();
        List<String> told = new ArrayList<>();
        s.addListener(why -> told.add("a:" + why.code()));
        s.addListener(why -> told.add("b:" + why.code()));
        assertFalse(s.isLost());
        s.invalidate(new RotaException(RotaException.Code.LEASE_NOT_FOUND, "gone"));
        s.lose(new RotaException(RotaException.Code.UNAVAILABLE, "again"));
        assertTrue(s.isLost());
        assertEquals(2, told.size());
        assertTrue(told.containsAll(List.of("a:LEASE_NOT_FOUND", "b:LEASE_NOT_FOUND")));
        s.addListener(why -> told.add("late:" + why.code()));
        assertEquals("late:LEASE_NOT_FOUND", told.get(2));
    }

    @Test
    @DisplayName("a removed listener is not told (a released lock does not hear of its session's later loss)")
    void removedListenerIsNotTold() {
        SessionLease s = session();
        List<String> told = new ArrayList<>();
        java.util.function.Consumer<RotaException> listener = why -> told.add("removed");
        s.addListener(listener);
        s.removeListener(listener);
        s.lose(new RotaException(RotaException.Code.LEASE_NOT_FOUND, "gone"));
        assertTrue(told.isEmpty());
        assertEquals(0x2a, s.leaseId());
        assertEquals(123L, s.grantSentNanos());
        assertEquals(Duration.ofSeconds(10), s.ttl());
    }

    @Test
    @DisplayName("issue 31: a session may have expired once no keep-alive (nor its grant) sent within the last TTL was confirmed")
    void mayHaveExpiredAfterAWholeTtlWithoutAConfirmation() {
        SessionLease s = session();   // grant sent at 123, TTL 10 s
        long ttl = Duration.ofSeconds(10).toNanos();
        assertFalse(s.mayHaveExpired(123 + ttl - 1));
        assertTrue(s.mayHaveExpired(123 + ttl));
        long[] confirmed = {123 + ttl / 2};
        s.keepAlive(new KeepAlive() {
            @Override
            public long leaseId() {
                return 0x2a;
            }

            @Override
            public boolean isActive() {
                return true;
            }

            @Override
            public java.util.OptionalLong lastConfirmedSendNanos() {
                return java.util.OptionalLong.of(confirmed[0]);
            }

            @Override
            public void close() {
            }
        });
        assertFalse(s.mayHaveExpired(123 + ttl), "a keep-alive sent at half the TTL was confirmed");
        assertTrue(s.mayHaveExpired(confirmed[0] + ttl));
    }
}
