package io.rota.chaos.workload;

import io.rota.chaos.checker.Verdict;

/**
 * A workload's judgement of a history.
 *
 * @param verdict            linearizable (or the workload's property holds): yes, no or unknown
 * @param lostAcknowledged   acknowledged writes missing from the final state (must be 0)
 * @param report             the human-readable details (the offending window on a violation)
 */
public record WorkloadResult(Verdict verdict, long lostAcknowledged, String report) {
}
