package io.rota.server.fuzz;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.LongAdder;

/**
 * Thread-safe counters by name (frames by kind, answers by code, connection outcomes), plus a bounded
 * sample of problems: what a fuzz run prints and what its assertions read.
 */
public final class Tally {

    private static final int MAX_PROBLEMS = 20;

    private final Map<String, LongAdder> counts = new ConcurrentHashMap<>();
    private final ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();
    private final LongAdder problemCount = new LongAdder();

    /** Adds one to {@code name}. */
    public void add(String name) {
        add(name, 1);
    }

    /** Adds {@code n} to {@code name}. */
    public void add(String name, long n) {
        counts.computeIfAbsent(name, k -> new LongAdder()).add(n);
    }

    /** The count of {@code name} (0 if never added). */
    public long get(String name) {
        LongAdder a = counts.get(name);
        return a == null ? 0 : a.sum();
    }

    /** The sum of every counter whose name starts with {@code prefix}. */
    public long sum(String prefix) {
        long s = 0;
        for (Map.Entry<String, LongAdder> e : counts.entrySet()) {
            if (e.getKey().startsWith(prefix)) {
                s += e.getValue().sum();
            }
        }
        return s;
    }

    /** Records a problem (an assertion reads {@link #problemCount()}); the first few are kept verbatim. */
    public void problem(String description) {
        problemCount.increment();
        if (problems.size() < MAX_PROBLEMS) {
            problems.add(description);
        }
    }

    /** How many problems were recorded. */
    public long problemCount() {
        return problemCount.sum();
    }

    /** Every counter, sorted by name, one per line, then the sampled problems. */
    public String report() {
        StringBuilder s = new StringBuilder();
        Map<String, Long> sorted = new TreeMap<>();
        counts.forEach((k, v) -> sorted.put(k, v.sum()));
        sorted.forEach((k, v) -> s.append(String.format("  %-48s %,d%n", k, v)));
        s.append("  problems: ").append(problemCount.sum()).append('\n');
        problems.forEach(p -> s.append("    ").append(p).append('\n'));
        return s.toString();
    }
}
