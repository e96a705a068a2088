package io.rota.chaos.checker;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Known-linearizable and known-violating register histories. Times are small integers: [invoke, complete].
 */
class LinearizabilityCheckerTest {

    private static final long NEVER = Long.MAX_VALUE;
    private final LinearizabilityChecker checker = new LinearizabilityChecker();

    private static Operation w(int id, String v, long from, long to) {
        return Operation.write(id, id, "k", v, from, to);
    }

    private static Operation r(int id, String v, long from, long to) {
        return Operation.read(id, id, "k", v, from, to);
    }

    private static Operation cas(int id, String expected, String v, boolean ok, long from, long to) {
        return Operation.cas(id, id, "k", expected, v, ok, from, to);
    }

    private KeyResult check(Operation... ops) {
        return checker.checkKey("k", List.of(ops));
    }

    @Test
    void sequentialHistoryIsLinearizable() {
        assertEquals(Verdict.YES, check(r(0, null, 0, 1), w(1, "a", 2, 3), r(2, "a", 4, 5),
                cas(3, "a", "b", true, 6, 7), cas(4, "a", "c", false, 8, 9), r(5, "b", 10, 11)).verdict());
    }

    @Test
    void staleReadIsAViolation() {
        // a is overwritten by b, then a later read still returns a.
        KeyResult r = check(w(0, "a", 0, 1), w(1, "b", 2, 3), r(2, "a", 4, 5));
        assertEquals(Verdict.NO, r.verdict());
        assertEquals(2, r.stuck().id(), r.describe());
        assertTrue(r.describe().contains("NOT linearizable"), r.describe());
    }

    @Test
    void lostWriteIsAViolation() {
        // The acknowledged write of b disappears: the final read sees a.
        KeyResult r = check(w(0, "a", 0, 1), w(1, "b", 2, 3), r(2, "a", 10, 11));
        assertEquals(Verdict.NO, r.verdict());
    }

    @Test
    void readOfAbsentAfterAcknowledgedWriteIsAViolation() {
        assertEquals(Verdict.NO, check(w(0, "a", 0, 1), r(1, null, 2, 3)).verdict());
    }

    @Test
    void writeAppliedTwiceIsAViolation() {
        // a, then b, then a is seen again although nobody wrote a twice.
        assertEquals(Verdict.NO, check(w(0, "a", 0, 1), r(1, "a", 2, 3), w(2, "b", 4, 5), r(3, "b", 6, 7),
                r(4, "a", 8, 9)).verdict());
    }

    @Test
    void casOnStaleValueIsAViolation() {
        // The value is b, yet a cas expecting a succeeds.
        assertEquals(Verdict.NO, check(w(0, "a", 0, 1), w(1, "b", 2, 3), cas(2, "a", "c", true, 4, 5)).verdict());
    }

    @Test
    void failedCasOnTheCurrentValueIsAViolation() {
        assertEquals(Verdict.NO, check(w(0, "a", 0, 1), cas(1, "a", "c", false, 2, 3), r(2, "a", 4, 5)).verdict());
    }

    @Test
    void twoCasFromTheSameValueCannotBothSucceed() {
        assertEquals(Verdict.NO, check(w(0, "a", 0, 1), cas(1, "a", "b", true, 2, 6), cas(2, "a", "c", true, 3, 7))
                .verdict());
    }

    @Test
    void concurrentOverlappingOperationsAreLinearizable() {
        // w(a) and w(b) overlap; readers concurrent with both see either order, consistently.
        assertEquals(Verdict.YES, check(w(0, "a", 0, 10), w(1, "b", 1, 11), r(2, "b", 2, 3), r(3, "a", 4, 12),
                r(4, "a", 13, 14)).verdict());
        // A read overlapping a write may see the old or the new value.
        assertEquals(Verdict.YES, check(w(0, "a", 0, 1), w(1, "b", 2, 8), r(2, "a", 3, 4), r(3, "b", 5, 6),
                r(4, "b", 9, 10)).verdict());
        // A cas overlapping a write may linearize before it.
        assertEquals(Verdict.YES, check(w(0, "a", 0, 1), w(1, "b", 2, 8), cas(2, "a", "c", true, 3, 9),
                r(3, "b", 10, 11)).verdict());
    }

