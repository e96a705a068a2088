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
}
