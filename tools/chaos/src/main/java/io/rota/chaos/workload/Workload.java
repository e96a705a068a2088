package io.rota.chaos.workload;

import io.rota.chaos.history.Event;

import java.util.List;

/**
 * What the clients do during a chaos run, and how their history is judged. The runner calls
 * {@link #start}, later {@link #stop} (while faults may still be in place), heals the cluster, then
 * {@link #finish} (reads with every fault healed) and finally {@link #check} on the history read back from
 * disk; the {@code check FILE} mode calls only {@link #check}.
 *
 * <p>The workloads: {@link RegisterWorkload} (linearizability), {@link LeaseWorkload} (lease expiry bounds)
 * and {@link LockWorkload} (fencing and token order on the Lock recipe). A new one implements this and
 * registers itself in {@link Workloads}.
 */
public interface Workload {

    /**
     * The name given to {@code --workload}.
     *
     * @return e.g. "register"
     */
    String name();

    /**
     * Starts the client threads; they record every operation into {@code context.history()}.
     *
     * @param context the cluster's endpoints, the history, the clock and the seed
     */
    void start(WorkloadContext context);

    /**
     * Live counts of completed operations, for the progress line.
     *
     * @return ok / failed / indeterminate so far
     */
    Counters counters();

    /** Stops the client threads and waits for them (operations in flight complete or time out). */
    void stop();

    /** Runs once the cluster is healed and quiet: final reads (recorded in the history too). */
    void finish();

    /**
     * Judges a history (pure; no cluster needed).
     *
     * @param history every event of the run, nemesis events included
     * @return the verdict and a report
     */
    WorkloadResult check(List<Event> history);
}
