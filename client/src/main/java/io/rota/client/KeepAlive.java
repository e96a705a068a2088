package io.rota.client;

/**
 * A lease kept alive in the background by the client (see {@link Leases#keepAlive}). Closing it stops
 * the keep-alives (the lease then expires after its TTL) and the listener is not called any more.
 */
public interface KeepAlive extends AutoCloseable {

    /**
     * The lease kept alive.
     *
     * @return the lease id
     */
    long leaseId();

    /**
     * Whether keep-alives still run (false once closed or once the lease was reported lost).
     *
     * @return true while active
     */
    boolean isActive();

    /** Stops the keep-alives; idempotent. */
    @Override
    void close();
}
