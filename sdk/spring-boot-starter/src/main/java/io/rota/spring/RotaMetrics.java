package io.rota.spring;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.rota.client.ClientListener;
import io.rota.client.RotaException;
import io.rota.client.recipes.JobListener;
import io.rota.client.recipes.JobState;

import java.time.Duration;
import java.time.Instant;
import java.util.Locale;

/**
 * Rota's Micrometer meters, fed by the SDK's {@link ClientListener} and the jobs' {@link JobListener} seams
 * (the SDK and the recipes know no metrics library). Spring Boot binds it to the application's registry
 * like any {@link MeterBinder}; events before that are not counted.
 *
 * <table>
 *   <caption>meters</caption>
 *   <tr><th>name</th><th>type</th><th>tags</th><th>what</th></tr>
 *   <tr><td>rota.client.calls</td><td>timer</td><td>operation, outcome</td><td>calls (outcome {@code ok} or
 *       the error code), latency with retries</td></tr>
 *   <tr><td>rota.client.retries</td><td>counter</td><td>operation, reason</td><td>attempts retried</td></tr>
 *   <tr><td>rota.client.leader.changes</td><td>counter</td><td></td><td>a new leader learned</td></tr>
 *   <tr><td>rota.client.keepalive.failures</td><td>counter</td><td>reason</td><td>lease keep-alives that failed</td></tr>
 *   <tr><td>rota.job.lock.wait</td><td>timer</td><td>job</td><td>waits for a job's lock</td></tr>
 *   <tr><td>rota.job.lock.held</td><td>timer</td><td>job</td><td>holds of a job's lock</td></tr>
 *   <tr><td>rota.job.runs</td><td>timer</td><td>job, outcome</td><td>runs by outcome (done, failed,
 *       abandoned) and their duration</td></tr>
 *   <tr><td>rota.job.skipped</td><td>counter</td><td>job</td><td>missed fire times recorded SKIPPED</td></tr>
 * </table>
 */
public final class RotaMetrics implements MeterBinder, ClientListener, JobListener {

    private volatile MeterRegistry registry;

    @Override
    public void bindTo(MeterRegistry registry) {
        if (this.registry == null) {
            this.registry = registry;
            // Meters without tag values to wait for: present (at zero) from the start, for dashboards.
            leaderChanges(registry);
        }
    }

    private static Counter leaderChanges(MeterRegistry r) {
        return Counter.builder("rota.client.leader.changes").description("Times the client learned of a new leader")
                .register(r);
    }

    @Override
    public void callEnded(String operation, Duration latency, int attempts, RotaException failure) {
        MeterRegistry r = registry;
        if (r != null) {
            Timer.builder("rota.client.calls").description("Rota calls, retries included")
                    .tag("operation", operation).tag("outcome", failure == null ? "ok" : code(failure))
                    .register(r).record(latency);
        }
    }

    @Override
    public void retrying(String operation, RotaException cause) {
        MeterRegistry r = registry;
        if (r != null) {
            Counter.builder("rota.client.retries").description("Rota call attempts that failed and were retried")
                    .tag("operation", operation).tag("reason", code(cause)).register(r).increment();
        }
    }

    @Override
    public void leaderChanged(String endpoint) {
        MeterRegistry r = registry;
        if (r != null) {
            leaderChanges(r).increment();
        }
    }

    @Override
    public void keepAliveFailed(long leaseId, RotaException cause) {
        MeterRegistry r = registry;
        if (r != null) {
            Counter.builder("rota.client.keepalive.failures").description("Lease keep-alives that failed")
                    .tag("reason", code(cause)).register(r).increment();
        }
    }

    @Override
    public void lockAcquired(String job, Duration waited) {
        MeterRegistry r = registry;
        if (r != null) {
            Timer.builder("rota.job.lock.wait").description("Waits for a singleton job's lock")
                    .tag("job", job).register(r).record(waited);
        }
    }

    @Override
    public void lockReleased(String job, Duration held) {
        MeterRegistry r = registry;
        if (r != null) {
            Timer.builder("rota.job.lock.held").description("Holds of a singleton job's lock")
                    .tag("job", job).register(r).record(held);
        }
    }

    @Override
    public void runEnded(String job, Instant fireTime, JobState outcome, Duration duration) {
        MeterRegistry r = registry;
        if (r != null) {
            Timer.builder("rota.job.runs").description("Singleton job runs on this instance, by outcome")
                    .tag("job", job).tag("outcome", outcome.name().toLowerCase(Locale.ROOT))
                    .register(r).record(duration);
        }
    }

    @Override
    public void skipped(String job, Instant fireTime) {
        MeterRegistry r = registry;
        if (r != null) {
            Counter.builder("rota.job.skipped").description("Missed fire times recorded SKIPPED")
                    .tag("job", job).register(r).increment();
        }
    }

    private static String code(RotaException e) {
        return e.code().name().toLowerCase(Locale.ROOT);
    }
}
