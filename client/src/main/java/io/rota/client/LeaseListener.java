package io.rota.client;

import java.time.Duration;

/**
 * Told when a kept-alive lease is lost (at most once per {@link KeepAlive}) and, if it cares, each time a
 * keep-alive succeeded. Called on the client's callback thread (it may block, and may call the client).
 */
@FunctionalInterface
public interface LeaseListener {

    /**
     * The lease is gone, or can no longer be assumed alive; its keys are (or soon will be) deleted.
     *
     * @param leaseId the lease
     * @param reason  why: a {@link RotaException.Code#LEASE_NOT_FOUND} when the cluster reported it gone,
     *                else the last failure of a keep-alive that could not succeed for a whole TTL
     */
    void onLost(long leaseId, RotaException reason);

    /**
     * A keep-alive succeeded: the cluster restarted the lease at its full TTL. The default does nothing.
     *
     * @param leaseId the lease
     * @param ttl     the lease's granted TTL, now its remaining time
     */
    default void onRenewed(long leaseId, Duration ttl) {
    }
}
