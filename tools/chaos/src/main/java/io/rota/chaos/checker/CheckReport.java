package io.rota.chaos.checker;

/**
 * The judgement of a workload's own property checker ({@link LockChecker}, {@link LeaseChecker}) on a history.
 *
 * @param verdict YES if the property holds, NO on any violation
 * @param report  the human-readable figures and the violations found
 */
public record CheckReport(Verdict verdict, String report) {
}
