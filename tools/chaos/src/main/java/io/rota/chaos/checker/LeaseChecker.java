package io.rota.chaos.checker;

import io.rota.chaos.history.Event;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * The lease workload's checks on its history (pure: events in, verdict and report out; the events are those
 * io.rota.chaos.workload.LeaseWorkload records, described there). The properties (docs/server.md, "Leases: how
 * late can a dead holder's lease expire?"):
 * <ol>
 *   <li><b>never early</b>: a read that completed before the holder's safe-until (the latest one recorded for
 *       the lease) must not find the key gone, whatever the SDK reported meanwhile (onLost is no excuse);</li>
 *   <li><b>not too late</b>: once its holder stops, the key vanishes within {@link #bound} — a leader killed,
 *       paused or cut off meanwhile is no excuse. Only a spell without a majority (two of three members
 *       killed: nothing can expire) is: a lease whose window overlaps one is reported, not judged.</li>
 * </ol>
 * A kept-alive key that vanishes after its safe-until (keep-alives failing under a fault) is counted in the
 * report, not judged.
 */
public final class LeaseChecker {

    private LeaseChecker() {
    }

    /**
     * How long after its holder stopped a lease's key may still be there: TTL + 3E + 1 s (E: the election
     * timeout; the server's bound for one change of a silent leader: E of grace, up to 2 × E to elect, a vote
     * round and a checkpoint interval), plus {@code slack} for a keep-alive in flight and for the polling.
     *
     * @param ttl      the leases' TTL
     * @param election the cluster's election timeout E
     * @param slack    the allowance for a keep-alive in flight and the polling
     * @return the bound
     */
    public static Duration bound(Duration ttl, Duration election, Duration slack) {
        return ttl.plus(election.multipliedBy(3)).plus(Duration.ofSeconds(1)).plus(slack);
    }

    /**
     * Checks a lease history against the two properties.
     *
     * @param history the events
     * @param ttl     the TTL every lease was granted with
     * @param bound   how long after its holder stopped a lease's key may still be there ({@link #bound})
     * @return the verdict (NO on any violation) and a report with expiry times
     */
    public static CheckReport check(List<Event> history, Duration ttl, Duration bound) {
        long boundNanos = bound.toNanos();
        List<Fault> faults = faults(history);
        Map<String, List<Event>> byKey = new TreeMap<>();
        for (Event e : history) {
            if (!e.isNemesis()) {
                byKey.computeIfAbsent(e.key(), k -> new ArrayList<>()).add(e);
            }
        }
        StringBuilder violations = new StringBuilder();
        StringBuilder excused = new StringBuilder();
        List<Long> expiries = new ArrayList<>();
        int leases = 0;
        int withSafeUntil = 0;
        int vanishedAfterSafeUntil = 0;
        int problems = 0;
        for (Map.Entry<String, List<Event>> entry : byKey.entrySet()) {
            Lifecycle l = Lifecycle.of(entry.getValue());
            if (l.putDone < 0) {
                continue;   // the put never succeeded: nothing to hold
            }
            leases++;
            if (l.safeUntil != Long.MIN_VALUE) {
                withSafeUntil++;
            }
            boolean keptAliveVanish = false;
            for (long[] read : l.reads) {   // {invoke, complete, present ? 1 : 0}
                if (read[0] <= l.putDone || read[2] == 1) {
                    continue;
                }
                if (read[1] < l.safeUntil) {
                    problems++;
                    violations.append(String.format(Locale.ROOT, "  %s found gone by a read that completed at %.3f s,"
                                    + " before its holder's safe-until %.3f s (an early expiry)%s%n", entry.getKey(),
                            read[1] / 1e9, l.safeUntil / 1e9, l.lostAt >= 0 && l.lostAt < read[1]
                                    ? String.format(Locale.ROOT, "; onLost at %.3f s is no excuse", l.lostAt / 1e9) : ""));
                } else if (l.stopInvoked < 0 || read[1] < l.stopInvoked) {
                    keptAliveVanish = true;
                }
            }
            if (keptAliveVanish) {
                vanishedAfterSafeUntil++;
            }
            if (l.stopDone < 0) {
                continue;
            }
            long deadline = l.stopDone + boundNanos;
            long gone = -1;
            for (long[] read : l.reads) {
                if (read[0] > l.stopDone && read[2] == 0) {
                    gone = read[1];
                    break;
                }
            }
            long lastPresentInvoked = -1;
            for (long[] read : l.reads) {
                if (read[2] == 1) {
                    lastPresentInvoked = Math.max(lastPresentInvoked, read[0]);
                }
            }
            if (gone >= 0) {
                expiries.add(gone - l.stopDone);
            }
            if (lastPresentInvoked > deadline) {
                List<Fault> during = overlapping(faults, l.stopDone - ttl.toNanos(), lastPresentInvoked);
                boolean noMajority = during.stream().anyMatch(Fault::majorityLost);
                String line = String.format(Locale.ROOT, "  %s still present at %.3f s, %.3f s after its holder"
                                + " stopped at %.3f s (bound %.1f s)%s; faults meanwhile: %s%n", entry.getKey(),
                        lastPresentInvoked / 1e9, (lastPresentInvoked - l.stopDone) / 1e9, l.stopDone / 1e9,
                        boundNanos / 1e9, noMajority ? ", no majority for a while: not judged" : "",
                        during.isEmpty() ? "none" : String.join("; ", during.stream().map(Fault::describe).toList()));
                if (noMajority) {
                    excused.append(line);
                } else {
                    problems++;
                    violations.append(line);
                }
            }
        }
        expiries.sort(null);
        StringBuilder report = new StringBuilder();
        report.append(String.format(Locale.ROOT, "leases held: %d (safe-until recorded for %d), expiries observed:"
                        + " %d, bound TTL + 3E + 1 s + slack = %.1f s%n", leases, withSafeUntil, expiries.size(),
                boundNanos / 1e9));
        if (!expiries.isEmpty()) {
            report.append(String.format(Locale.ROOT, "expiry after the holder stopped (upper bound, polled):"
                            + " median %.2f s, p99 %.2f s, max %.2f s%n",
                    expiries.get(expiries.size() / 2) / 1e9, expiries.get((int) (expiries.size() * 0.99)) / 1e9,
                    expiries.get(expiries.size() - 1) / 1e9));
        }
        report.append(String.format(Locale.ROOT, "kept-alive keys gone after their safe-until (keep-alives failing;"
                + " not judged): %d%n", vanishedAfterSafeUntil));
        report.append("violations: ").append(problems).append('\n').append(violations);
        if (!excused.isEmpty()) {
            report.append("late while the cluster had no majority (not judged):\n").append(excused);
        }
        return new CheckReport(problems == 0 ? Verdict.YES : Verdict.NO, report.toString());
    }

    /** One lease's times, from its key's events (-1: did not happen). */
    private static final class Lifecycle {
        long putDone = -1;
        long safeUntil = Long.MIN_VALUE;
        long stopInvoked = -1;
        long stopDone = -1;
        long lostAt = -1;
        final List<long[]> reads = new ArrayList<>();

        static Lifecycle of(List<Event> events) {
            Lifecycle l = new Lifecycle();
            Map<Integer, Long> readInvoked = new java.util.HashMap<>();
            for (Event e : events) {
                switch (e.f() + "/" + e.type()) {
                    case "write/OK" -> l.putDone = e.time();
                    case "stop/INVOKE" -> l.stopInvoked = e.time();
                    case "stop/OK" -> l.stopDone = e.time();
                    case "lost/OK" -> l.lostAt = e.time();
                    case "safe-until/OK" -> l.safeUntil = Math.max(l.safeUntil, Long.parseLong((String) e.value()));
                    case "read/INVOKE" -> readInvoked.put(e.process(), e.time());
                    case "read/OK" -> l.reads.add(new long[]{readInvoked.getOrDefault(e.process(), e.time()), e.time(),
                            e.value() != null ? 1 : 0});
                    default -> { }
                }
            }
            return l;
        }
    }

    /**
     * A fault spell from the history's nemesis events.
     *
     * @param from         when it was injected
     * @param to           when it was healed (MAX_VALUE: never)
     * @param description  what the nemesis did
     * @param majorityLost whether two members were down (the nemesis's "kill -9 a, b")
     */
    private record Fault(long from, long to, String description, boolean majorityLost) {
        String describe() {
            return String.format(Locale.ROOT, "%s at %.3f s", description, from / 1e9);
        }
    }

    /** The fault spells, each up to its heal (a fault without a heal lasts to the end). */
    private static List<Fault> faults(List<Event> history) {
        List<Fault> faults = new ArrayList<>();
        Event open = null;
        for (Event e : history) {
            if (!e.isNemesis()) {
                continue;
            }
            if (e.f().equals("heal")) {
                if (open != null) {
                    faults.add(fault(open, e.time()));
                }
                open = null;
            } else if (open == null && !e.f().equals("error")) {
                open = e;
            }
        }
        if (open != null) {
            faults.add(fault(open, Long.MAX_VALUE));
        }
        return faults;
    }

    private static Fault fault(Event e, long healed) {
        String what = String.valueOf(e.value());
        return new Fault(e.time(), healed, what, what.startsWith("kill -9") && what.contains(","));
    }

    private static List<Fault> overlapping(List<Fault> faults, long from, long to) {
        return faults.stream().filter(f -> f.from() <= to && f.to() >= from).toList();
    }
}
