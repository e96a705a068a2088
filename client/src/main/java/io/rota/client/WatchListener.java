package io.rota.client;

/**
 * Receives a watch's events, in revision order and each once, on the client's callback thread (one
 * thread for the whole client: a slow listener delays the others, but it may block and call the client).
 */
public interface WatchListener {

    /**
     * One change in the watched range.
     *
     * @param event the change
     */
    void onEvent(WatchEvent event);

    /**
     * The watch ended because of {@code error} and delivers nothing more: COMPACTED (its start revision
     * is older than the history; see {@link RotaException#compactRevision()}), or another error the SDK
     * cannot resume from. Not called when the watch is closed by the application. The default does nothing.
     *
     * @param error why the watch ended
     */
    default void onError(RotaException error) {
    }

    /**
     * A progress notification (asked for with {@link WatchOptions#withProgressNotify()}): the watch has
     * delivered every event of its range up to {@code revision}. The default does nothing.
     *
     * @param revision the member's revision the watch is up to date with
     */
    default void onProgress(long revision) {
    }
}
