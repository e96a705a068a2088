package io.rota.chaos.history;

import java.util.List;
import java.util.Objects;

/**
 * One line of a history: a client invoking an operation or learning its outcome, or the nemesis injecting
 * or healing a fault. The JSON form is one object per line:
 * <pre>
 * {"process": 3, "type": "invoke", "f": "cas", "key": "k2", "value": ["p1-7", "p3-12"], "time": 1203344556}
 * {"process": 3, "type": "ok", "f": "cas", "key": "k2", "value": ["p1-7", "p3-12"], "result": true, "time": 1209000000}
 * {"process": "nemesis", "type": "info", "f": "partition", "value": "isolated leader n2", "time": 5000000000}
 * </pre>
 * {@code time} is nanoseconds since the run started (one monotonic clock). For a read's ok, {@code value} is
 * what was read (null: absent); for a cas, {@code [expected, new]} and, on ok, {@code result} says whether the
 * comparison held.
 *
 * @param process the client process, or {@link #NEMESIS}
 * @param type    invoke, ok, fail or info
 * @param f       read, write or cas; for the nemesis, the fault's name (or "heal")
 * @param key     the key; null for nemesis events
 * @param value   a String or null (read, write, nemesis), or a two-element List of String/null (cas)
 * @param result  a completed cas's result; null otherwise
 * @param time    nanoseconds since the run started
 */
public record Event(int process, Type type, String f, String key, Object value, Boolean result, long time) {

    /** The process number of nemesis events (written as the string "nemesis"). */
    public static final int NEMESIS = -1;

    /** The kind of event. */
    public enum Type {
        /** An operation starts. */
        INVOKE,
        /** It took effect (a cas: the comparison ran; see {@code result}). */
        OK,
        /** It certainly did not take effect. */
        FAIL,
        /** Unknown whether it took effect (timeout, lost connection); nemesis events are info too. */
        INFO;

        /** The JSON name: lower case. */
        String json() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /**
     * Checks the value's shape.
     *
     * @param process see the record component
     * @param type    see the record component
     * @param f       see the record component
     * @param key     see the record component
     * @param value   see the record component
     * @param result  see the record component
     * @param time    see the record component
     */
    public Event {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(f, "f");
        if (value != null && !(value instanceof String) && !(value instanceof List<?> l && l.size() == 2)) {
            throw new IllegalArgumentException("value must be a string, null or [expected, new]: " + value);
        }
        if (value instanceof List<?> l) {
            value = java.util.Collections.unmodifiableList(new java.util.ArrayList<>(l));
        }
        if (process != NEMESIS && key == null) {
            throw new IllegalArgumentException("a client event needs a key");
        }
    }

    /**
     * A nemesis event.
     *
     * @param f           the fault's name, or "heal"
     * @param description what was done, for humans
     * @param time        nanoseconds since the run started
     * @return the event
     */
    public static Event nemesis(String f, String description, long time) {
        return new Event(NEMESIS, Type.INFO, f, null, description, null, time);
    }

    /**
     * Whether this is a nemesis event.
     *
     * @return true for the nemesis
     */
    public boolean isNemesis() {
        return process == NEMESIS;
    }
}
