package io.rota.bench.driver;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The lines a driver prints on its standard output for the orchestrator, which starts and stops the
 * systems, samples the members' CPU and kills the leader. Each is {@code @kind} followed by
 * {@code key=value} fields separated by spaces (values have no spaces). Anything else on standard output
 * is the driver's own log and is copied to the log file.
 *
 * <pre>
 * &#64;client library=jetcd-core_0.8.5 jdk=17.0.15
 * &#64;measure-start workload=write-64
 * &#64;measure-end workload=write-64
 * &#64;result workload=write-64 ops=90210 seconds=5.000 p50=3120 p99=9800 p999=15020 errors=0
 * &#64;kill-leader
 * &#64;result workload=failover ops=4100 seconds=6.000 gap_ms=312 errors=3
 * </pre>
 */
public final class Markers {

    /** Sent when the measured window of a workload begins: the orchestrator takes the first CPU sample. */
    public static final String MEASURE_START = "@measure-start";
    /** Sent when the measured window ends: the second CPU sample. */
    public static final String MEASURE_END = "@measure-end";
    /** A workload's figures. */
    public static final String RESULT = "@result";
    /** The client library's name and version, and the driver JVM's. */
    public static final String CLIENT = "@client";
    /** The failover workload asks the orchestrator to kill -9 the current leader now. */
    public static final String KILL_LEADER = "@kill-leader";

    private Markers() {
    }

    /**
     * Formats a marker line.
     *
     * @param kind   one of the constants
     * @param fields field names and values, in order (values must not contain spaces; spaces become '_')
     * @return the line
     */
    public static String format(String kind, Map<String, ?> fields) {
        StringBuilder line = new StringBuilder(kind);
        for (Map.Entry<String, ?> f : fields.entrySet()) {
            line.append(' ').append(f.getKey()).append('=').append(String.valueOf(f.getValue()).replace(' ', '_'));
        }
        return line.toString();
    }

    /**
     * The kind of a marker line, or null if the line is not a marker.
     *
     * @param line a line of the driver's output
     * @return e.g. {@code @result}
     */
    public static String kind(String line) {
        if (!line.startsWith("@")) {
            return null;
        }
        int space = line.indexOf(' ');
        return space < 0 ? line : line.substring(0, space);
    }

    /**
     * The fields of a marker line.
     *
     * @param line a marker line
     * @return field name to value, in order; a token without '=' is an error
     * @throws IllegalArgumentException if a field is malformed
     */
    public static Map<String, String> fields(String line) {
        Map<String, String> out = new LinkedHashMap<>();
        String[] tokens = line.trim().split(" +");
        for (int i = 1; i < tokens.length; i++) {
            int eq = tokens[i].indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("malformed field '" + tokens[i] + "' in driver line: " + line);
            }
            out.put(tokens[i].substring(0, eq), tokens[i].substring(eq + 1));
        }
        return out;
    }
}
