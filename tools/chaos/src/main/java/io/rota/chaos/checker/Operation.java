package io.rota.chaos.checker;

import java.util.Objects;

/**
 * One completed (or abandoned) client operation on one key of a register: its invocation and completion
 * paired. Times are nanoseconds on one monotonic clock. An indeterminate operation ({@link Outcome#INFO})
 * never completed as far as the checker knows: its {@link #completeNanos} is {@link Long#MAX_VALUE}.
 *
 * @param id            a number unique within the history (its position), used in reports
 * @param process       the client process that ran it
 * @param fn            read, write or compare-and-set
 * @param key           the key
 * @param value         write: the value written; cas: the new value; read: the value read (null: absent)
 * @param expected      cas only: the value compared with; null otherwise
 * @param outcome       OK or INFO (definite failures never reach the checker)
 * @param casSucceeded  cas with outcome OK: whether the comparison held; false otherwise
 * @param invokeNanos   when it was invoked
 * @param completeNanos when it completed; {@link Long#MAX_VALUE} for INFO
 */
public record Operation(int id, int process, Fn fn, String key, String value, String expected, Outcome outcome,
                        boolean casSucceeded, long invokeNanos, long completeNanos) {

    /** The kind of operation. */
    public enum Fn {
        /** Read the key's value. */
        READ,
        /** Write a value unconditionally. */
        WRITE,
        /** Write a new value if the current one equals the expected one. */
        CAS
    }

    /** How an operation ended. */
    public enum Outcome {
        /** It took effect (for a cas: the comparison ran, see {@link #casSucceeded}). */
        OK,
        /** Unknown: it may have taken effect at any time after its invocation, or never. */
        INFO
    }

    /**
     * Checks the invariants.
     *
     * @param id            see the record component
     * @param process       see the record component
     * @param fn            see the record component
     * @param key           see the record component
     * @param value         see the record component
     * @param expected      see the record component
     * @param outcome       see the record component
     * @param casSucceeded  see the record component
     * @param invokeNanos   see the record component
     * @param completeNanos see the record component
     */
    public Operation {
        Objects.requireNonNull(fn, "fn");
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(outcome, "outcome");
        if (outcome == Outcome.INFO && completeNanos != Long.MAX_VALUE) {
            throw new IllegalArgumentException("an indeterminate operation never completes: " + completeNanos);
        }
        if (completeNanos < invokeNanos) {
            throw new IllegalArgumentException("operation " + id + " completes before it is invoked");
        }
        if (fn == Fn.WRITE && value == null) {
            throw new IllegalArgumentException("a write needs a value");
        }
    }

    /**
     * A successful read.
     *
     * @param id       the operation's id
     * @param process  the process
     * @param key      the key
     * @param read     the value read, null if absent
     * @param invoke   invocation time
     * @param complete completion time
     * @return the operation
     */
    public static Operation read(int id, int process, String key, String read, long invoke, long complete) {
        return new Operation(id, process, Fn.READ, key, read, null, Outcome.OK, false, invoke, complete);
    }

    /**
     * A write, acknowledged ({@code complete} finite) or indeterminate ({@code complete} = MAX_VALUE).
     *
     * @param id       the operation's id
     * @param process  the process
     * @param key      the key
     * @param value    the value written
     * @param invoke   invocation time
     * @param complete completion time, or {@link Long#MAX_VALUE} if indeterminate
     * @return the operation
     */
    public static Operation write(int id, int process, String key, String value, long invoke, long complete) {
        return new Operation(id, process, Fn.WRITE, key, value, null, outcomeOf(complete), false, invoke, complete);
    }

    /**
     * A compare-and-set, completed (with {@code succeeded}) or indeterminate ({@code complete} = MAX_VALUE).
     *
     * @param id        the operation's id
     * @param process   the process
     * @param key       the key
     * @param expected  the value compared with
     * @param value     the new value
     * @param succeeded whether the comparison held (ignored when indeterminate)
     * @param invoke    invocation time
     * @param complete  completion time, or {@link Long#MAX_VALUE} if indeterminate
     * @return the operation
     */
    public static Operation cas(int id, int process, String key, String expected, String value, boolean succeeded,
                                long invoke, long complete) {
        Outcome outcome = outcomeOf(complete);
        return new Operation(id, process, Fn.CAS, key, value, expected, outcome,
                outcome == Outcome.OK && succeeded, invoke, complete);
    }

    private static Outcome outcomeOf(long complete) {
        return complete == Long.MAX_VALUE ? Outcome.INFO : Outcome.OK;
    }

    /**
     * Whether this operation, if it took effect, would make {@code v} the key's value.
     *
     * @param v a value
     * @return true for a write of v or a cas to v
     */
    public boolean writes(String v) {
        return fn != Fn.READ && Objects.equals(value, v);
    }

    /** For reports: {@code #12 p3 ok cas [a, b] -> true  [1.204 s, 1.209 s]}. */
    @Override
    public String toString() {
        String what = switch (fn) {
            case READ -> "read -> " + value;
            case WRITE -> "write " + value;
            case CAS -> "cas [" + expected + ", " + value + "]" + (outcome == Outcome.OK ? " -> " + casSucceeded : "");
        };
        String end = completeNanos == Long.MAX_VALUE ? "never" : seconds(completeNanos);
        return "#" + id + " p" + process + " " + outcome.name().toLowerCase() + " " + what
                + "  [" + seconds(invokeNanos) + ", " + end + "]";
    }

    private static String seconds(long nanos) {
        return String.format(java.util.Locale.ROOT, "%.6f s", nanos / 1e9);
    }
}
