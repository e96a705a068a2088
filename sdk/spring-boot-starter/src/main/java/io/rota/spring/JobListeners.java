package io.rota.spring;

import io.rota.client.recipes.JobListener;
import io.rota.client.recipes.JobState;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

/** Several {@link JobListener} beans as one (each SingletonJob takes one listener). */
final class JobListeners implements JobListener {

    private final List<JobListener> all;

    private JobListeners(List<JobListener> all) {
        this.all = all;
    }

    static JobListener of(List<JobListener> listeners) {
        if (listeners.isEmpty()) {
            return JobListener.NONE;
        }
        return listeners.size() == 1 ? listeners.get(0) : new JobListeners(List.copyOf(listeners));
    }

    @Override
    public void lockAcquired(String job, Duration waited) {
        all.forEach(l -> l.lockAcquired(job, waited));
    }

    @Override
    public void lockReleased(String job, Duration held) {
        all.forEach(l -> l.lockReleased(job, held));
    }

    @Override
    public void runEnded(String job, Instant fireTime, JobState outcome, Duration duration) {
        all.forEach(l -> l.runEnded(job, fireTime, outcome, duration));
    }

    @Override
    public void skipped(String job, Instant fireTime) {
        all.forEach(l -> l.skipped(job, fireTime));
    }
}
