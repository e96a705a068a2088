package io.rota.client.recipes;

/**
 * The states of a once-record: {@code (absent) → CLAIMED → DONE | FAILED}. A CLAIMED record is attached to
 * its claimer's lease, so it vanishes (and can be claimed again) if the claimer dies; DONE and FAILED are
 * kept for the retention time.
 */
public enum OnceState {
    /** Someone claimed it and works on it now. */
    CLAIMED,
    /** The work was done; a claim never succeeds again (until the record's retention ends). */
    DONE,
    /** The work failed; a claim succeeds again only with {@link OnceOptions#retryFailed()}. */
    FAILED
}
