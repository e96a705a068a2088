package io.rota.chaos.history;

import java.util.List;

/**
 * Counts a history's completions. (The linearizability checker's view of a history, its operations, is
 * {@code io.rota.chaos.checker.Operations}: the checkers read histories, a history knows no checker.)
 */
public final class History {

    /**
     * Counts of completions.
     *
     * @param ok     acknowledged operations
     * @param failed operations that certainly did not take effect
     * @param info   indeterminate operations
     */
    public record Counts(long ok, long failed, long info) {
    }

    private History() {
    }

    /**
     * Counts completions by type (an invocation without completion counts as info).
     *
     * @param events a history
     * @return the counts
     */
    public static Counts counts(List<Event> events) {
        long ok = 0;
        long failed = 0;
        long info = 0;
        long invoked = 0;
        for (Event e : events) {
            if (e.isNemesis()) {
                continue;
            }
            switch (e.type()) {
                case INVOKE -> invoked++;
                case OK -> ok++;
                case FAIL -> failed++;
                case INFO -> info++;
            }
        }
        return new Counts(ok, failed, info + (invoked - ok - failed - info));
    }
}
