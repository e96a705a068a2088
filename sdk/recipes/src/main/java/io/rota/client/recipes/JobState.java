package io.rota.client.recipes;

/**
 * The states of one attempt at one fire time of a {@link SingletonJob}:
 * <pre>
 *   CLAIMED ──► RUNNING ──► DONE | FAILED
 *      │           │
 *      └───────────┴──► ABANDONED   (its instance's lease expired; another instance re-runs the fire time)
 *   SKIPPED                          (a missed fire time the policy did not run)
 * </pre>
 */
public enum JobState {
    /** An instance holds the job's lock and took this fire time. */
    CLAIMED,
    /** The task runs. */
    RUNNING,
    /** The task returned normally. Terminal for the fire time. */
    DONE,
    /** The task threw. Terminal for the fire time (not retried). */
    FAILED,
    /** The instance died (lost its lease) while CLAIMED or RUNNING; a later attempt re-runs the fire time. */
    ABANDONED,
    /** Missed and not run, by the {@link MissedRunPolicy}. Terminal for the fire time. */
    SKIPPED;

    /**
     * Whether the fire time is settled by an attempt in this state.
     *
     * @return true for DONE, FAILED and SKIPPED
     */
    public boolean settlesFireTime() {
        return this == DONE || this == FAILED || this == SKIPPED;
    }
}
