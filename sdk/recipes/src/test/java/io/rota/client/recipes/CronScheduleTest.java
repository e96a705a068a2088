package io.rota.client.recipes;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Cron schedules: fields, day rules, month ends, and Europe/Berlin's DST changes of 2026 (spring forward on
 * 29 March at 02:00 CET = 01:00Z, fall back on 25 October at 03:00 CEST = 01:00Z).
 */
class CronScheduleTest {

    static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");

    static Instant at(String utc) {
        return Instant.parse(utc);
    }

    /** The first {@code n} fire times strictly after {@code after}. */
    static List<Instant> fires(FireSchedule s, String after, int n) {
        List<Instant> out = new ArrayList<>();
        Instant t = at(after);
        for (int i = 0; i < n; i++) {
            t = s.next(t);
            out.add(t);
        }
        return out;
    }

    static List<Instant> list(String... utc) {
        List<Instant> out = new ArrayList<>();
        for (String u : utc) {
            out.add(at(u));
        }
        return out;
    }

    @Test
    @DisplayName("six fields with seconds; five fields mean second 0; strictly after the given instant")
    void fieldsAndStrictlyAfter() {
        FireSchedule six = FireSchedule.cron("30 0 8 * * *", ZoneOffset.UTC);
        assertEquals(at("2026-11-29T08:00:30Z"), six.next(at("2026-11-29T08:00:00Z")));
        assertEquals(at("2026-11-30T08:00:30Z"), six.next(at("2026-11-29T08:00:30Z")));
        assertEquals(at("2026-11-30T08:00:30Z"), six.next(at("2026-11-29T08:00:30.000001Z")));
        FireSchedule five = FireSchedule.cron("0 8 * * *", ZoneOffset.UTC);
        assertEquals(at("2026-11-29T08:00:00Z"), five.next(at("2026-11-29T07:59:59.999Z")));
        assertEquals(at("2026-11-30T08:00:00Z"), five.next(at("2026-11-29T08:00:00Z")));
        assertEquals(list("2026-11-29T10:05:00Z", "2026-11-29T10:25:00Z", "2026-11-29T10:45:00Z",
                        "2026-11-29T11:05:00Z"),
                fires(FireSchedule.cron("0 5/20 * * * *", ZoneOffset.UTC), "2026-11-29T10:00:00Z", 4));
        assertEquals(list("2026-11-29T10:00:10Z", "2026-11-29T10:00:20Z", "2026-11-29T10:01:10Z"),
                fires(FireSchedule.cron("10,20 * 10-11/1 * * ?", ZoneOffset.UTC), "2026-11-29T10:00:00Z", 3));
    }

    @Test
    @DisplayName("the zone's wall clock: 08:00 Berlin is 07:00Z in winter and 06:00Z in summer, like daily()")
    void wallClockOfTheZone() {
        FireSchedule cron = FireSchedule.cron("0 0 8 * * *", BERLIN);
        FireSchedule daily = FireSchedule.daily(LocalTime.of(8, 0), BERLIN);
        Instant t = at("2026-03-20T00:00:00Z");
        for (int i = 0; i < 20; i++) {
            Instant next = cron.next(t);
            assertEquals(daily.next(t), next, "after " + t);
            t = next;
        }
        assertEquals(at("2026-03-30T06:00:00Z"), cron.next(at("2026-03-29T07:00:00Z")));
    }

    @Test
    @DisplayName("day-of-week: names and numbers, 0 and 7 are Sunday, MON-FRI skips the weekend")
    void daysOfWeek() {
        // 2026-11-28 is a Saturday, 2026-11-29 a Sunday.
        FireSchedule weekdays = FireSchedule.cron("0 0 8 * * MON-FRI", ZoneOffset.UTC);
        assertEquals(at("2026-11-30T08:00:00Z"), weekdays.next(at("2026-11-27T08:00:00Z")));
        for (String sunday : new String[] {"0", "7", "SUN", "sun"}) {
            FireSchedule s = FireSchedule.cron("0 0 12 * * " + sunday, ZoneOffset.UTC);
            assertEquals(at("2026-11-29T12:00:00Z"), s.next(at("2026-11-25T00:00:00Z")), sunday);
            assertEquals(at("2026-12-06T12:00:00Z"), s.next(at("2026-11-29T12:00:00Z")), sunday);
        }
        assertEquals(at("2026-12-06T00:00:00Z"), FireSchedule.cron("@weekly", ZoneOffset.UTC).next(at("2026-11-29T00:00:00Z")));
    }

    @Test
    @DisplayName("day-of-month and day-of-week both match (Spring's rule): Friday the 13th")
    void dayOfMonthAndDayOfWeekBothMatch() {
        assertEquals(list("2026-02-13T00:00:00Z", "2026-03-13T00:00:00Z", "2026-11-13T00:00:00Z",
                        "2027-08-13T00:00:00Z"),
                fires(FireSchedule.cron("0 0 0 13 * FRI", ZoneOffset.UTC), "2026-01-01T00:00:00Z", 4));
    }

