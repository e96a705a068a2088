package io.rota.server.kv;

import io.rota.proto.Event;
import io.rota.server.auth.AuthState;

import java.util.List;

/**
 * Told, on the apply thread, about every revision the store writes — the feed of the watch hub. Events
 * always carry prev_kv (when the key existed); the hub strips it for watchers that did not ask.
 * Implementations must be quick and must not call back into the state machine's write path.
 */
public interface StoreListener {

    /** No one listens. */
    StoreListener NONE = (revision, events) -> { };

    /** The events of one write transaction, all with the same {@code revision}, in the order they happened. */
    void onRevision(long revision, List<Event> events);

    /**
     * The state was replaced by a snapshot at {@code revision}: watchers behind it must resume from the
     * history (or be told COMPACTED).
     */
    default void onRestore(long revision) {
    }

    /**
     * The member applied an auth change that made {@code state} current (auth enabled, a user or role
     * changed: a new auth revision), or restored one from a snapshot. Watches created under an older state
     * are re-checked (issue 33).
     */
    default void onAuthChange(AuthState state) {
    }
}
