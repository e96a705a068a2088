package io.rota.client.recipes;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * SingletonJob's missed-run decision as a table: each policy on time, slightly late (within the grace), very
 * late (beyond it), after several missed fire times, and with the clock moved back. The job fires every minute;
 * the last fire time taken is 10:00; the grace is 20 s.
 */
class MissedRunsTest {

    private static final FireSchedule EVERY_MINUTE = FireSchedule.fixedRate(Duration.ofMinutes(1));
    private static final Instant CURSOR = t("10:00:00");
    private static final Duration GRACE = Duration.ofSeconds(20);

    private static Instant t(String hms) {
        return Instant.parse("2026-12-07T" + hms + "Z");
    }

    private static List<Instant> ts(String... hms) {
        return Stream.of(hms).map(MissedRunsTest::t).toList();
    }

    static Stream<Arguments> table() {
        return Stream.of(
                // policy, case, now, run (null: none), skipped
                Arguments.of(MissedRunPolicy.RUN_ONCE, "on time", "10:01:00", "10:01:00", ts()),
                Arguments.of(MissedRunPolicy.RUN_ALL, "on time", "10:01:00", "10:01:00", ts()),
                Arguments.of(MissedRunPolicy.SKIP, "on time", "10:01:00", "10:01:00", ts()),

                Arguments.of(MissedRunPolicy.RUN_ONCE, "slightly late", "10:01:10", "10:01:00", ts()),
                Arguments.of(MissedRunPolicy.RUN_ALL, "slightly late", "10:01:10", "10:01:00", ts()),
                Arguments.of(MissedRunPolicy.SKIP, "slightly late", "10:01:10", "10:01:00", ts()),
                Arguments.of(MissedRunPolicy.SKIP, "late by exactly the grace", "10:01:20", "10:01:00", ts()),

                Arguments.of(MissedRunPolicy.RUN_ONCE, "very late", "10:01:50", "10:01:00", ts()),
                Arguments.of(MissedRunPolicy.RUN_ALL, "very late", "10:01:50", "10:01:00", ts()),
                Arguments.of(MissedRunPolicy.SKIP, "very late", "10:01:50", null, ts("10:01:00")),

                Arguments.of(MissedRunPolicy.RUN_ONCE, "several missed", "10:04:10", "10:04:00",
                        ts("10:01:00", "10:02:00", "10:03:00")),
                Arguments.of(MissedRunPolicy.RUN_ALL, "several missed", "10:04:10", "10:01:00", ts()),
                Arguments.of(MissedRunPolicy.SKIP, "several missed", "10:04:10", "10:04:00",
                        ts("10:01:00", "10:02:00", "10:03:00")),
                Arguments.of(MissedRunPolicy.SKIP, "several missed, all late", "10:04:50", null,
                        ts("10:01:00", "10:02:00", "10:03:00", "10:04:00")),

                Arguments.of(MissedRunPolicy.RUN_ONCE, "clock moved back", "09:58:00", null, ts()),
                Arguments.of(MissedRunPolicy.RUN_ALL, "clock moved back", "09:58:00", null, ts()),
                Arguments.of(MissedRunPolicy.SKIP, "clock moved back", "09:58:00", null, ts()));
    }

    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("table")
    @DisplayName("each policy in each case")
    void decides(MissedRunPolicy policy, String what, String now, String run, List<Instant> skipped) {
        List<Instant> due = MissedRuns.due(EVERY_MINUTE, CURSOR, t(now), SingletonJob.MAX_CATCH_UP);
        if (due.isEmpty()) {
            assertEquals(null, run, "nothing is due, so nothing runs");
            assertTrue(skipped.isEmpty(), "nothing is due, so nothing is skipped");
            return;
        }
        MissedRuns.Decision d = MissedRuns.decide(policy, due, t(now), GRACE);
        assertEquals(run == null ? null : t(run), d.run(), "runs");
        assertEquals(skipped, d.skip(), "skips");
    }

    @Test
    @DisplayName("due: the fire times after the cursor up to now, the most recent max of them")
    void dueWindow() {
        assertEquals(ts("10:01:00", "10:02:00", "10:03:00"), MissedRuns.due(EVERY_MINUTE, CURSOR, t("10:03:00"), 10));
        assertEquals(ts("10:03:00", "10:04:00"), MissedRuns.due(EVERY_MINUTE, CURSOR, t("10:04:59"), 2));
        assertEquals(List.of(), MissedRuns.due(EVERY_MINUTE, CURSOR, t("10:00:59"), 10));
    }

    @Test
    @DisplayName("decide needs something due")
    void nothingDue() {
        assertThrows(IllegalArgumentException.class,
                () -> MissedRuns.decide(MissedRunPolicy.RUN_ONCE, List.of(), t("10:00:00"), GRACE));
    }
}
