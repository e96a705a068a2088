package io.rota.client.recipes;

/** The work of a {@link SingletonJob}, run once per fire time cluster-wide. */
@FunctionalInterface
public interface JobTask {

    /**
     * Runs the job for one fire time. Honour interruption and {@link JobContext#isCancelled()}: they mean
     * another instance may take over. Returning normally records DONE; throwing records FAILED.
     *
     * @param context the run's fire time, fencing token and cancellation
     * @throws Exception to record the run as FAILED with the exception as outcome
     */
    void run(JobContext context) throws Exception;
}
