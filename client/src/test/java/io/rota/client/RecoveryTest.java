package io.rota.client;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.EnumMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The one retry classification: a row per RotaException code, shared by calls and watches. */
class RecoveryTest {

    @Test
    @DisplayName("every code is classified: UNAVAILABLE/TIMEOUT another member, NOT_LEADER the leader, SESSION_EXPIRED a new session, INVALID_AUTH_TOKEN a new login, the rest final")
    void everyCodeHasARow() {
        Map<RotaException.Code, Recovery> expected = new EnumMap<>(RotaException.Code.class);
        expected.put(RotaException.Code.UNAVAILABLE, Recovery.ANOTHER_MEMBER);
        expected.put(RotaException.Code.TIMEOUT, Recovery.ANOTHER_MEMBER);
        expected.put(RotaException.Code.NOT_LEADER, Recovery.FOLLOW_LEADER);
        expected.put(RotaException.Code.SESSION_EXPIRED, Recovery.NEW_SESSION);
        expected.put(RotaException.Code.COMPACTED, Recovery.FAIL);
        expected.put(RotaException.Code.LEASE_NOT_FOUND, Recovery.FAIL);
        expected.put(RotaException.Code.REQUEST_TOO_LARGE, Recovery.FAIL);
        expected.put(RotaException.Code.INVALID_ARGUMENT, Recovery.FAIL);
        expected.put(RotaException.Code.MEMBERSHIP_REFUSED, Recovery.FAIL);
        expected.put(RotaException.Code.NO_SPACE, Recovery.FAIL);

        expected.put(RotaException.Code.PERMISSION_DENIED, Recovery.FAIL);
        expected.put(RotaException.Code.AUTH_FAILED, Recovery.FAIL);
        expected.put(RotaException.Code.INVALID_AUTH_TOKEN, Recovery.NEW_TOKEN);
        expected.put(RotaException.Code.AUTH_NOT_ENABLED, Recovery.FAIL);
        for (RotaException.Code code : RotaException.Code.values()) {
            assertEquals(expected.get(code), Recovery.of(code), "a row for " + code);
        }
    }

    @Test
    @DisplayName("without a session, only trying another member or the leader is a retry")
    void retries() {
        assertTrue(Recovery.ANOTHER_MEMBER.retries());
        assertTrue(Recovery.FOLLOW_LEADER.retries());
        assertFalse(Recovery.NEW_SESSION.retries(), "a call or watch without a session cannot renew one");
        assertFalse(Recovery.FAIL.retries());
        assertFalse(Recovery.NEW_TOKEN.retries(), "a login is the retrier's, with credentials only");
    }
}
