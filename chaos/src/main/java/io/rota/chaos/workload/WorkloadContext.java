package io.rota.chaos.workload;

import io.rota.chaos.history.HistoryWriter;
import io.rota.client.RotaClient;

import java.time.Duration;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * What a workload needs from the runner.
 *
 * @param endpoints the members' client addresses, comma-separated
 * @param history   where every operation is recorded
 * @param clock     the run's clock: nanoseconds since it started (the history's time base)
 * @param seed      the run's seed (each client derives its own randomness from it)
 * @param clients   how many concurrent client processes to run
 * @param rate      target operations per second, all clients together
 */
public record WorkloadContext(String endpoints, HistoryWriter history, LongSupplier clock, long seed, int clients,
                              double rate) {

    /**
     * A new client of the cluster, one per client process of a workload (the caller closes it).
     *
     * @param callTimeout    a call's whole budget, retries included; past it the operation is indeterminate
     * @param attemptTimeout one try on one member
     * @return the client
     */
    public RotaClient newClient(Duration callTimeout, Duration attemptTimeout) {
        return RotaClient.builder().endpoints(endpoints).callTimeout(callTimeout).attemptTimeout(attemptTimeout).build();
    }

    /**
     * Waits for a workload's client threads, each at most {@code each}; returns early if interrupted.
     *
     * @param threads the threads
     * @param each    the longest wait per thread
     */
    static void joinAll(List<Thread> threads, Duration each) {
        for (Thread t : threads) {
            try {
                t.join(each.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
