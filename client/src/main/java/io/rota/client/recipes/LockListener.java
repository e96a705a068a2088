package io.rota.client.recipes;

/**
 * Told once when a held lock is lost (see {@link LockHandle#onLost}). Called on an SDK thread (the client's
 * callback thread or the recipes' timer): keep it short and do not block.
 */
@FunctionalInterface
public interface LockListener {

    /**
     * The lock can no longer be assumed held.
     *
     * @param lock   the handle that lost it
     * @param reason why, for humans
     */
    void onLost(LockHandle lock, String reason);
}
