package io.rota.client;

/**
 * A running watch (see {@link Watches#watch}). Closing it cancels it on the server; after
 * {@link #close()} returns the listener gets no event that was not already being delivered.
 */
public interface Watch extends AutoCloseable {

    /**
     * The next revision the watch waits for: every revision before it was delivered (or lay before the
     * start revision).
     *
     * @return the next revision to deliver
     */
    long nextRevision();

    /**
     * The member the watch currently streams from.
     *
     * @return its {@code host:port}, or null while (re)connecting or after the end
     */
    String endpoint();

    /**
     * Whether the watch still runs (false once closed or ended by an error).
     *
     * @return true while active
     */
    boolean isActive();

    /** Cancels the watch; idempotent. */
    @Override
    void close();
}
