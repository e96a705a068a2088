package io.rota.client.recipes;

/**
 * The resource side of fencing, in memory: remembers the highest fencing token it has admitted and rejects
 * any lower one, so a lock holder that paused past its lease cannot overwrite the work of the holder that
 * came after it. Equal tokens are admitted (one holder writes many times). Thread-safe.
 *
 * <pre>{@code
 * FenceGuard fence = new FenceGuard();
 * void write(long token, Data d) {
 *     fence.check(token);          // throws StaleTokenException for a stale holder
 *     store(d);
 * }
 * }</pre>
 * The check and the write must be atomic together; for a database see {@link JdbcFencing}, for data in Rota
 * {@link LockHandle#guardedTxn()}.
 */
public final class FenceGuard {

    /** The highest token admitted so far; only grows. */
    private long highest;

    /** A guard that has admitted nothing yet. */
    public FenceGuard() {
    }

    /**
     * Admits {@code token} if it is at least the highest admitted so far (and remembers it).
     *
     * @param token a lock's fencing token
     * @return true if admitted, false if stale
     */
    public synchronized boolean admit(long token) {
        if (token < highest) {
            return false;
        }
        highest = token;
        return true;
    }

    /**
     * Admits {@code token} or throws.
     *
     * @param token a lock's fencing token
     * @throws StaleTokenException if a higher token was admitted before
     */
    public synchronized void check(long token) {
        if (!admit(token)) {
            throw new StaleTokenException(token, highest);
        }
    }

    /**
     * The highest token admitted so far.
     *
     * @return the token, 0 if none
     */
    public synchronized long highest() {
        return highest;
    }
}
