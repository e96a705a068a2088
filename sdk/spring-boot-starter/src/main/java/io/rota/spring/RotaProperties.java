package io.rota.spring;

import io.rota.client.recipes.MissedRunPolicy;
import org.springframework.boot.context.properties.ConfigurationProperties;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.List;

/**
 * The {@code rota.*} settings of application.yml, bound by Spring Boot:
 *
 * <pre>
 * rota:
 *   endpoints: 10.0.0.1:2379,10.0.0.2:2379,10.0.0.3:2379   # or a YAML list
 *   call-timeout: 10s          # a call's whole deadline, retries included
 *   attempt-timeout: 3s        # one attempt at one member
 *   health-timeout: 2s         # how long the health indicator waits for a member's status
 *   instance-id: app-1         # recorded in job history; default host name and process id
 *   jobs:
 *     prefix: rota/jobs
 *     lock-ttl: 10s            # how soon a dead runner's fire time is taken over
 *     poll-interval: 1s
 *     missed-run-policy: run-once
 * </pre>
 *
 * TLS settings will sit under {@code rota.tls} once the client speaks TLS. A missing value takes the
 * {@code DEFAULT_} constant; a bad one fails the application's start with the property's name.
 *
 * @param endpoints      the members' client addresses ({@code host:port}); at least one
 * @param callTimeout    a call's deadline, retries included (default 10 s)
 * @param attemptTimeout one attempt's deadline (default 3 s)
 * @param healthTimeout  the health indicator's wait for a member's status (default 2 s)
 * @param instanceId     this instance's name in job history (default {@code <host>-<pid>})
 * @param jobs           settings of {@code @SingletonJob} methods
 */
@ConfigurationProperties("rota")
public record RotaProperties(List<String> endpoints, Duration callTimeout, Duration attemptTimeout,
                             Duration healthTimeout, String instanceId, Jobs jobs) {

    /** Default {@link #callTimeout()}: the SDK's own default. */
    public static final Duration DEFAULT_CALL_TIMEOUT = Duration.ofSeconds(10);
    /** Default {@link #attemptTimeout()}: the SDK's own default. */
    public static final Duration DEFAULT_ATTEMPT_TIMEOUT = Duration.ofSeconds(3);
    /** Default {@link #healthTimeout()}: short, as a health probe's caller waits for it. */
    public static final Duration DEFAULT_HEALTH_TIMEOUT = Duration.ofSeconds(2);

    /** Fills defaults and checks the values; a message names the property. */
    public RotaProperties {
        endpoints = endpoints == null ? List.of() : List.copyOf(endpoints);
        if (endpoints.isEmpty()) {
            throw new IllegalArgumentException("rota.endpoints is not set: give the cluster members' client"
                    + " addresses, e.g. rota.endpoints=127.0.0.1:2379,127.0.0.1:2380,127.0.0.1:2381");
        }
        callTimeout = positive(callTimeout, DEFAULT_CALL_TIMEOUT, "rota.call-timeout");
        attemptTimeout = positive(attemptTimeout, DEFAULT_ATTEMPT_TIMEOUT, "rota.attempt-timeout");
        healthTimeout = positive(healthTimeout, DEFAULT_HEALTH_TIMEOUT, "rota.health-timeout");
        instanceId = instanceId == null || instanceId.isBlank() ? defaultInstanceId() : instanceId;
        jobs = jobs == null ? new Jobs(null, null, null, null) : jobs;
    }

    static Duration positive(Duration value, Duration fallback, String property) {
        if (value == null) {
            return fallback;
        }
        if (value.isNegative() || value.isZero()) {
            throw new IllegalArgumentException(property + " must be positive, not " + value);
        }
        return value;
    }

    /** The host name and the process id: unique per instance, and telling in job history. */
    static String defaultInstanceId() {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            host = "unknown-host";
        }
        return host + "-" + ProcessHandle.current().pid();
    }

    /**
     * Settings shared by every {@code @SingletonJob} method of the application.
     *
     * @param prefix          the jobs' key prefix (default {@code rota/jobs}: rotactl jobs history reads it)
     * @param lockTtl         the runner's lease TTL: how soon a dead runner is taken over (default 10 s)
     * @param pollInterval    how often an idle instance re-reads a job's state (default 1 s)
     * @param missedRunPolicy missed fire times (default {@code RUN_ONCE}; an annotation may override it)
     */
    public record Jobs(String prefix, Duration lockTtl, Duration pollInterval, MissedRunPolicy missedRunPolicy) {

        /** Default {@link #prefix()}: SingletonJob's own. */
        public static final String DEFAULT_PREFIX = "rota/jobs";
        /** Default {@link #lockTtl()}: SingletonJob's own. */
        public static final Duration DEFAULT_LOCK_TTL = Duration.ofSeconds(10);
        /** Default {@link #pollInterval()}: SingletonJob's own. */
        public static final Duration DEFAULT_POLL_INTERVAL = Duration.ofSeconds(1);
        /** Default {@link #missedRunPolicy()}: SingletonJob's own. */
        public static final MissedRunPolicy DEFAULT_MISSED_RUN_POLICY = MissedRunPolicy.RUN_ONCE;

        /** Fills defaults and checks the values. */
        public Jobs {
            prefix = prefix == null || prefix.isBlank() ? DEFAULT_PREFIX : prefix;
            if (prefix.endsWith("/")) {
                throw new IllegalArgumentException("rota.jobs.prefix must not end with '/': " + prefix);
            }
            lockTtl = positive(lockTtl, DEFAULT_LOCK_TTL, "rota.jobs.lock-ttl");
            pollInterval = positive(pollInterval, DEFAULT_POLL_INTERVAL, "rota.jobs.poll-interval");
            missedRunPolicy = missedRunPolicy == null ? DEFAULT_MISSED_RUN_POLICY : missedRunPolicy;
        }
    }
}
