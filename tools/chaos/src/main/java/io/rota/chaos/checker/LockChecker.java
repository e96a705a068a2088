package io.rota.chaos.checker;

import io.rota.chaos.history.Event;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The lock workload's safety checks on its history (pure: events in, verdict and report out; the events are
 * those io.rota.chaos.workload.LockWorkload records, described there). Per lock: fencing (no accepted write has
 * a token lower than one accepted before it), token order (an acquisition that completed before another began
 * has the lower token; no token is handed out twice), guarded Rota writes (none from a holder whose lock a later
 * holder had already acquired, and none with a token lower than an earlier applied one, applies), and the
 * holders' safe-until: no holder acquires before a holder with a lower token has reached its safe-until,
 * released or stalled. Overlapping critical sections are counted and reported, not judged: a stalled holder
 * still believes it holds the lock; fencing is what must make that harmless. Doomed operations (issue 31) that
 * succeeded are violations.
 */
public final class LockChecker {

    private LockChecker() {
    }

    /**
     * Judges a lock history.
     *
     * @param history every event of the run
     * @return NO if a fenced write broke token order, a token was handed out twice or out of real-time order,
     *         a stale guarded Rota write applied, or a holder acquired within an earlier holder's safe-until;
     *         YES otherwise; with the figures in the report
     */
    public static CheckReport check(List<Event> history) {
        Map<String, List<Event>> byLock = new TreeMap<>();
        for (Event e : history) {
            if (!e.isNemesis()) {
                byLock.computeIfAbsent(e.key(), k -> new ArrayList<>()).add(e);
            }
        }
        Figures total = new Figures();
        StringBuilder details = new StringBuilder();
        for (Map.Entry<String, List<Event>> entry : byLock.entrySet()) {
            checkLock(entry.getKey(), entry.getValue(), total, details);
        }
        long violations = total.fencingViolations + total.tokenOrderViolations + total.staleGuardApplied
                + total.safeUntilOverlaps + total.doomedSucceeded;
        String report = String.format(Locale.ROOT, "locks: %d, acquisitions: %d (timed out %d, indeterminate %d),"
                        + " simulated holder stalls: %d%n"
                        + "fenced writes accepted: %d, stale writes rejected by the resource: %d%n"
                        + "guarded Rota writes applied: %d, refused: %d (of them from a stale holder, a later holder"
                        + " had acquired: %d), indeterminate: %d%n"
                        + "overlaps observed (a critical section began before another holder's ended): %d%n"
                        + "lock violations with fencing (accepted writes that broke token order): %d%n"
                        + "token order violations (a token handed out twice, or lower than one acquired"
                        + " before): %d%n"
                        + "stale guarded Rota writes applied: %d%n"
                        + "holders whose safe windows overlap (a higher token acquired before a lower one's"
                        + " safe-until, release or stall): %d%n"
                        + "doomed operations while holding (issue 31): refused %d, outcome unknown %d,"
                        + " succeeded (must not): %d%n"
                        + "violations: %d%n%s",
                byLock.size(), total.acquisitions, total.acquireTimeouts, total.acquireUnknown, total.stalls,
                total.accepted, total.rejected, total.guardApplied, total.guardRefused, total.staleGuardRefused,
                total.guardUnknown, total.overlaps, total.fencingViolations, total.tokenOrderViolations,
                total.staleGuardApplied, total.safeUntilOverlaps, total.doomedRefused, total.doomedUnknown,
                total.doomedSucceeded, violations, details);
        return new CheckReport(violations == 0 ? Verdict.YES : Verdict.NO, report);
    }

    /** The counts over every lock. */
    private static final class Figures {
        long acquisitions;
        long acquireTimeouts;
        long acquireUnknown;
        long stalls;
        long accepted;
        long rejected;
        long guardApplied;
        long guardRefused;
        long staleGuardRefused;
        long guardUnknown;
        long overlaps;
        long fencingViolations;
        long tokenOrderViolations;
        long staleGuardApplied;
        long safeUntilOverlaps;
        long doomedRefused;
        long doomedUnknown;
        long doomedSucceeded;
    }

    /**
     * One holder's tenure: from its acquire's completion until the first of its safe-until (the latest one it
     * recorded), its release's invocation and its stall's invocation (the simulated pause revokes the lease:
     * from then on the holder knows nothing is promised). No later holder may acquire before that end.
     */
    private static final class Tenure {
        final int process;
        final long token;
        final long acquired;
        long safeUntil = Long.MIN_VALUE;
        long given = Long.MAX_VALUE;