    @Test
    void readsThatGoBackInTimeAreAViolationEvenWhenConcurrentWithTheWrite() {
        // r(b) completes before r(a) starts, both concurrent with w(b): once b is seen, a may not come back.
        assertEquals(Verdict.NO, check(w(0, "a", 0, 1), w(1, "b", 2, 20), r(2, "b", 3, 4), r(3, "a", 5, 6)).verdict());
    }

    @Test
    void indeterminateWriteMayTakeEffectLate() {
        // w(b) timed out at 3; b shows up only at 10, long after.
        assertEquals(Verdict.YES, check(w(0, "a", 0, 1), w(1, "b", 2, NEVER), r(2, "a", 4, 5), r(3, "b", 10, 11))
                .verdict());
    }

    @Test
    void indeterminateWriteMayNeverTakeEffect() {
        assertEquals(Verdict.YES, check(w(0, "a", 0, 1), w(1, "b", 2, NEVER), r(2, "a", 4, 5), r(3, "a", 10, 11))
                .verdict());
    }

    @Test
    void indeterminateWriteCannotTakeEffectBeforeItsInvocation() {
        assertEquals(Verdict.NO, check(w(0, "a", 0, 1), r(1, "b", 2, 3), w(2, "b", 4, NEVER)).verdict());
    }

    @Test
    void indeterminateWriteTakesEffectAtMostOnce() {
        assertEquals(Verdict.NO, check(w(0, "a", 0, NEVER), r(1, "a", 2, 3), w(2, "b", 4, 5), r(3, "a", 6, 7))
                .verdict());
    }

    @Test
    void indeterminateCasMayOrMayNotApply() {
        assertEquals(Verdict.YES, check(w(0, "a", 0, 1), cas(1, "a", "b", false, 2, NEVER), r(2, "a", 3, 4),
                r(3, "b", 5, 6)).verdict());
        assertEquals(Verdict.YES, check(w(0, "a", 0, 1), cas(1, "a", "b", false, 2, NEVER), r(2, "a", 3, 4))
                .verdict());
    }

    @Test
    void indeterminateReadsAreIgnored() {
        Operation lostRead = new Operation(1, 1, Operation.Fn.READ, "k", null, null, Operation.Outcome.INFO, false,
                2, NEVER);
        assertEquals(Verdict.YES, check(w(0, "a", 0, 1), lostRead, r(2, "a", 3, 4)).verdict());
    }

    @Test
    void aPrunedIndeterminateWriteIsPutBackBeforeAViolationIsReported() {
        // Only the unobserved indeterminate write of c explains the failed cas(a -> d).
        assertEquals(Verdict.YES, check(w(0, "a", 0, 1), w(1, "c", 2, NEVER), cas(2, "a", "d", false, 3, 4))
                .verdict());
    }

    /**
     * {@code ghosts} unobserved indeterminate writes invoked first, then {@code cycles} rounds of "write x, read
     * x, cas(x -> y) fails": each failed cas needs some write between the read and it, and only a ghost can be
     * one, so the history is linearizable iff there are at least as many ghosts as cycles.
     */
    private static List<Operation> ghostsAndFailedCas(int ghosts, int cycles) {
        List<Operation> ops = new ArrayList<>();
        int id = 0;
        for (int g = 0; g < ghosts; g++) {
            ops.add(w(id++, "g" + g, g, NEVER));
        }
        long t = 1_000;
        for (int c = 0; c < cycles; c++) {
            ops.add(w(id++, "x" + c, t, t + 1));
            ops.add(r(id++, "x" + c, t + 2, t + 3));
            ops.add(cas(id++, "x" + c, "y" + c, false, t + 4, t + 5));
            t += 10;
        }
        return ops;
    }

