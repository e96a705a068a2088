package io.rota.client;

/**
 * How {@link Watches#watch(String, WatchOptions, WatchListener)} watches: one key or a prefix, from which
 * revision, and whether each event carries the key as it was before the change. Immutable; start from
 * {@link #key()} or {@link #prefix()}.
 *
 * <pre>{@code
 * rota.watches().watch("jobs/", WatchOptions.prefix().fromRevision(42).withPrevKv(), listener);
 * }</pre>
 *
 * @param isPrefix     whether the watched key is a prefix (every key that starts with it)
 * @param fromRevision the first revision to deliver (0: the next one)
 * @param prevKv       whether events carry the previous key ({@link WatchEvent#prevKv()})
 * @param progressNotify whether the member sends a progress notification while the watch is idle
 *                     ({@link WatchListener#onProgress(long)}; every 10 s by default, the server's setting)
 */
public record WatchOptions(boolean isPrefix, long fromRevision, boolean prevKv, boolean progressNotify) {

    /**
     * Checks the revision.
     *
     * @param isPrefix see the record component
     * @param fromRevision see the record component
     * @param prevKv see the record component
     * @param progressNotify see the record component
     */
    public WatchOptions {
        if (fromRevision < 0) {
            throw new IllegalArgumentException("fromRevision must not be negative (got " + fromRevision + ")");
        }
    }

    /**
     * One key, from the next revision, without previous keys.
     *
     * @return the options
     */
    public static WatchOptions key() {
        return new WatchOptions(false, 0, false, false);
    }

    /**
     * Every key that starts with the given one, from the next revision, without previous keys.
     *
     * @return the options
     */
    public static WatchOptions prefix() {
        return new WatchOptions(true, 0, false, false);
    }

    /**
     * These options, starting at {@code revision}.
     *
     * @param revision the first revision to deliver (0: the next one)
     * @return new options
     */
    public WatchOptions fromRevision(long revision) {
        return new WatchOptions(isPrefix, revision, prevKv, progressNotify);
    }

    /**
     * These options, with each event carrying the key as it was before the change.
     *
     * @return new options
     */
    public WatchOptions withPrevKv() {
        return new WatchOptions(isPrefix, fromRevision, true, progressNotify);
    }

    /**
     * These options, with progress notifications while the watch is idle (etcd's
     * {@code progress_notify}): the listener learns the revision it is up to date with.
     *
     * @return new options
     */
    public WatchOptions withProgressNotify() {
        return new WatchOptions(isPrefix, fromRevision, prevKv, true);
    }
}
