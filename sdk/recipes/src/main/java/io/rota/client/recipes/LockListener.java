package io.rota.client.recipes;

/**
 * Told once when a held lock is lost (see {@link LockHandle#onLost}). Called on a thread of the handle's own,
 * started when the lock is lost (or on the registering thread if it already was): a slow listener delays only
 * the other listeners of the same handle, never another lock's loss or safe-until, nor the client's callbacks.
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
