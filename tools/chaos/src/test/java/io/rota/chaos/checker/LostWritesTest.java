package io.rota.chaos.checker;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

class LostWritesTest {

    private static final long NEVER = Long.MAX_VALUE;

    @Test
    void theLastAcknowledgedWriteSurvivingLosesNothing() {
        List<Operation> ops = List.of(Operation.write(0, 0, "k", "a", 0, 1), Operation.write(1, 1, "k", "b", 2, 3));
        Operation last = Operation.read(2, 9, "k", "b", 10, 11);
        assertEquals(0, LostWrites.count(ops, List.of(last)).total());
    }

    @Test
    void anOlderValueAtTheEndLosesEveryAcknowledgedWriteAfterIt() {
        List<Operation> ops = List.of(Operation.write(0, 0, "k", "a", 0, 1), Operation.write(1, 1, "k", "b", 2, 3),
                Operation.cas(2, 2, "k", "b", "c", true, 4, 5));
        LostWrites lost = LostWrites.count(ops, List.of(Operation.read(3, 9, "k", "a", 10, 11)));
        assertEquals(2, lost.total(), lost.describe());
    }

    @Test
    void concurrentOrIndeterminateWritesAreNotCountedLost() {
        // b overlaps a, so a may have been last; c is indeterminate and may never have happened.
        List<Operation> ops = List.of(Operation.write(0, 0, "k", "a", 0, 5), Operation.write(1, 1, "k", "b", 2, 3),
                Operation.write(2, 2, "k", "c", 6, NEVER));
        assertEquals(0, LostWrites.count(ops, List.of(Operation.read(3, 9, "k", "a", 10, 11))).total());
    }

    @Test
    void anAbsentKeyAtTheEndLosesEveryAcknowledgedWrite() {
        List<Operation> ops = List.of(Operation.write(0, 0, "k", "a", 0, 1), Operation.write(1, 1, "k", "b", 2, 3));
        assertEquals(2, LostWrites.count(ops, List.of(Operation.read(2, 9, "k", null, 10, 11))).total());
    }
}
