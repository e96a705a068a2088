package io.rota.client.recipes;

/**
 * What a {@link SingletonJob} does with fire times that passed while no instance ran them (all down, or
 * all busy longer than the period). A fire time is missed when it is more than the job's misfire grace in
 * the past when an instance gets to it. Missed fire times that are not run are recorded as SKIPPED.
 */
public enum MissedRunPolicy {
    /** Run the most recent due fire time once; skip the older missed ones (cron's usual catch-up). */
    RUN_ONCE,
    /** Run every due fire time, oldest first (the most recent {@link SingletonJob#MAX_CATCH_UP} of them). */
    RUN_ALL,
    /** Run none of the missed fire times; only fire times reached within the grace run. */
    SKIP
}
