package io.rota.client.recipes;

import io.rota.client.Txn;

import java.time.Instant;

/** What a {@link SingletonJob}'s task knows about its run. */
public interface JobContext {

    /**
     * The job's name.
     *
     * @return the name
     */
    String jobName();

    /**
     * The fire time this run is for (not the time it started).
     *
     * @return the scheduled instant
     */
    Instant fireTime();

    /**
     * The fencing token of this run: pass it with every write to the protected resource, which must reject
     * tokens lower than the highest it has seen ({@link FenceGuard}, {@link JdbcFencing}).
     *
     * @return the token (strictly greater than any earlier run's)
     */
    long fencingToken();

    /**
     * The instance running it.
     *
     * @return the instance id
     */
    String instanceId();

    /**
     * Whether the run must stop: its lock was lost (the thread is then also interrupted), or the job is closing.
     *
     * @return true once cancelled
     */
    boolean isCancelled();

    /**
     * A transaction that applies only while this run still holds the job's lock (for data kept in Rota).
     *
     * @return a guarded transaction; add writes with {@code then(...)}
     */
    Txn guardedTxn();
}
