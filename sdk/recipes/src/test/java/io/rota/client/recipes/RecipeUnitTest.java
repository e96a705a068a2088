package io.rota.client.recipes;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalTime;
import java.time.ZoneId;
import java.util.LinkedHashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The recipes' pure parts: schedules, record text, options. */
class RecipeUnitTest {

    @Test
    @DisplayName("fixedRate fires at multiples of the period since the epoch, strictly after the given instant")
    void fixedRate() {
        FireSchedule s = FireSchedule.fixedRate(Duration.ofMillis(300));
        assertEquals(Instant.ofEpochMilli(300), s.next(Instant.ofEpochMilli(0)));
        assertEquals(Instant.ofEpochMilli(600), s.next(Instant.ofEpochMilli(300)));
        assertEquals(Instant.ofEpochMilli(600), s.next(Instant.ofEpochMilli(599)));
        assertThrows(IllegalArgumentException.class, () -> FireSchedule.fixedRate(Duration.ZERO));
    }

    @Test
    @DisplayName("daily fires at the local time each day, across a DST change")
    void daily() {
        ZoneId berlin = ZoneId.of("Europe/Berlin");
        FireSchedule s = FireSchedule.daily(LocalTime.of(8, 0), berlin);
        assertEquals(Instant.parse("2026-11-29T07:00:00Z"), s.next(Instant.parse("2026-11-29T06:59:59Z")));
        assertEquals(Instant.parse("2026-11-30T07:00:00Z"), s.next(Instant.parse("2026-11-29T07:00:00Z")));
        // 29 March 2026: clocks go forward at 02:00; 08:00 is then UTC+2.
        assertEquals(Instant.parse("2026-03-29T06:00:00Z"), s.next(Instant.parse("2026-03-28T07:00:00Z")));
    }

    @Test
    @DisplayName("records: fields round-trip, values are made single-line and bounded")
    void fields() {
        Map<String, String> f = new LinkedHashMap<>();
        f.put("state", "DONE");
        f.put("result", "line1\nline2=x");
        f.put("skipped", null);
        Map<String, String> back = Fields.decode(Fields.encode(f));
        assertEquals(Map.of("state", "DONE", "result", "line1 line2=x"), back);
        assertEquals(Fields.MAX_VALUE_CHARS, Fields.clean("x".repeat(10_000)).length());
    }

    @Test
    @DisplayName("lock options: the default margin is 10% of the TTL + 2 x clock drift; bad values are refused")
    void lockOptions() {
        LockOptions o = LockOptions.defaults().withTtl(Duration.ofSeconds(10));
        assertEquals(Duration.ofMillis(1_200), o.effectiveMargin(Duration.ofSeconds(10)));
        assertEquals(Duration.ofMillis(50), o.withSafetyMargin(Duration.ofMillis(50)).effectiveMargin(Duration.ofSeconds(10)));
        assertThrows(IllegalArgumentException.class, () -> o.withTtl(Duration.ofMillis(500)));
        assertThrows(IllegalArgumentException.class, () -> o.withPrefix("locks/"));
        assertTrue(o.lockDelay().isZero());
    }

    @Test
    @DisplayName("an election refuses the locks' default prefix: it would queue behind a Lock of the same name")
    void electionRefusesTheLockPrefix() {
        try (io.rota.client.RotaClient rota = io.rota.client.RotaClient.builder().endpoints("127.0.0.1:1").build()) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> Election.of(rota, "scheduler", LockOptions.defaults().withTtl(Duration.ofSeconds(5))));
            assertTrue(e.getMessage().contains("withPrefix(\"rota/election\")"), e.getMessage());
            assertEquals("rota/election/scheduler/", Election.of(rota, "scheduler",
                    LockOptions.defaults().withPrefix("rota/election")).queuePrefix());
        }
    }
}
