package io.rota.chaos.workload;

import io.rota.client.RotaException;

/**
 * How a failed client call is recorded. A {@code fail} in the history is a promise that the operation did
 * not take effect, so it is given only when the error proves it; everything else is {@code info}
 * (indeterminate). In particular:
 * <ul>
 *   <li>TIMEOUT, UNAVAILABLE, NOT_LEADER (after the SDK's own retries) and any unexpected exception: an
 *       earlier attempt may have been applied;</li>
 *   <li>INVALID_ARGUMENT: the harness never sends an invalid request on purpose, so one is not taken as proof
 *       (a retry whose remembered answer was dropped comes back from the SDK as TIMEOUT "outcome unknown",
 *       issue 31);</li>
 *   <li>SESSION_EXPIRED, LEASE_NOT_FOUND and COMPACTED say that <i>this</i> attempt was not applied, not that
 *       no earlier attempt of the same call was.</li>
 * </ul>
 * Only REQUEST_TOO_LARGE is definite: the size check refuses every attempt of the call alike.
 */
final class Outcomes {

    private Outcomes() {
    }

    /**
     * Whether a failed call certainly did not take effect.
     *
     * @param e what the call threw
     * @return true only for an error every attempt would have met before being applied
     */
    static boolean certainlyNotApplied(RuntimeException e) {
        return e instanceof RotaException r && r.code() == RotaException.Code.REQUEST_TOO_LARGE;
    }
}
