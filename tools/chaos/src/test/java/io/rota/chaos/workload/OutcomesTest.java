package io.rota.chaos.workload;

import io.rota.client.RotaException;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Only an error that every attempt of a call would meet before being applied makes a definite failure. */
class OutcomesTest {

    private static RotaException error(RotaException.Code code, String message) {
        return new RotaException(code, message);
    }

    @Test
    void aRetryOlderThanTheRememberedWindowIsIndeterminate() {
        assertFalse(Outcomes.certainlyNotApplied(error(RotaException.Code.INVALID_ARGUMENT,
                "sequence 41 is older than the remembered window; its outcome is unknown")));
    }

    @Test
    void timeoutsLostConnectionsAndRefusalsOfALaterAttemptAreIndeterminate() {
        for (RotaException.Code code : new RotaException.Code[]{RotaException.Code.TIMEOUT,
                RotaException.Code.UNAVAILABLE, RotaException.Code.NOT_LEADER, RotaException.Code.SESSION_EXPIRED,
                RotaException.Code.LEASE_NOT_FOUND, RotaException.Code.COMPACTED}) {
            assertFalse(Outcomes.certainlyNotApplied(error(code, "x")), code.name());
        }
        assertFalse(Outcomes.certainlyNotApplied(new IllegalStateException("unexpected")));
    }

    @Test
    void aRequestTooLargeForEveryAttemptIsADefiniteFailure() {
        assertTrue(Outcomes.certainlyNotApplied(error(RotaException.Code.REQUEST_TOO_LARGE, "value too large")));
    }
}
