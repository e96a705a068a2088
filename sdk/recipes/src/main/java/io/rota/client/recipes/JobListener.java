package io.rota.client.recipes;

import java.time.Duration;
import java.time.Instant;

/**
 * Told what one instance of a {@link SingletonJob} does, for metrics (the Spring Boot starter binds one to
 * Micrometer): how long it waited for the job's lock and held it, and how each run it made ended. Register
 * with {@link SingletonJob.Builder#listener(JobListener)}. Methods run on the job's thread: return quickly;
 * an exception is logged and dropped.
 */
public interface JobListener {

    /**
     * This instance got the job's lock (to run a fire time, or to take one over).
     *
     * @param job    the job's name
     * @param waited how long {@code acquire} waited (other instances queue on the lock while one runs)
     */
    default void lockAcquired(String job, Duration waited) {
    }

    /**
     * This instance let the job's lock go (or lost it).
     *
     * @param job  the job's name
     * @param held from acquiring to releasing
     */
    default void lockReleased(String job, Duration held) {
    }

    /**
     * A run by this instance ended: {@link JobState#DONE}, {@link JobState#FAILED} (the task threw), or
     * {@link JobState#ABANDONED} (the lock was lost or the job closed mid-run: another instance re-runs the
     * fire time).
     *
     * @param job      the job's name
     * @param fireTime the fire time run
     * @param outcome  DONE, FAILED or ABANDONED
     * @param duration how long the task ran
     */
    default void runEnded(String job, Instant fireTime, JobState outcome, Duration duration) {
    }

    /**
     * A missed fire time was recorded SKIPPED by this instance (the {@link MissedRunPolicy} did not run it).
     *
     * @param job      the job's name
     * @param fireTime the fire time skipped
     */
    default void skipped(String job, Instant fireTime) {
    }

    /** The listener that ignores everything (the default). */
    JobListener NONE = new JobListener() {
    };
}