    @Test
    void thirtyIndeterminateWritesThatAreAllNeededAreDecidedLinearizable() {
        KeyResult r = checker.checkKey("k", ghostsAndFailedCas(30, 30));
        assertEquals(Verdict.YES, r.verdict(), r.describe());
        assertTrue(r.steps() < 100_000, "a search that scales, not 2^30: " + r.describe());
    }

    @Test
    void oneCycleMoreThanThereAreIndeterminateWritesIsDecidedNotLinearizable() {
        KeyResult r = checker.checkKey("k", ghostsAndFailedCas(30, 31));
        assertEquals(Verdict.NO, r.verdict(), r.describe());
        assertTrue(r.steps() < 1_000_000, "a search that scales, not 2^30: " + r.describe());
        assertTrue(r.describe().contains("cas [x30, y30] -> false"), r.describe());
    }

    @Test
    void aStaleReadAmidFortyIndeterminateWritesIsDecided() {
        List<Operation> ops = new ArrayList<>(ghostsAndFailedCas(40, 5));
        ops.add(w(100, "late", 2_000, 2_001));
        ops.add(r(101, "x4", 2_002, 2_003));   // x4 was overwritten by "late", which completed before
        KeyResult r = checker.checkKey("k", ops);
        assertEquals(Verdict.NO, r.verdict(), r.describe());
        assertTrue(r.describe().contains("read -> x4"), r.describe());
    }

    @Test
    void keysAreCheckedIndependently() {
        List<Operation> ops = List.of(Operation.write(0, 0, "x", "a", 0, 1), Operation.read(1, 1, "y", null, 2, 3),
                Operation.read(2, 2, "x", "a", 4, 5), Operation.read(3, 3, "y", "a", 6, 7));
        CheckResult result = checker.check(ops);
        assertEquals(Verdict.NO, result.verdict());
        assertEquals(1, result.problems().size());
        assertEquals("y", result.problems().get(0).key());
    }

    @Test
    void aTinyBudgetGivesUnknown() {
        KeyResult r = new LinearizabilityChecker(3, 1 << 20).checkKey("k",
                List.of(w(0, "a", 0, 1), r(1, "a", 2, 3), w(2, "b", 4, 5), r(3, "b", 6, 7)));
        assertEquals(Verdict.UNKNOWN, r.verdict());
    }

    /**
     * Random concurrent histories produced by a real register (each operation takes effect at a random
     * instant inside its interval; some are cut off as indeterminate) are linearizable; replacing one read's
     * value with one never written makes them not.
     */
    @Test
    void randomLinearizableHistoriesPassAndCorruptedOnesFail() {
        long seed = new Random().nextLong();
        Random random = new Random(seed);
        for (int round = 0; round < 100; round++) {
            List<Operation> ops = randomHistory(random, 4, 40);
            KeyResult ok = checker.checkKey("k", ops);
            assertEquals(Verdict.YES, ok.verdict(), "seed " + seed + " round " + round + "\n" + ok.describe());

            List<Operation> corrupted = new ArrayList<>(ops);
            int victim = -1;
            for (int i = corrupted.size() - 1; i >= 0; i--) {
                if (corrupted.get(i).fn() == Operation.Fn.READ && corrupted.get(i).outcome() == Operation.Outcome.OK) {
                    victim = i;
                    break;
                }
            }
            if (victim >= 0) {
                Operation v = corrupted.get(victim);
                corrupted.set(victim, Operation.read(v.id(), v.process(), "k", "never-written", v.invokeNanos(),
                        v.completeNanos()));
                assertEquals(Verdict.NO, checker.checkKey("k", corrupted).verdict(), "seed " + seed + " round " + round);
            }
        }
    }

