package io.rota.chaos.checker;

import java.util.List;

/**
 * The verdict on one key's sub-history.
 *
 * @param key          the key
 * @param verdict      linearizable, not, or unknown (the search exceeded its budget)
 * @param operations   how many operations the search considered (failed and indeterminate reads excluded)
 * @param steps        search steps spent
 * @param stateBefore  for a violation: the register's value just before {@link #linearized} (null: absent)
 * @param linearized   for a violation: the last operations of the deepest partial linearization, in order
 * @param stuck        for a violation: the operation that had to be linearized next but could not be
 * @param concurrent   for a violation: the unlinearized operations concurrent with {@link #stuck}
 * @param message      one line for humans
 */
public record KeyResult(String key, Verdict verdict, int operations, long steps, String stateBefore,
                        List<Operation> linearized, Operation stuck, List<Operation> concurrent, String message) {

    /**
     * Copies the lists.
     *
     * @param key         see the record component
     * @param verdict     see the record component
     * @param operations  see the record component
     * @param steps       see the record component
     * @param stateBefore see the record component
     * @param linearized  see the record component
     * @param stuck       see the record component
     * @param concurrent  see the record component
     * @param message     see the record component
     */
    public KeyResult {
        linearized = List.copyOf(linearized);
        concurrent = List.copyOf(concurrent);
    }

    /**
     * A multi-line description: the verdict and, for a violation, the window of offending operations.
     *
     * @return text for a report
     */
    public String describe() {
        StringBuilder s = new StringBuilder("key ").append(key).append(": ").append(message).append('\n');
        if (stuck != null) {
            s.append("  value before the window: ").append(stateBefore).append('\n');
            s.append("  linearized (last ").append(linearized.size()).append(", in order):\n");
            linearized.forEach(op -> s.append("    ").append(op).append('\n'));
            s.append("  then this operation could not be placed:\n    ").append(stuck).append('\n');
            if (!concurrent.isEmpty()) {
                s.append("  nor any of the operations concurrent with it:\n");
                concurrent.forEach(op -> s.append("    ").append(op).append('\n'));
            }
        }
        return s.toString();
    }
}
