package io.rota.client;

import java.util.OptionalLong;

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

    /**
     * When the last keep-alive that the cluster confirmed was SENT, on this JVM's {@link System#nanoTime}
     * clock. The cluster restarted the lease's TTL no earlier than that, so the lease cannot expire before
     * this instant + TTL (less the clock drift between this machine and the leader's): the base of a lock's
     * safe-until time.
     *
     * @return the send time, or empty until a keep-alive was confirmed
     */
    OptionalLong lastConfirmedSendNanos();

    /** Stops the keep-alives; idempotent. */
    @Override
    void close();
}
