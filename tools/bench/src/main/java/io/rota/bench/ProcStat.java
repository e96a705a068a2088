package io.rota.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;

/**
 * CPU time of the member processes, from Linux's {@code /proc/<pid>/stat}: user plus system time
 * ({@code utime + stime}, fields 14 and 15, in clock ticks) of the whole process, all threads included.
 * The bench samples it at the start and end of each measured window; the difference divided by the
 * operations done is the server CPU per operation.
 */
final class ProcStat {

    /** Clock ticks per second ({@code getconf CLK_TCK}); 100 on every Linux this runs on. */
    static final long DEFAULT_TICKS_PER_SECOND = 100;

    private ProcStat() {
    }

    /**
     * The CPU ticks (utime + stime) in one {@code /proc/<pid>/stat} line. The command name in parentheses
     * may hold spaces and parentheses itself, so fields are counted from the last ')'.
     *
     * @param statLine the file's content
     * @return utime + stime, in clock ticks
     * @throws IllegalArgumentException if the line is not a stat line
     */
    static long cpuTicks(String statLine) {
        int close = statLine.lastIndexOf(')');
        if (close < 0) {
            throw new IllegalArgumentException("not a /proc/<pid>/stat line: " + statLine);
        }
        String[] after = statLine.substring(close + 1).trim().split(" +");
        // after[0] is field 3 (state), so field n is after[n - 3]: utime (14) and stime (15).
        if (after.length < 13) {
            throw new IllegalArgumentException("too few fields in /proc/<pid>/stat line: " + statLine);
        }
        return Long.parseLong(after[11]) + Long.parseLong(after[12]);
    }

    /**
     * The summed CPU ticks of the given processes now; a process that has exited counts 0.
     *
     * @param pids the member processes
     * @return utime + stime of all of them, in clock ticks
     */
    static long cpuTicks(Collection<Long> pids) {
        long sum = 0;
        for (long pid : pids) {
            try {
                sum += cpuTicks(Files.readString(Path.of("/proc", Long.toString(pid), "stat")));
            } catch (IOException gone) {
                // The process exited (the failover kill): it no longer adds CPU.
            }
        }
        return sum;
    }

    /**
     * Server CPU per operation.
     *
     * @param ticks          CPU ticks spent by the members during the window
     * @param ticksPerSecond the clock tick rate
     * @param ops            operations done in the window
     * @return microseconds of CPU per operation, or -1 when no operation was done
     */
    static double microsPerOp(long ticks, long ticksPerSecond, long ops) {
        if (ops <= 0) {
            return -1;
        }
        return ticks * 1_000_000.0 / ticksPerSecond / ops;
    }
}