        Tenure(int process, long token, long acquired) {
            this.process = process;
            this.token = token;
            this.acquired = acquired;
        }

        long end() {
            return Math.min(safeUntil, given);
        }
    }

    /** One completed operation: who, which token, when it was invoked and when it completed. */
    private record Done(int process, long token, long invoked, long completed) {
    }

    /** The highest token among operations completed strictly before a time (sorted by completion). */
    private static final class HighestBefore {
        private final long[] completed;
        private final long[] prefixMax;

        HighestBefore(List<Done> ops) {
            List<Done> sorted = new ArrayList<>(ops);
            sorted.sort(Comparator.comparingLong(Done::completed));
            completed = new long[sorted.size()];
            prefixMax = new long[sorted.size()];
            long max = Long.MIN_VALUE;
            for (int i = 0; i < sorted.size(); i++) {
                completed[i] = sorted.get(i).completed();
                max = Math.max(max, sorted.get(i).token());
                prefixMax[i] = max;
            }
        }

        long at(long time) {
            int i = Arrays.binarySearch(completed, time);
            int n = i >= 0 ? lowerBound(i, time) : -i - 1;   // how many completed strictly before time
            return n == 0 ? Long.MIN_VALUE : prefixMax[n - 1];
        }

        private int lowerBound(int found, long time) {
            int i = found;
            while (i > 0 && completed[i - 1] == time) {
                i--;
            }
            return i;
        }
    }

    private static void checkLock(String lock, List<Event> events, Figures total, StringBuilder details) {
        Map<Integer, Long> invokedAt = new HashMap<>();
        Map<Integer, long[]> openWindow = new HashMap<>();   // process -> {token, acquired}
        Map<Integer, Long> lastEventAt = new HashMap<>();
        List<long[]> windows = new ArrayList<>();             // {start, end, token}
        List<Done> acquisitions = new ArrayList<>();
        List<Done> guardsApplied = new ArrayList<>();
        List<Done> guardsRefused = new ArrayList<>();
        Map<Integer, Tenure> tenure = new HashMap<>();
        List<Tenure> tenures = new ArrayList<>();
        long highestAccepted = Long.MIN_VALUE;
        for (Event e : events) {
            int p = e.process();
            lastEventAt.put(p, e.time());
            if (e.type() == Event.Type.INVOKE) {
                invokedAt.put(p, e.time());
                if (e.f().equals("release") && openWindow.containsKey(p)) {
                    long[] w = openWindow.remove(p);
                    windows.add(new long[]{w[1], e.time(), w[0]});
                }
                if ((e.f().equals("release") || e.f().equals("stall")) && tenure.containsKey(p)) {
                    Tenure t = tenure.get(p);
                    t.given = Math.min(t.given, e.time());
                }
                continue;
            }
            long invoked = invokedAt.getOrDefault(p, e.time());
            switch (e.f() + "/" + e.type()) {
                case "acquire/OK" -> {
                    long token = token(e);
                    total.acquisitions++;
                    acquisitions.add(new Done(p, token, invoked, e.time()));
                    openWindow.put(p, new long[]{token, e.time()});
                    Tenure t = new Tenure(p, token, e.time());
                    tenure.put(p, t);
                    tenures.add(t);
                }
                case "safe-until/OK" -> {
                    Tenure t = tenure.get(p);
                    if (t != null) {
                        t.safeUntil = Math.max(t.safeUntil, Long.parseLong(String.valueOf(e.value())));
                    }
                }
                case "acquire/FAIL" -> total.acquireTimeouts++;
                case "acquire/INFO" -> total.acquireUnknown++;
                case "stall/OK", "stall/INFO" -> total.stalls++;
                case "write/OK" -> {
                    long token = token(e);
                    total.accepted++;
                    if (token < highestAccepted) {
                        total.fencingViolations++;
                        details.append(String.format(Locale.ROOT, "  %s: the resource accepted token %d from"
                                        + " process %d at %.3f s after it had accepted token %d%n", lock, token, p,
                                e.time() / 1e9, highestAccepted));
                    }
                    highestAccepted = Math.max(highestAccepted, token);
                }
                case "write/FAIL" -> total.rejected++;
                case "guard/OK" -> (Boolean.TRUE.equals(e.result()) ? guardsApplied : guardsRefused)
                        .add(new Done(p, token(e), invoked, e.time()));
                case "guard/INFO" -> total.guardUnknown++;
                case "doomed/FAIL" -> total.doomedRefused++;
                case "doomed/INFO" -> total.doomedUnknown++;
                case "doomed/OK" -> {
                    total.doomedSucceeded++;
                    details.append(String.format(Locale.ROOT, "  %s: process %d's doomed operation '%s' succeeded at"
                            + " %.3f s (it must be refused)%n", lock, p, e.value(), e.time() / 1e9));
                }
                default -> { }
            }
        }
        openWindow.forEach((p, w) -> windows.add(new long[]{w[1], lastEventAt.get(p), w[0]}));
        total.overlaps += overlaps(windows);
        total.tokenOrderViolations += tokenOrder(lock, acquisitions, details);
        total.safeUntilOverlaps += safeUntilOverlaps(lock, tenures, details);
        HighestBefore acquired = new HighestBefore(acquisitions);
        HighestBefore applied = new HighestBefore(guardsApplied);
        for (Done g : guardsApplied) {
            total.guardApplied++;
            long later = Math.max(acquired.at(g.invoked()), applied.at(g.invoked()));
            if (later > g.token()) {
                total.staleGuardApplied++;
                details.append(String.format(Locale.ROOT, "  %s: a guarded write with token %d (process %d, invoked"
                                + " at %.3f s) applied after token %d had been acquired or written%n", lock,
                        g.token(), g.process(), g.invoked() / 1e9, later));
            }
        }
        for (Done g : guardsRefused) {
            total.guardRefused++;
            if (acquired.at(g.invoked()) > g.token()) {
                total.staleGuardRefused++;
            }
        }
    }