    @Test
    @DisplayName("month ends: the 31st skips short months, L is the last day (28 or 29 in February)")
    void monthEnds() {
        assertEquals(list("2026-01-31T09:00:00Z", "2026-03-31T09:00:00Z", "2026-05-31T09:00:00Z"),
                fires(FireSchedule.cron("0 9 31 * *", ZoneOffset.UTC), "2026-01-01T00:00:00Z", 3));
        assertEquals(list("2026-01-31T09:00:00Z", "2026-02-28T09:00:00Z", "2026-03-31T09:00:00Z",
                        "2026-04-30T09:00:00Z"),
                fires(FireSchedule.cron("0 9 L * *", ZoneOffset.UTC), "2026-01-01T00:00:00Z", 4));
        assertEquals(at("2028-02-29T09:00:00Z"),
                FireSchedule.cron("0 9 L FEB *", ZoneOffset.UTC).next(at("2028-01-01T00:00:00Z")));
        assertEquals(at("2028-02-29T00:00:00Z"),
                FireSchedule.cron("0 0 29 2 *", ZoneOffset.UTC).next(at("2026-03-01T00:00:00Z")));
    }

    @Test
    @DisplayName("spring forward: a wall time in the gap fires shifted by the gap (02:30 -> 03:30 CEST), once")
    void springForwardFixedTime() {
        assertEquals(list("2026-03-28T01:30:00Z", "2026-03-29T01:30:00Z", "2026-03-30T00:30:00Z"),
                fires(FireSchedule.cron("0 30 2 * * *", BERLIN), "2026-03-28T00:00:00Z", 3));
        // 02:00 (the gap's first second) fires at 03:00 CEST, the instant the clocks jump.
        assertEquals(at("2026-03-29T01:00:00Z"),
                FireSchedule.cron("0 0 2 * * *", BERLIN).next(at("2026-03-28T23:00:00Z")));
    }

    @Test
    @DisplayName("spring forward: every 15 minutes keeps a 15-minute pace through the gap, no fire twice")
    void springForwardEveryFifteenMinutes() {
        assertEquals(list("2026-03-29T00:45:00Z", "2026-03-29T01:00:00Z", "2026-03-29T01:15:00Z",
                        "2026-03-29T01:30:00Z"),
                fires(FireSchedule.cron("*/15 * * * *", BERLIN), "2026-03-29T00:30:00Z", 4));
        // Wall times 02:00-02:59 exist only shifted; a half-hourly schedule inside them lands on 03:00 and 03:30.
        assertEquals(list("2026-03-29T00:30:00Z", "2026-03-29T01:00:00Z", "2026-03-29T01:30:00Z"),
                fires(FireSchedule.cron("0 0/30 1-3 * * *", BERLIN), "2026-03-29T00:00:00Z", 3));
    }

    @Test
    @DisplayName("fall back: a fixed wall time in the repeated hour fires once (at its first occurrence)")
    void fallBackFixedTimeOnce() {
        // 25 October 2026: 02:30 happens at 00:30Z (CEST) and again at 01:30Z (CET).
        assertEquals(list("2026-10-24T00:30:00Z", "2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"),
                fires(FireSchedule.cron("0 30 2 * * *", BERLIN), "2026-10-24T00:00:00Z", 3));
        assertEquals(list("2026-10-25T00:00:00Z", "2026-10-25T02:00:00Z"),
                fires(FireSchedule.cron("0 0 2,3 * * *", BERLIN), "2026-10-24T23:00:00Z", 2));
    }

    @Test
    @DisplayName("fall back: an hourly or every-15-minutes schedule fires through both passes of the hour")
    void fallBackWildcardHourFiresInBothPasses() {
        assertEquals(list("2026-10-25T00:00:00Z", "2026-10-25T01:00:00Z", "2026-10-25T02:00:00Z"),
                fires(FireSchedule.cron("@hourly", BERLIN), "2026-10-24T23:30:00Z", 3));
        List<Instant> quarter = fires(FireSchedule.cron("0 */15 * * * *", BERLIN), "2026-10-24T23:50:00Z", 12);
        assertEquals(at("2026-10-25T00:00:00Z"), quarter.get(0));
        for (int i = 1; i < quarter.size(); i++) {
            assertEquals(Duration.ofMinutes(15), Duration.between(quarter.get(i - 1), quarter.get(i)),
                    "steady pace through the repeated hour: " + quarter);
        }
    }

    @Test
    @DisplayName("a fixed time after the changes is unaffected: 04:00 daily around both Berlin transitions")
    void fixedTimeOutsideTheChangedHour() {
        assertEquals(list("2026-03-29T02:00:00Z", "2026-03-30T02:00:00Z"),
                fires(FireSchedule.cron("0 4 * * *", BERLIN), "2026-03-28T23:00:00Z", 2));
        assertEquals(list("2026-10-25T03:00:00Z", "2026-10-26T03:00:00Z"),
                fires(FireSchedule.cron("0 4 * * *", BERLIN), "2026-10-24T23:00:00Z", 2));
    }

    @Test
    @DisplayName("bad expressions are refused with the field and the reason")
    void badExpressions() {
        assertMessage("has 4 fields", "0 8 * *");
        assertMessage("hour field \"24\": 24 is outside 0-23", "0 0 24 * * *");
        assertMessage("range 5-3 runs backwards", "0 5-3 * * *");
        assertMessage("a step must be at least 1", "*/0 * * * *");
        assertMessage("\"FUN\" is not a number or a name", "0 8 * * FUN");
        assertMessage("never fires", "0 0 30 2 *");
        assertMessage("day-of-month field \"0\"", "0 0 0 * *");
    }

    static void assertMessage(String expected, String expression) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> FireSchedule.cron(expression, ZoneOffset.UTC));
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }

    @Test
    @DisplayName("toString names the expression and the zone")
    void describes() {
        assertEquals("cron(0 8 * * MON-FRI in Europe/Berlin)", FireSchedule.cron("0 8 * * MON-FRI", BERLIN).toString());
    }
}
