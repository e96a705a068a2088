package io.rota.chaos.checker;

/** The answer of the linearizability checker. */
public enum Verdict {
    /** A linearization exists. */
    YES,
    /** No linearization exists: the history shows a consistency violation. */
    NO,
    /** The search ran out of its step or memory budget before deciding. */
    UNKNOWN;

    /**
     * Combines the verdicts of independent keys: any NO wins, then any UNKNOWN.
     *
     * @param other another key's verdict
     * @return the verdict of both together
     */
    public Verdict and(Verdict other) {
        if (this == NO || other == NO) {
            return NO;
        }
        return this == UNKNOWN || other == UNKNOWN ? UNKNOWN : YES;
    }
}
