package io.rota.chaos.workload;

import io.rota.chaos.history.HistoryWriter;

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
}
