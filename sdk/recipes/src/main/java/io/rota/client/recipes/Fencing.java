package io.rota.client.recipes;

import io.rota.client.CompareOp;
import io.rota.client.Txn;

/**
 * Fencing for data kept in Rota when the writer is not the {@link LockHandle} itself (another process that
 * was handed the holder's key and token, or a holder that restarted its client): the write applies only
 * while the holder key still exists with that create_revision, i.e. while the token is the current holder's.
 *
 * <pre>{@code
 * boolean applied = Fencing.guard(rota.kv().txn(), holderKey, token)
 *         .then(Op.put("reports/daily", report)).commit().succeeded();
 * }</pre>
 */
public final class Fencing {

    private Fencing() {
    }

    /**
     * Adds the holder guard to {@code txn}.
     *
     * @param txn       a transaction under construction
     * @param holderKey the lock holder's key ({@link LockHandle#key()})
     * @param token     the holder's fencing token ({@link LockHandle#fencingToken()})
     * @return {@code txn}, which now applies its {@code then} branch only while that holder holds the lock
     */
    public static Txn guard(Txn txn, String holderKey, long token) {
        return txn.ifCreateRevision(holderKey, CompareOp.EQUAL, token);
    }
}
