package io.rota.client.recipes;

/**
 * Told when this contender gains or loses leadership of an {@link Election}: {@code gained} on the
 * campaigning thread, {@code lost} on a thread of the campaign's own (as {@link LockListener}).
 */
public interface ElectionListener {

    /**
     * This contender was elected.
     *
     * @param leader the leadership, with its epoch
     */
    void gained(Leader leader);

    /**
     * This contender lost leadership without resigning: its lease expired or was revoked, its key was
     * deleted, or safe-until passed without a confirmed keep-alive.
     *
     * @param reason why, for humans
     */
    void lost(String reason);
}