    /**
     * As above with long histories where two writes in five time out — many more indeterminate writes than the
     * old limit of twelve — and each cas expects the last value an acknowledged operation saw, or the one
     * before (as the register workload's cas expects the last value a client saw): each decided.
     */
    @Test
    void longRandomHistoriesWithManyIndeterminateWritesAreDecided() {
        long seed = new Random().nextLong();
        Random random = new Random(seed);
        for (int round = 0; round < 10; round++) {
            List<Operation> ops = randomHistory(random, 6, 300, 0.4, true);
            long indeterminate = ops.stream().filter(o -> o.outcome() == Operation.Outcome.INFO).count();
            KeyResult ok = checker.checkKey("k", ops);
            assertEquals(Verdict.YES, ok.verdict(), "seed " + seed + " round " + round + ", " + indeterminate
                    + " indeterminate\n" + ok.describe());
            List<Operation> corrupted = new ArrayList<>(ops);
            for (int i = corrupted.size() - 1; i >= 0; i--) {
                Operation v = corrupted.get(i);
                if (v.fn() == Operation.Fn.READ && v.outcome() == Operation.Outcome.OK) {
                    corrupted.set(i, Operation.read(v.id(), v.process(), "k", "never-written", v.invokeNanos(),
                            v.completeNanos()));
                    break;
                }
            }
            KeyResult bad = checker.checkKey("k", corrupted);
            assertEquals(Verdict.NO, bad.verdict(), "seed " + seed + " round " + round + ", " + indeterminate
                    + " indeterminate: " + bad.message());
        }
    }

    /** Simulates {@code processes} clients doing {@code count} operations on one real register. */
    private static List<Operation> randomHistory(Random random, int processes, int count) {
        return randomHistory(random, processes, count, 0.2, false);
    }

    /**
     * As above, a fraction {@code timeouts} of the writes and cas indeterminate (half of those applied); with
     * {@code recent}, a cas expects the last value an acknowledged operation read or wrote (three times in four)
     * or the one before, else any value written so far.
     */
    private static List<Operation> randomHistory(Random random, int processes, int count, double timeouts,
                                                 boolean recent) {
        record Pending(int process, long invoke, long effect, long complete, int kind, String expected, String value) {
        }
        List<Pending> pending = new ArrayList<>();
        long[] free = new long[processes];
        int unique = 0;
        for (int i = 0; i < count; i++) {
            int p = random.nextInt(processes);
            long invoke = free[p] + random.nextInt(5);
            long effect = invoke + random.nextInt(10);
            long complete = effect + random.nextInt(10);
            free[p] = complete + 1;
            int kind = random.nextInt(3);
            pending.add(new Pending(p, invoke, effect, complete, kind, "v" + random.nextInt(unique + 1), "v" + ++unique));
        }
        // Apply in effect order to a real register to learn each operation's result.
        List<Pending> byEffect = new ArrayList<>(pending);
        byEffect.sort((a, b) -> Long.compare(a.effect(), b.effect()));
        List<Operation> ops = new ArrayList<>();
        String state = null;
        String seen = null;
        String seenBefore = null;
        int id = 0;
        for (Pending op : byEffect) {
            // Some writes are indeterminate; half of those never take effect.
            boolean indeterminate = op.kind() != 0 && random.nextDouble() < timeouts;
            boolean applied = !indeterminate || random.nextBoolean();
            long complete = indeterminate ? NEVER : op.complete();
            switch (op.kind()) {
                case 0 -> ops.add(Operation.read(id++, op.process(), "k", state, op.invoke(), complete));
                case 1 -> {
                    if (applied) {
                        state = op.value();
                    }
                    ops.add(Operation.write(id++, op.process(), "k", op.value(), op.invoke(), complete));
                }
                default -> {
                    String expected = !recent ? op.expected() : random.nextInt(4) > 0 ? seen : seenBefore;
                    boolean holds = java.util.Objects.equals(expected, state);
                    if (holds && applied) {
                        state = op.value();
                    }
                    ops.add(Operation.cas(id++, op.process(), "k", expected, op.value(), holds, op.invoke(), complete));
                }
            }
            if (!indeterminate && !java.util.Objects.equals(seen, state)) {
                seenBefore = seen;
                seen = state;   // an acknowledged operation saw (or made) the current value
            }
        }
        assertFalse(ops.isEmpty());
        return ops;
    }
}
