package io.rota.chaos.checker;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * A linearizability checker for a key-value store whose keys are registers with read, write and
 * compare-and-set ({@link RegisterModel}). Pure: no I/O, no threads, no clock.
 *
 * <p>Linearizability is compositional (Herlihy and Wing, "P-compositionality" in Lowe's terms), so each key is
 * checked on its own. Per key it runs the Wing–Gong search with Lowe's memoization ("Testing for
 * linearizability", 2017; the algorithm of Porcupine and Knossos' "wgl"): the invocations and completions are
 * laid out in time order in a doubly linked list; the search repeatedly takes the earliest pending invocation
 * that the model accepts in the current state, lifts it and its completion out of the list, and backtracks
 * when it meets a completion whose operation is not yet linearized. A configuration (set of linearized
 * operations, register value) seen before is never explored again.
 *
 * <p>Indeterminate operations ({@link Operation.Outcome#INFO}) complete at infinity: they may take effect at
 * any point after their invocation, or never; the search succeeds once every acknowledged operation is
 * linearized. Reads that did not complete have no effect and are ignored.
 *
 * <p>Indeterminate writes dominate the search's cost (each one may be placed anywhere later). Values are unique
 * per write, which allows two reductions. An indeterminate write whose value some acknowledged operation
 * observed certainly took effect before that observer completed, so it is checked as an acknowledged write
 * ending there (shown as "ok" in reports). One whose value nobody observed is first left out: leaving it out can
 * only turn a YES into a NO, never hide a violation, and a NO found that way is re-checked with such writes
 * put back (those that a failed cas could follow; at most {@link #MAX_PUT_BACK} of them, else UNKNOWN).
 *
 * <p>The search is bounded: past {@code stepBudget} steps, or past {@code memoBudgetBytes} of memoized
 * configurations, the key's verdict is {@link Verdict#UNKNOWN}.
 */
public final class LinearizabilityChecker {

    /** Default step budget per key. */
    public static final long DEFAULT_STEP_BUDGET = 20_000_000;
    /** Default bound on the memory of remembered configurations per key. */
    public static final long DEFAULT_MEMO_BUDGET_BYTES = 512L << 20;
    /** How many linearized operations a violation report shows before the one that could not be placed. */
    static final int WINDOW = 8;
    /** At most this many concurrent operations are listed in a violation report. */
    static final int MAX_CONCURRENT_SHOWN = 16;
    /**
     * At most this many unobserved indeterminate writes are put back to confirm a violation (each may be
     * placed anywhere after its invocation, so the search doubles with each); beyond it the verdict is UNKNOWN.
     */
    static final int MAX_PUT_BACK = 12;

    private final long stepBudget;
    private final long memoBudgetBytes;

    /** A checker with the default budgets. */
    public LinearizabilityChecker() {
        this(DEFAULT_STEP_BUDGET, DEFAULT_MEMO_BUDGET_BYTES);
    }

    /**
     * A checker with the given budgets.
     *
     * @param stepBudget      search steps allowed per key before giving up with UNKNOWN
     * @param memoBudgetBytes approximate memory allowed for memoized configurations per key
     */
    public LinearizabilityChecker(long stepBudget, long memoBudgetBytes) {
        if (stepBudget <= 0 || memoBudgetBytes <= 0) {
            throw new IllegalArgumentException("budgets must be positive");
        }
        this.stepBudget = stepBudget;
        this.memoBudgetBytes = memoBudgetBytes;
    }

    /**
     * Checks a history of operations on any number of keys, each key on its own.
     *
     * @param operations the history (any order)
     * @return the combined verdict and one result per key
     */
    public CheckResult check(List<Operation> operations) {
        Map<String, List<Operation>> byKey = new TreeMap<>();
        for (Operation op : operations) {
            byKey.computeIfAbsent(op.key(), k -> new ArrayList<>()).add(op);
        }
        List<KeyResult> results = new ArrayList<>();
        Verdict verdict = Verdict.YES;
        for (Map.Entry<String, List<Operation>> e : byKey.entrySet()) {
            KeyResult r = checkKey(e.getKey(), e.getValue());
            results.add(r);
            verdict = verdict.and(r.verdict());
        }
        return new CheckResult(verdict, results);
    }

    /**
     * Checks one key's operations (all must be on {@code key}); the register starts absent.
     *
     * @param key        the key
     * @param operations its operations, any order
     * @return the verdict, with a window of the offending operations for a violation
     */
    public KeyResult checkKey(String key, List<Operation> operations) {
        List<Operation> relevant = new ArrayList<>();
        for (Operation op : operations) {
            if (!op.key().equals(key)) {
                throw new IllegalArgumentException("operation " + op + " is not on key " + key);
            }
            if (!(op.fn() == Operation.Fn.READ && op.outcome() == Operation.Outcome.INFO)) {
                relevant.add(op);
            }
        }
        List<Operation> tightened = withObservedWritesCompleted(relevant);
        List<Operation> pruned = withoutIrrelevantIndeterminateWrites(tightened, true);
        KeyResult result = new Search(key, pruned).run();
        if (result.verdict() == Verdict.NO && pruned.size() < tightened.size()) {
            List<Operation> full = withoutIrrelevantIndeterminateWrites(tightened, false);
            int putBack = full.size() - pruned.size();
            if (putBack == 0) {
                return result;
            }
            if (putBack > MAX_PUT_BACK) {
                return new KeyResult(key, Verdict.UNKNOWN, result.operations(), result.steps(), result.stateBefore(),
                        result.linearized(), result.stuck(), result.concurrent(), "unknown: NOT linearizable if none"
                        + " of " + putBack + " unobserved indeterminate writes took effect; too many to search with"
                        + " them in: " + result.message());
            }
            result = new Search(key, full).run();
        }
        return result;
    }

    /**
     * Values are unique per write, so an indeterminate write (or cas) of a value that an acknowledged
     * operation observed (a read of it, a successful cas from it) did take effect, and before the first such
     * observer completed: it becomes an acknowledged one ending there. Sound: every linearization of the
     * original has the write before that observer. Values written more than once are left alone.
     */
    private static List<Operation> withObservedWritesCompleted(List<Operation> ops) {
        Map<String, Integer> writers = new HashMap<>();
        Map<String, Long> firstObserved = new HashMap<>();
        for (Operation op : ops) {
            if (op.fn() != Operation.Fn.READ) {
                writers.merge(op.value(), 1, Integer::sum);
            }
            String observed = op.fn() == Operation.Fn.READ ? op.value()
                    : op.fn() == Operation.Fn.CAS && op.casSucceeded() ? op.expected() : null;
            if (observed != null && op.outcome() == Operation.Outcome.OK) {
                firstObserved.merge(observed, op.completeNanos(), Math::min);
            }
        }
        List<Operation> out = new ArrayList<>(ops.size());
        for (Operation op : ops) {
            Long by = op.fn() == Operation.Fn.READ ? null : firstObserved.get(op.value());
            if (op.outcome() == Operation.Outcome.INFO && by != null && by >= op.invokeNanos()
                    && writers.get(op.value()) == 1) {
                op = new Operation(op.id(), op.process(), op.fn(), op.key(), op.value(), op.expected(),
                        Operation.Outcome.OK, op.fn() == Operation.Fn.CAS, op.invokeNanos(), by);
            }
            out.add(op);
        }
        return out;
    }

    /**
     * Drops indeterminate writes and cas whose value nothing observes. With {@code all}, every such one;
     * otherwise only those no failed cas could follow (only a failed comparison can tell that the value was
     * replaced by one nobody saw, so without such a cas the write changes nothing observable).
     */
    private static List<Operation> withoutIrrelevantIndeterminateWrites(List<Operation> ops, boolean all) {
        Set<String> observed = new HashSet<>();
        long lastFailedCasCompletion = Long.MIN_VALUE;
        for (Operation op : ops) {
            if (op.fn() == Operation.Fn.READ) {
                observed.add(op.value());
            } else if (op.fn() == Operation.Fn.CAS) {
                observed.add(op.expected());
                if (op.outcome() == Operation.Outcome.OK && !op.casSucceeded()) {
                    lastFailedCasCompletion = Math.max(lastFailedCasCompletion, op.completeNanos());
                }
            }
        }
        List<Operation> kept = new ArrayList<>(ops.size());
        for (Operation op : ops) {
            boolean irrelevant = op.outcome() == Operation.Outcome.INFO && op.fn() != Operation.Fn.READ
                    && !observed.contains(op.value()) && (all || op.invokeNanos() >= lastFailedCasCompletion);
            if (!irrelevant) {
                kept.add(op);
            }
        }
        return kept;
    }

    /** An invocation or completion in the time-ordered list (dancing links: lifted out, put back on backtrack). */
    private static final class Entry {
        final int index;
        final boolean isCall;
        final long time;
        Entry match;
        Entry prev;
        Entry next;

        Entry(int index, boolean isCall, long time) {
            this.index = index;
            this.isCall = isCall;
            this.time = time;
        }
    }

    /** A configuration of the search: which operations are linearized, and the register's value then. */
    private record Memo(BitSet linearized, Object state) {
    }

    /** A linearized call and the state before it, to undo on backtrack. */
    private record Frame(Entry call, Object stateBefore) {
    }

    /** One key's search. */
    private final class Search {
        private final String key;
        private final List<Operation> ops;
        private final Entry head = new Entry(-1, true, Long.MIN_VALUE);

        // The deepest point reached, for the violation report.
        private int deepest = -1;
        private List<Operation> deepestWindow = List.of();
        private Object deepestStateBefore;
        private Operation deepestStuck;
        private List<Operation> deepestConcurrent = List.of();

        Search(String key, List<Operation> ops) {
            this.key = key;
            this.ops = ops;
            List<Entry> entries = new ArrayList<>(2 * ops.size());
            for (int i = 0; i < ops.size(); i++) {
                Entry call = new Entry(i, true, ops.get(i).invokeNanos());
                Entry ret = new Entry(i, false, ops.get(i).completeNanos());
                call.match = ret;
                ret.match = call;
                entries.add(call);
                entries.add(ret);
            }
            // At equal times invocations go first: such operations count as concurrent (the lenient reading).
            entries.sort(Comparator.comparingLong((Entry e) -> e.time).thenComparing(e -> !e.isCall));
            Entry prev = head;
            for (Entry e : entries) {
                prev.next = e;
                e.prev = prev;
                prev = e;
            }
        }

        KeyResult run() {
            int acknowledged = 0;
            for (Operation op : ops) {
                if (op.outcome() == Operation.Outcome.OK) {
                    acknowledged++;
                }
            }
            long bitsBytes = ops.size() / 8 + 64;
            long memoLimit = Math.max(1, memoBudgetBytes / (bitsBytes + 64));
            Set<Memo> seen = new HashSet<>();
            Deque<Frame> stack = new ArrayDeque<>();
            BitSet linearized = new BitSet(ops.size());
            Object state = null;
            int remaining = acknowledged;
            long steps = 0;
            Entry entry = head.next;
            while (remaining > 0) {
                if (++steps > stepBudget || seen.size() > memoLimit) {
                    String why = steps > stepBudget ? stepBudget + " steps" : seen.size() + " remembered configurations";
                    return new KeyResult(key, Verdict.UNKNOWN, ops.size(), steps, null, List.of(), null, List.of(),
                            "unknown: the search gave up after " + why + " (" + ops.size() + " operations)");
                }
                if (entry.isCall) {
                    Operation op = ops.get(entry.index);
                    Object next = RegisterModel.step(state, op);
                    boolean advanced = false;
                    if (next != RegisterModel.ILLEGAL) {
                        BitSet after = (BitSet) linearized.clone();
                        after.set(entry.index);
                        if (seen.add(new Memo(after, next))) {
                            stack.push(new Frame(entry, state));
                            linearized.set(entry.index);
                            state = next;
                            if (op.outcome() == Operation.Outcome.OK) {
                                remaining--;
                            }
                            lift(entry);
                            entry = head.next;
                            advanced = true;
                        }
                    }
                    if (!advanced) {
                        entry = entry.next;
                    }
                } else {
                    // A completion whose operation is not linearized yet: this branch is dead.
                    remember(stack, entry, linearized);
                    if (stack.isEmpty()) {
                        return violation(ops.size(), steps);
                    }
                    Frame top = stack.pop();
                    state = top.stateBefore();
                    linearized.clear(top.call().index);
                    if (ops.get(top.call().index).outcome() == Operation.Outcome.OK) {
                        remaining++;
                    }
                    unlift(top.call());
                    entry = top.call().next;
                }
            }
            return new KeyResult(key, Verdict.YES, ops.size(), steps, null, List.of(), null, List.of(),
                    "linearizable (" + ops.size() + " operations, " + steps + " steps)");
        }

        /** Records the window around a dead end if it is the deepest so far. */
        private void remember(Deque<Frame> stack, Entry stuckReturn, BitSet linearized) {
            if (stack.size() <= deepest) {
                return;
            }
            deepest = stack.size();
            List<Operation> window = new ArrayList<>(WINDOW);
            Object before = null;
            int n = 0;
            for (Frame f : stack) {   // top first
                if (n == WINDOW) {
                    break;
                }
                window.add(0, ops.get(f.call().index));
                before = f.stateBefore();
                n++;
            }
            deepestWindow = window;
            deepestStateBefore = before;
            Operation stuck = ops.get(stuckReturn.index);
            deepestStuck = stuck;
            List<Operation> concurrent = new ArrayList<>();
            for (Entry e = head.next; e != null && e.time < stuck.completeNanos()
                    && concurrent.size() < MAX_CONCURRENT_SHOWN; e = e.next) {
                if (e.isCall && e.index != stuckReturn.index && !linearized.get(e.index)) {
                    concurrent.add(ops.get(e.index));
                }
            }
            deepestConcurrent = concurrent;
        }

        private KeyResult violation(int size, long steps) {
            return new KeyResult(key, Verdict.NO, size, steps,
                    deepestStateBefore == null ? null : deepestStateBefore.toString(), deepestWindow, deepestStuck,
                    deepestConcurrent, "NOT linearizable: " + deepestStuck + " has no legal place (" + size
                            + " operations, " + steps + " steps)");
        }

        private void lift(Entry call) {
            call.prev.next = call.next;
            call.next.prev = call.prev;   // a call's completion follows it, so call.next is never null
            Entry ret = call.match;
            ret.prev.next = ret.next;
            if (ret.next != null) {
                ret.next.prev = ret.prev;
            }
        }

        private void unlift(Entry call) {
            Entry ret = call.match;
            ret.prev.next = ret;
            if (ret.next != null) {
                ret.next.prev = ret;
            }
            call.prev.next = call;
            call.next.prev = call;
        }
    }
}
