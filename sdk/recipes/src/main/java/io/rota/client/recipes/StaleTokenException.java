package io.rota.client.recipes;

/** A write carried a fencing token lower than one the resource already admitted: its holder lost the lock. */
public final class StaleTokenException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final long token;
    private final long highest;

    /**
     * Creates the exception.
     *
     * @param token   the rejected token
     * @param highest the highest token admitted before
     */
    public StaleTokenException(long token, long highest) {
        super("fencing token " + token + " is stale: token " + highest
                + " was already admitted, so a newer lock holder exists; stop and do not retry with this token");
        this.token = token;
        this.highest = highest;
    }

    /**
     * The rejected token.
     *
     * @return the token
     */
    public long token() {
        return token;
    }

    /**
     * The highest token admitted before.
     *
     * @return the token
     */
    public long highest() {
        return highest;
    }
}
