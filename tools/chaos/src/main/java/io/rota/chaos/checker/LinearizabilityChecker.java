package io.rota.chaos.checker;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
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
 * <p>Indeterminate writes dominate the search's cost: each may be placed anywhere after its invocation, or
 * nowhere, so n of them concurrent with everything after them make 2^n sets of "which took effect". Values are
 * unique per write, which allows these reductions, all exact (none changes a verdict):
 * <ol>
 *   <li>An indeterminate write whose value some acknowledged operation observed certainly took effect before
 *       that observer completed, so it is checked as an acknowledged write ending there (shown as "ok" in
 *       reports).</li>
 *   <li>A value that no operation still to be linearized reads or expects (in a cas) is <i>dead</i>: whichever
 *       dead value the register holds, every later operation behaves the same, so the search's state is one
 *       token, {@link #UNOBSERVED}, for all of them. A dead value stays dead as the search goes forward.</li>
 *   <li>Indeterminate writes of dead values are therefore interchangeable but for their invocation times (a
 *       cas also by the value it expects): of those, the search only places the earliest-invoked one not yet
 *       placed (if any schedule works, this one does: the k-th such write can be placed where the k-th of any
 *       schedule was, since at least k of them had been invoked by then).</li>
 *   <li>An indeterminate operation that would change nothing (the state already dead, a cas whose comparison
 *       fails) is never placed; one that never can again (a cas expecting a value that is gone for good) is
 *       forgotten: the memo records only the indeterminate operations that may still take effect.</li>
 * </ol>
 * Writes of values nobody ever observes are first left out altogether; a violation found that way is
 * re-checked with those a failed cas could follow put back (only a failed comparison can tell that the value
 * was replaced by one nobody saw).
 *
 * <p>The memo's configurations are compact: the acknowledged operations by rank of invocation as "every one
 * below rank f, and these after it" (f grows as the search moves through time), the indeterminate ones as a
 * bitset of those that may still take effect.
 *
 * <p>The search is bounded: past {@code stepBudget} steps (its measure of time, deterministic so that a
 * history always gets the same verdict; about 150 ns each), or past {@code memoBudgetBytes} of memoized
 * configurations, the key's verdict is {@link Verdict#UNKNOWN}; nothing else gives up.
 */
public final class LinearizabilityChecker {

    /** Default step budget per key: about half a minute. */
    public static final long DEFAULT_STEP_BUDGET = 200_000_000;
    /** Default bound on the memory of remembered configurations per key. */
    public static final long DEFAULT_MEMO_BUDGET_BYTES = 512L << 20;
    /** How many linearized operations a violation report shows before the one that could not be placed. */
    static final int WINDOW = 8;
    /** At most this many concurrent operations are listed in a violation report. */
    static final int MAX_CONCURRENT_SHOWN = 16;
    /** The search's state when the register holds a value no operation observes (see the class comment). */
    static final Object UNOBSERVED = new Object() {
        @Override
        public String toString() {
            return "<a value no read observed>";
        }
    };

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
            if (full.size() == pruned.size()) {
                return result;
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

    /**
     * A configuration of the search: the acknowledged operations linearized (every one ranked below
     * {@code frontier}, and {@code tail} from there on), the indeterminate ones that may still take effect
     * ({@code info}), and the register's value then.
     */
    private static final class Memo {
        final int frontier;
        final long[] tail;
        final long[] info;
        final Object state;
        final int hash;

        Memo(int frontier, long[] tail, long[] info, Object state) {
            this.frontier = frontier;
            this.tail = tail;
            this.info = info;
            this.state = state;
            this.hash = 31 * (31 * (31 * frontier + Arrays.hashCode(tail)) + Arrays.hashCode(info))
                    + Objects.hashCode(state);
        }

        long bytes() {
            return 96 + 8L * (tail.length + info.length);
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Memo m && m.hash == hash && m.frontier == frontier && Objects.equals(m.state, state)
                    && Arrays.equals(m.tail, tail) && Arrays.equals(m.info, info);
        }

        @Override
        public int hashCode() {
            return hash;
        }
    }

    /** A linearized call and the state before it, to undo on backtrack. */
    private record Frame(Entry call, Object stateBefore) {
    }

    /** One key's search. */
    private final class Search {
        private final String key;
        private final List<Operation> ops;
        private final Entry head = new Entry(-1, true, Long.MIN_VALUE);
        /**
         * Per value: how many operations not linearized yet observe it (read it, or compare with it in a cas).
         * A value with none left is dead: the state holding it is {@link #UNOBSERVED}.
         */
        private final Map<String, Integer> observers = new HashMap<>();
        /** Per operation: its rank among the acknowledged (by invocation), or -1. */
        private final int[] okRank;
        /** Per operation: its rank among the indeterminate (by invocation), or -1. */
        private final int[] infoRank;
        /** The indeterminate operations, by rank. */
        private final int[] infoOps;
        /** Per value: the operations that write it (for whether a cas expecting it may still succeed). */
        private final Map<String, List<Integer>> writers = new HashMap<>();
        /** Per operation: linearized now. */
        private final boolean[] linearized;

        // The deepest point reached, for the violation report.
        private int deepest = -1;
        private List<Operation> deepestWindow = List.of();
        private Object deepestStateBefore;
        private Operation deepestStuck;
        private List<Operation> deepestConcurrent = List.of();

        Search(String key, List<Operation> ops) {
            this.key = key;
            this.ops = ops;
            for (Operation op : ops) {
                String seen = observed(op);
                if (seen != null) {
                    observers.merge(seen, 1, Integer::sum);
                }
            }
            Integer[] byInvoke = new Integer[ops.size()];
            for (int i = 0; i < byInvoke.length; i++) {
                byInvoke[i] = i;
            }
            Arrays.sort(byInvoke, Comparator.comparingLong((Integer i) -> ops.get(i).invokeNanos()).thenComparing(i -> i));
            okRank = new int[ops.size()];
            infoRank = new int[ops.size()];
            int oks = 0;
            int infos = 0;
            for (int i : byInvoke) {
                boolean ok = ops.get(i).outcome() == Operation.Outcome.OK;
                okRank[i] = ok ? oks++ : -1;
                infoRank[i] = ok ? -1 : infos++;
            }
            infoOps = new int[infos];
            for (int i = 0; i < ops.size(); i++) {
                if (infoRank[i] >= 0) {
                    infoOps[infoRank[i]] = i;
                }
                if (ops.get(i).fn() != Operation.Fn.READ) {
                    writers.computeIfAbsent(ops.get(i).value(), v -> new ArrayList<>()).add(i);
                }
            }
            linearized = new boolean[ops.size()];
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

        /** The value {@code op} observes (a read's result, a cas's expected value), or null. */
        private static String observed(Operation op) {
            return op.fn() == Operation.Fn.READ ? op.value() : op.fn() == Operation.Fn.CAS ? op.expected() : null;
        }

        private boolean dead(String value) {
            return value != null && observers.getOrDefault(value, 0) == 0;
        }

        /** Marks op i linearized (or not), keeping the observer counts. */
        private void setLinearized(int i, boolean on) {
            linearized[i] = on;
            String seen = observed(ops.get(i));
            if (seen != null) {
                observers.merge(seen, on ? -1 : 1, Integer::sum);
            }
        }

        /** A state with a dead value is {@link #UNOBSERVED}: nothing left can tell such values apart. */
        private Object canonical(Object state) {
            return state instanceof String v && dead(v) ? UNOBSERVED : state;
        }

        /**
         * Whether indeterminate op i may be placed now, in state {@code state} going to {@code next}: never as a
         * no-op, and when it writes a dead value only as the earliest-invoked such operation of its kind not
         * linearized yet (they are interchangeable from now on, since a dead value stays dead).
         */
        private boolean placeable(int i, Object state, Object next) {
            Operation op = ops.get(i);
            if (op.outcome() == Operation.Outcome.OK) {
                return true;
            }
            if (Objects.equals(state, next)) {
                return false;   // an indeterminate operation that changes nothing may as well not have happened
            }
            if (!dead(op.value())) {
                return true;
            }
            for (int r = 0; r < infoRank[i]; r++) {
                Operation other = ops.get(infoOps[r]);
                if (!linearized[infoOps[r]] && other.fn() == op.fn() && dead(other.value())
                        && Objects.equals(other.expected(), op.expected())) {
                    return false;
                }
            }
            return true;
        }

        /**
         * The indeterminate operations that are not linearized and could still change the state some day: all
         * but a cas whose expected value the register no longer holds and nothing left can write (values are
         * unique: once overwritten, a value never comes back). Whether the others happened makes no difference
         * to what follows, so two configurations that agree on this set, the acknowledged operations and the
         * state are the same configuration.
         */
        private long[] stillPossible(Object state) {
            BitSet possible = new BitSet(infoOps.length);
            for (int r = 0; r < infoOps.length; r++) {
                int i = infoOps[r];
                if (!linearized[i] && mayStillApply(ops.get(i), state)) {
                    possible.set(r);
                }
            }
            return possible.toLongArray();
        }

        private boolean mayStillApply(Operation op, Object state) {
            if (op.fn() != Operation.Fn.CAS || Objects.equals(state, op.expected())) {
                return true;
            }
            for (int j : writers.getOrDefault(op.expected(), List.of())) {
                if (!linearized[j]) {
                    return true;
                }
            }
            return false;
        }

        KeyResult run() {
            int acknowledged = 0;
            for (Operation op : ops) {
                if (op.outcome() == Operation.Outcome.OK) {
                    acknowledged++;
                }
            }
            Set<Memo> seen = new HashSet<>();
            long memoBytes = 0;
            Deque<Frame> stack = new ArrayDeque<>();
            BitSet okLinearized = new BitSet(acknowledged);
            int frontier = 0;
            Object state = null;
            int remaining = acknowledged;
            long steps = 0;
            Entry entry = head.next;
            while (remaining > 0) {
                if (++steps > stepBudget || memoBytes > memoBudgetBytes) {
                    String why = steps > stepBudget ? stepBudget + " steps"
                            : seen.size() + " remembered configurations (" + (memoBytes >> 20) + " MiB)";
                    return new KeyResult(key, Verdict.UNKNOWN, ops.size(), steps, null, List.of(), null, List.of(),
                            "unknown: the search gave up after " + why + " (" + ops.size() + " operations)");
                }
                if (entry.isCall) {
                    int i = entry.index;
                    Operation op = ops.get(i);
                    Object next = RegisterModel.step(state, op);
                    boolean advanced = false;
                    if (next != RegisterModel.ILLEGAL && placeable(i, state, canonical(next))) {
                        boolean ok = okRank[i] >= 0;
                        int newFrontier = frontier;
                        setLinearized(i, true);
                        next = canonical(next);
                        if (ok) {
                            okLinearized.set(okRank[i]);
                            newFrontier = okLinearized.nextClearBit(frontier);
                        }
                        Memo memo = new Memo(newFrontier,
                                okLinearized.get(newFrontier, Math.max(newFrontier, okLinearized.length())).toLongArray(),
                                stillPossible(next), next);
                        if (seen.add(memo)) {
                            memoBytes += memo.bytes();
                            stack.push(new Frame(entry, state));
                            state = next;
                            frontier = newFrontier;
                            if (ok) {
                                remaining--;
                            }
                            lift(entry);
                            entry = head.next;
                            advanced = true;
                        } else {
                            setLinearized(i, false);
                            if (ok) {
                                okLinearized.clear(okRank[i]);
                            }
                        }
                    }
                    if (!advanced) {
                        entry = entry.next;
                    }
                } else {
                    // A completion whose operation is not linearized yet: this branch is dead.
                    remember(stack, entry);
                    if (stack.isEmpty()) {
                        return violation(ops.size(), steps, seen.size());
                    }
                    Frame top = stack.pop();
                    int i = top.call().index;
                    state = top.stateBefore();
                    setLinearized(i, false);
                    if (okRank[i] >= 0) {
                        okLinearized.clear(okRank[i]);
                        frontier = Math.min(frontier, okRank[i]);
                        remaining++;
                    }
                    unlift(top.call());
                    entry = top.call().next;
                }
            }
            return new KeyResult(key, Verdict.YES, ops.size(), steps, null, List.of(), null, List.of(),
                    "linearizable (" + ops.size() + " operations, " + steps + " steps, " + seen.size()
                            + " configurations)");
        }

        /** Records the window around a dead end if it is the deepest so far. */
        private void remember(Deque<Frame> stack, Entry stuckReturn) {
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
                if (e.isCall && e.index != stuckReturn.index) {   // calls still in the list are not linearized
                    concurrent.add(ops.get(e.index));
                }
            }
            deepestConcurrent = concurrent;
        }

        private KeyResult violation(int size, long steps, int configurations) {
            return new KeyResult(key, Verdict.NO, size, steps,
                    deepestStateBefore == null ? null : deepestStateBefore.toString(), deepestWindow, deepestStuck,
                    deepestConcurrent, "NOT linearizable: " + deepestStuck + " has no legal place (" + size
                            + " operations, " + steps + " steps, " + configurations + " configurations)");
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
