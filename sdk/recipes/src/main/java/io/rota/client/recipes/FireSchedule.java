package io.rota.client.recipes;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.Objects;

/**
 * When a {@link SingletonJob} fires: a sequence of instants that every instance computes alike, so that
 * "the run of 08:00 on 29 November" names the same run everywhere.
 */
@FunctionalInterface
public interface FireSchedule {

    /**
     * The first fire time strictly after {@code after}.
     *
     * @param after an instant
     * @return the next fire time, later than {@code after}
     */
    Instant next(Instant after);

    /**
     * Every {@code period}, at the multiples of it since the Unix epoch (so every instance agrees whenever
     * it started). Short periods make a compressed schedule for tests and demos.
     *
     * @param period the period, at least 1 ms
     * @return the schedule
     */
    static FireSchedule fixedRate(Duration period) {
        long ms = period.toMillis();
        if (ms < 1) {
            throw new IllegalArgumentException("period must be at least 1 ms: " + period);
        }
        return after -> Instant.ofEpochMilli(Math.floorDiv(after.toEpochMilli(), ms) * ms + ms);
    }

    /**
     * Every day at {@code at} in {@code zone} (a time skipped by a DST change fires at the shifted time).
     *
     * @param at   the local time of day
     * @param zone the time zone
     * @return the schedule
     */
    static FireSchedule daily(LocalTime at, ZoneId zone) {
        Objects.requireNonNull(at, "at");
        Objects.requireNonNull(zone, "zone");
        return after -> {
            ZonedDateTime local = after.atZone(zone);
            ZonedDateTime candidate = local.toLocalDate().atTime(at).atZone(zone);
            while (!candidate.toInstant().isAfter(after)) {
                candidate = candidate.toLocalDate().plusDays(1).atTime(at).atZone(zone);
            }
            return candidate.toInstant();
        };
    }

    /**
     * A cron expression read on {@code zone}'s wall clock: Spring's six fields
     * {@code second minute hour day-of-month month day-of-week}, or crontab's five (without the second).
     * Each field takes {@code *}, a value, a range {@code a-b}, a step <code>*&#47;n</code>, {@code a/n} or
     * {@code a-b/n}, or a comma list of these; months and days may be named ({@code JAN}, {@code MON-FRI};
     * Sunday is 0 or 7); {@code ?} is {@code *}; {@code L} as the day-of-month is the month's last day;
     * {@code @hourly}, {@code @daily}, {@code @weekly}, {@code @monthly}, {@code @yearly} are short forms.
     * Day-of-month and day-of-week must both match (as in Spring). At DST changes: a wall time skipped by the
     * gap fires shifted by the gap's length; a repeated wall time fires once, unless the hour field is
     * {@code *} (docs/jobs.md, "Cron").
     *
     * <pre>{@code
     * FireSchedule.cron("0 0 8 * * MON-FRI", ZoneId.of("Europe/Berlin"))   // 08:00 on weekdays
     * FireSchedule.cron("*&#47;15 * * * *", ZoneOffset.UTC)                  // every 15 minutes
     * }</pre>
     *
     * @param expression the expression
     * @param zone       the time zone whose wall clock it is read on
     * @return the schedule
     * @throws IllegalArgumentException if the expression is malformed (the message names the field) or never fires
     */
    static FireSchedule cron(String expression, ZoneId zone) {
        return CronSchedule.parse(expression, zone);
    }
}
