package io.rota.client;

/**
 * Told when a {@link RotaClient}'s {@link ConnectionState} changes. Register it with
 * {@link RotaClient#addConnectionStateListener}.
 *
 * <p>Listeners run on the client's callback thread, one at a time, in the order the changes happened and
 * never while the client holds a lock; a slow listener delays other listeners, never the client's I/O. A
 * listener that throws is logged and the others are still told.
 */
@FunctionalInterface
public interface ConnectionStateListener {

    /**
     * The client's state changed.
     *
     * @param client the client whose state changed
     * @param state  its new state
     */
    void stateChanged(RotaClient client, ConnectionState state);
}
