package io.rota.chaos.checker;

import java.util.Objects;

/**
 * The sequential specification of one key: a register holding a value or nothing (null). Pure.
 *
 * <ul>
 *   <li>read r: legal iff the value equals r (null: absent); the value is unchanged</li>
 *   <li>write v: always legal; the value becomes v</li>
 *   <li>cas(e, n) that succeeded: legal iff the value equals e; it becomes n</li>
 *   <li>cas(e, n) that failed its comparison: legal iff the value differs from e; unchanged</li>
 *   <li>indeterminate cas(e, n): always legal; the value becomes n iff it equals e (its answer is unknown)</li>
 * </ul>
 */
final class RegisterModel {

    /** Marks "this operation is not legal in this state" ({@code step} never returns it for a legal one). */
    static final Object ILLEGAL = new Object();

    private RegisterModel() {
    }

    /**
     * Applies {@code op} to {@code state} (a String or null).
     *
     * @return the new state, or {@link #ILLEGAL}
     */
    static Object step(Object state, Operation op) {
        return switch (op.fn()) {
            case READ -> Objects.equals(state, op.value()) ? state : ILLEGAL;
            case WRITE -> op.value();
            case CAS -> {
                boolean matches = Objects.equals(state, op.expected());
                if (op.outcome() == Operation.Outcome.INFO) {
                    yield matches ? op.value() : state;
                }
                if (op.casSucceeded()) {
                    yield matches ? op.value() : ILLEGAL;
                }
                yield matches ? ILLEGAL : state;
            }
        };
    }
}
