package io.rota.spring;

import io.rota.client.recipes.MissedRunPolicy;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs a bean method once per fire time across every instance of the application, as a Rota
 * {@link io.rota.client.recipes.SingletonJob}: where {@code @Scheduled} runs on each instance, this runs on
 * one, with a fencing token, takes a dead runner's fire time over, and keeps the run history
 * ({@code rotactl jobs history NAME}).
 *
 * <pre>{@code
 * @Component
 * class Reminders {
 *     @SingletonJob(name = "learning-reminders", daily = "08:00", zone = "Europe/Berlin")
 *     void send(JobContext ctx) {            // or no parameter
 *         mailer.sendAll(ctx.fireTime(), ctx.fencingToken());
 *     }
 * }
 * }</pre>
 *
 * Exactly one of {@link #cron()}, {@link #fixedRate()}, {@link #daily()} is set. Values may be
 * {@code ${property}} placeholders. The method takes no parameter or one
 * {@link io.rota.client.recipes.JobContext}; returning records the run DONE, throwing records it FAILED.
 * Jobs start when the application context has started and stop when it closes.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface SingletonJob {

    /**
     * The job's name, the same on every instance (no '/'); default {@code <bean name>.<method name>}.
     *
     * @return the name
     */
    String name() default "";

    /**
     * A cron expression: Spring's six fields or crontab's five, e.g. {@code "0 0 8 * * MON-FRI"}.
     *
     * @return the expression, or "" if another schedule is used
     */
    String cron() default "";

    /**
     * A fixed rate, at the multiples of it since the epoch: {@code "10s"}, {@code "500ms"}, {@code "PT1H"}.
     *
     * @return the period, or "" if another schedule is used
     */
    String fixedRate() default "";

    /**
     * Every day at this local time ({@code "08:00"} or {@code "08:00:30"}).
     *
     * @return the time of day, or "" if another schedule is used
     */
    String daily() default "";

    /**
     * The time zone of {@link #cron()} and {@link #daily()} (default UTC, so every instance computes the
     * same fire times whatever its machine's zone).
     *
     * @return a zone id such as {@code "Europe/Berlin"}
     */
    String zone() default "UTC";

    /**
     * What to do with missed fire times; default: {@code rota.jobs.missed-run-policy} (itself RUN_ONCE).
     *
     * @return the policies, at most one
     */
    MissedRunPolicy[] missedRunPolicy() default {};
}
