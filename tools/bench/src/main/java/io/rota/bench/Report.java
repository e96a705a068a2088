package io.rota.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

/**
 * Renders the side-by-side Markdown table: one row per figure, one column per system, and a ratio column
 * (Rota / the best peer on that row). Pure: tests render it from hand-made measurements.
 */
final class Report {

    /** One row of the table: which workload, how to show it, and which way is better. */
    record Row(String label, String workload, Kind kind) {
    }

    /** What a row shows. */
    enum Kind {
        /** ops/s and latency percentiles; higher ops/s is better. */
        THROUGHPUT,
        /** the failover gap in ms; lower is better. */
        GAP,
        /** server CPU per operation in µs; lower is better. */
        CPU,
        /** the members' CPU while no client sends anything, as a share of one core; lower is better. */
        IDLE
    }

    /** The rows, in the order of the published comparison. */
    static final List<Row> ROWS = List.of(
            new Row("write 256 B, 1 in flight", "write-1", Kind.THROUGHPUT),
            new Row("write 256 B, 64 in flight", "write-64", Kind.THROUGHPUT),
            new Row("write 256 B, 256 in flight", "write-256", Kind.THROUGHPUT),
            new Row("linearizable read, 64 in flight", "read-lin-64", Kind.THROUGHPUT),
            new Row("serializable read, 64 in flight", "read-ser-64", Kind.THROUGHPUT),
            new Row("lock + unlock, 1 client", "lock-1x1", Kind.THROUGHPUT),
            new Row("lock + unlock, 8 clients on one lock", "lock-8x1", Kind.THROUGHPUT),
            new Row("lock + unlock, 64 clients on 64 locks", "lock-64x64", Kind.THROUGHPUT),
            new Row("failover gap, kill -9 of the leader (lower is better)", "failover", Kind.GAP),
            new Row("server CPU per write, 1 in flight (lower is better)", "write-1", Kind.CPU),
            new Row("server CPU per write, 64 in flight (lower is better)", "write-64", Kind.CPU),
            new Row("server CPU per write, 256 in flight (lower is better)", "write-256", Kind.CPU),
            new Row("server CPU per linearizable read (lower is better)", "read-lin-64", Kind.CPU),
            new Row("server CPU per serializable read (lower is better)", "read-ser-64", Kind.CPU),
            new Row("server CPU per lock cycle, 1 client (lower is better)", "lock-1x1", Kind.CPU),
            new Row("server CPU per lock cycle, 8 on one lock (lower is better)", "lock-8x1", Kind.CPU),
            new Row("server CPU per lock cycle, 64 on 64 locks (lower is better)", "lock-64x64", Kind.CPU),
            new Row("server CPU idle, the 3 s after start (lower is better)", Compare.IDLE, Kind.IDLE));

    private Report() {
    }

    /**
     * The table. Rows with no figure for any system are left out; a skipped system shows "skipped", a
     * workload it did not report shows "–".
     *
     * @param runs the systems in column order; the one named "Rota" is the ratio's numerator
     * @return Markdown, ending with a newline
     */
    static String table(List<SystemRun> runs) {
        StringBuilder md = new StringBuilder("| workload |");
        StringBuilder rule = new StringBuilder("|---|");
        for (SystemRun r : runs) {
            md.append(' ').append(r.system()).append(" |");
            rule.append("---|");
        }
        md.append(" Rota / best peer |\n").append(rule).append("---|\n");
        for (Row row : ROWS) {
            boolean any = runs.stream().anyMatch(r -> value(r, row) != null);
            if (!any) {
                continue;
            }
            md.append("| ").append(row.label()).append(" |");
            for (SystemRun r : runs) {
                md.append(' ').append(cell(r, row)).append(" |");
            }
            md.append(' ').append(ratio(runs, row)).append(" |\n");
        }
        return md.toString();
    }

    /** The number a row compares, or null if the system has none. */
    static Double value(SystemRun run, Row row) {
        if (run.skipped() != null) {
            return null;
        }
        Measurement m = run.results().get(row.workload());
        if (m == null) {
            return null;
        }
        switch (row.kind()) {
            case THROUGHPUT:
                return m.opsPerSecond();
            case GAP:
                return m.gapMillis() >= 0 ? (double) m.gapMillis() : null;
            default:
                return m.cpuMicrosPerOp() >= 0 ? m.cpuMicrosPerOp() : null;
        }
    }

