package io.rota.client.recipes;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * What a {@link SingletonJob} does with the fire times that are due when an instance holds the lock: which one
 * to run, which to record as missed. Pure: no clock, no I/O (the caller passes {@code now}), so every policy is
 * unit-tested as a table (MissedRunsTest). Design HS31.
 */
final class MissedRuns {

    private MissedRuns() {
    }

    /**
     * The decision.
     *
     * @param run  the fire time to run now, or {@code null} to run none
     * @param skip the fire times to record as missed (SKIPPED), oldest first
     */
    record Decision(Instant run, List<Instant> skip) {
        Decision {
            skip = List.copyOf(skip);
        }
    }

    /**
     * The due fire times after {@code cursor}: those of {@code schedule} not after {@code now}, oldest first, the
     * most recent {@code max} of them (a window: after a long outage the policy still applies to the latest
     * ones, not to the oldest). Empty when the clock reads before the next fire time (or moved back).
     */
    static List<Instant> due(FireSchedule schedule, Instant cursor, Instant now, int max) {
        ArrayDeque<Instant> window = new ArrayDeque<>();
        Instant f = schedule.next(cursor);
        while (!f.isAfter(now)) {
            window.addLast(f);
            if (window.size() > max) {
                window.removeFirst();
            }
            f = schedule.next(f);
        }
        return List.copyOf(window);
    }

    /**
     * What {@code policy} does with {@code due} (oldest first, not empty) at {@code now}: RUN_ALL runs the
     * oldest and leaves the rest for the next decisions; RUN_ONCE runs the latest and skips the others; SKIP
     * skips those more than {@code grace} late and runs the oldest within it, if any.
     */
    static Decision decide(MissedRunPolicy policy, List<Instant> due, Instant now, Duration grace) {
        if (due.isEmpty()) {
            throw new IllegalArgumentException("nothing is due");
        }
        return switch (policy) {
            case RUN_ALL -> new Decision(due.get(0), List.of());
            case RUN_ONCE -> new Decision(due.get(due.size() - 1), due.subList(0, due.size() - 1));
            case SKIP -> {
                Instant run = null;
                List<Instant> skip = new ArrayList<>();
                for (Instant d : due) {
                    if (Duration.between(d, now).compareTo(grace) > 0) {
                        skip.add(d);
                    } else if (run == null) {
                        run = d;
                    }
                }
                yield new Decision(run, skip);
            }
        };
    }
}
