package io.rota.client;

import java.time.Duration;

/**
 * Told what the client does, for metrics (the Spring Boot starter binds one to Micrometer): calls and their
 * latency, retries, the leader the client follows, failed lease keep-alives. Register with
 * {@link RotaClient.Builder#listener(ClientListener)}. The SDK depends on no metrics library; this is the seam.
 *
 * <p>Methods run on the client's event-loop threads, inside the call path: return quickly, never block,
 * never throw (an exception is caught and dropped, so a broken listener cannot break a call).
 */
public interface ClientListener {

    /**
     * A call ended, with its answer or its final failure, after all its attempts.
     *
     * @param operation the request's kind, lower case: {@code range}, {@code put}, {@code txn},
     *                  {@code lease_keep_alive}, ...
     * @param latency   from the call's start to its end, retries and backoffs included
     * @param attempts  attempts made (1 when the first one answered)
     * @param failure   null on success, else what the caller got
     */
    default void callEnded(String operation, Duration latency, int attempts, RotaException failure) {
    }

    /**
     * An attempt failed and the call will be retried (after a backoff, or at once at the leader it names).
     *
     * @param operation the request's kind (as in {@link #callEnded})
     * @param cause     why the attempt failed
     */
    default void retrying(String operation, RotaException cause) {
    }

    /**
     * The client learned of a different leader (from a NOT_LEADER answer) and sends there from now on.
     *
     * @param endpoint the leader's client address
     */
    default void leaderChanged(String endpoint) {
    }

    /**
     * A lease keep-alive failed; the client retries it until the lease's TTL has passed without a success,
     * then reports the lease lost to the lease's own listener.
     *
     * @param leaseId the lease
     * @param cause   why it failed
     */
    default void keepAliveFailed(long leaseId, RotaException cause) {
    }

    /** The listener that ignores everything (the default). */
    ClientListener NONE = new ClientListener() {
    };
}
