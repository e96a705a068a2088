package io.rota.client;

import io.rota.proto.Frame;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * What the APIs ({@link Kv}, {@link Txn}, {@link Leases}, {@link Cluster}) need of the client: a call that
 * finds the leader and retries by itself until its deadline, a write applied once. They build requests and
 * read answers; how the call gets there is {@link Caller}'s business.
 */
interface Calls {

    /**
     * Runs one call with leader finding and retries until the client's call timeout. A mutating call is
     * sent under the client's session with a sequence number that every retry of it reuses.
     *
     * @return the answer frame (never an error frame: a server error fails the future with a RotaException)
     */
    CompletableFuture<Frame> execute(Frame.Builder request, boolean mutating);

    /** {@link #execute(Frame.Builder, boolean)} with its own deadline, {@code timeoutNanos} from now. */
    CompletableFuture<Frame> execute(Frame.Builder request, boolean mutating, long timeoutNanos);

    /** The total time one call may take, retries included. */
    Duration callTimeout();
}