    /** Tokens handed out twice, and acquisitions that completed before another began yet have a higher token. */
    private static long tokenOrder(String lock, List<Done> acquisitions, StringBuilder details) {
        long violations = 0;
        Set<Long> seen = new HashSet<>();
        for (Done a : acquisitions) {
            if (!seen.add(a.token())) {
                violations++;
                details.append(String.format(Locale.ROOT, "  %s: token %d handed out twice (again to process %d at"
                        + " %.3f s)%n", lock, a.token(), a.process(), a.completed() / 1e9));
            }
        }
        HighestBefore before = new HighestBefore(acquisitions);
        for (Done a : acquisitions) {
            long earlier = before.at(a.invoked());
            if (earlier > a.token()) {
                violations++;
                details.append(String.format(Locale.ROOT, "  %s: process %d acquired token %d at %.3f s, lower than"
                                + " token %d acquired before its acquire began%n", lock, a.process(), a.token(),
                        a.completed() / 1e9, earlier));
            }
        }
        return violations;
    }

    /**
     * Holders that acquired while a holder with a lower token was still within its tenure (before its
     * safe-until, release or stall): the lease under the lower token expired early, or the lock let two in.
     * Tenures without a recorded safe-until (older histories) are not judged.
     */
    private static long safeUntilOverlaps(String lock, List<Tenure> tenures, StringBuilder details) {
        List<Tenure> byToken = new ArrayList<>(tenures);
        byToken.sort(Comparator.comparingLong(t -> t.token));
        long violations = 0;
        Tenure latestEnding = null;   // among strictly lower tokens
        int i = 0;
        while (i < byToken.size()) {
            int j = i;
            while (j < byToken.size() && byToken.get(j).token == byToken.get(i).token) {
                Tenure b = byToken.get(j);
                if (latestEnding != null && b.acquired < latestEnding.end()) {
                    violations++;
                    details.append(String.format(Locale.ROOT, "  %s: process %d acquired token %d at %.3f s, while"
                                    + " process %d's tenure with token %d lasted until %.3f s (safe-until %.3f s)%n",
                            lock, b.process, b.token, b.acquired / 1e9, latestEnding.process, latestEnding.token,
                            latestEnding.end() / 1e9, latestEnding.safeUntil / 1e9));
                }
                j++;
            }
            for (int k = i; k < j; k++) {
                Tenure a = byToken.get(k);
                if (a.safeUntil != Long.MIN_VALUE && (latestEnding == null || a.end() > latestEnding.end())) {
                    latestEnding = a;
                }
            }
            i = j;
        }
        return violations;
    }

    /** How many critical sections began before an earlier-begun one (of another holder) had ended. */
    private static long overlaps(List<long[]> windows) {
        windows.sort(Comparator.comparingLong(w -> w[0]));
        long count = 0;
        long latestEnd = Long.MIN_VALUE;
        for (long[] w : windows) {
            if (w[0] < latestEnd) {
                count++;
            }
            latestEnd = Math.max(latestEnd, w[1]);
        }
        return count;
    }

    private static long token(Event e) {
        return Long.parseLong(String.valueOf(e.value()));
    }
}