    static String cell(SystemRun run, Row row) {
        if (run.skipped() != null) {
            return "skipped";
        }
        Double v = value(run, row);
        if (v == null) {
            return "–";
        }
        Measurement m = run.results().get(row.workload());
        String errors = m.errors() > 0 ? String.format(Locale.US, " (%,d errors)", m.errors()) : "";
        switch (row.kind()) {
            case THROUGHPUT:
                if (m.ops() == 0) {
                    // Not "–": the system ran the row and not one operation started and finished in the window.
                    return String.format(Locale.US, "0/s (none finished inside the %.0f s window)", m.seconds())
                            + errors;
                }
                return String.format(Locale.US, "%,d/s, p50 %s, p99 %s, p99.9 %s ms", Math.round(v),
                        millis(m.p50Micros()), millis(m.p99Micros()), millis(m.p999Micros())) + errors;
            case GAP:
                String bound = m.acksAfterKill() == 0 ? "≥ " : "";
                String note = m.acksAfterKill() == 0 ? " (no write acknowledged after the kill)" : "";
                return String.format(Locale.US, "%s%,d ms", bound, Math.round(v)) + note;
            case IDLE:
                // µs of CPU per second of wall time: 10,000 µs/s is 1 % of a core.
                return String.format(Locale.US, "%.1f %% of a core", v / 10_000);
            default:
                return String.format(Locale.US, "%,d µs", Math.round(v));
        }
    }

    /** Rota's figure over the best peer's: the highest throughput, or the lowest gap or CPU. */
    static String ratio(List<SystemRun> runs, Row row) {
        Double rota = null;
        Double best = null;
        for (SystemRun r : runs) {
            Double v = value(r, row);
            if (v == null) {
                continue;
            }
            if (r.system().equals("Rota")) {
                rota = v;
            } else if (best == null || (row.kind() == Kind.THROUGHPUT ? v > best : v < best)) {
                best = v;
            }
        }
        if (rota == null || best == null || best == 0) {
            return "–";
        }
        return String.format(Locale.US, "%.2f×", rota / best);
    }

    /** µs as ms with two decimals below 10 ms and one above (the precision the noise allows). */
    static String millis(long micros) {
        double ms = micros / 1000.0;
        return ms < 10 ? String.format(Locale.US, "%.2f", ms) : String.format(Locale.US, "%.1f", ms);
    }

    /**
     * The lines under the title: versions of everything, and how the figures were taken.
     *
     * @param runs        the systems
     * @param rotaCommit  the Rota commit measured
     * @param warmupS     warm-up per workload, seconds
     * @param measureS    measured window per workload, seconds
     * @param failoverS   the failover writer's seconds before and after the kill
     * @param mode        "quick" or "full"
     * @return Markdown lines
     */
    static String header(List<SystemRun> runs, String rotaCommit, double warmupS, double measureS,
                         double[] failoverS, String mode) {
        List<String> versions = new ArrayList<>();
        Function<SystemRun, String> server = r -> r.serverVersion() == null ? "?" : r.serverVersion();
        for (SystemRun r : runs) {
            if (r.skipped() != null) {
                versions.add(r.system() + ": skipped (" + r.skipped() + ")");
            } else {
                String v = r.system().equals("Rota") ? "Rota " + rotaCommit : server.apply(r);
                versions.add(v + " with " + r.clientLibrary() + " on JDK " + r.clientJdk());
            }
        }
        return "Versions: " + String.join("; ", versions) + ".\n\n"
                + String.format(Locale.US, "Method (%s pass): each system as three members on 127.0.0.1, alone on the "
                + "machine (started fresh, measured, stopped before the next); every member fsyncs each write. The "
                + "client is a fresh JVM per system running the same workload code with that system's own library. "
                + "Each row: %.0f s warm-up (not counted), then %.0f s measured; only operations that start and end "
                + "inside the window count. Writes and reads: closed loop, 256 B values, one key per in-flight chain. "
                + "Locks: each client has its own connection and session; latency is the acquire's. Failover: one "
                + "writer, one write in flight, retried until acknowledged; the leader is killed with SIGKILL after "
                + "%.0f s and writing goes on %.0f s; the gap is the longest time between two acknowledgements. "
                + "Server CPU: utime+stime of the three member processes (/proc/PID/stat) over the measured window, "
                + "divided by its operations; idle: the same over %d s after the start, before the client connects "
                + "(CPU that every row's figure includes). Ratio: Rota / best peer on that row (throughput: above 1 is better; "
                + "gap and CPU: below 1 is better).%n", mode, warmupS, measureS, failoverS[0], failoverS[1],
                Compare.IDLE_SECONDS);
    }
}
