package io.rota.bench;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ProcStatTest {

    /** A real /proc/PID/stat line of a JVM (utime 1234, stime 567), with a command name holding ") (". */
    private static final String LINE = "4242 (java) (x) S 1 4242 4242 0 -1 4194304 51234 0 12 0 1234 567 0 0 20 0 "
            + "45 0 123456 4567890123 65432 18446744073709551615 1 1 0 0 0 0 0 4096 16796879 0 0 0 17 1 0 0 0 0 0";

    @Test
    void utimePlusStimeCountedFromTheLastParenthesis() {
        assertEquals(1234 + 567, ProcStat.cpuTicks(LINE));
    }

    @Test
    void aLineThatIsNotStatIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> ProcStat.cpuTicks("no parentheses here"));
        assertThrows(IllegalArgumentException.class, () -> ProcStat.cpuTicks("1 (java) S 1 2"));
    }

    @Test
    void microsPerOperation() {
        // 250 ticks at 100/s = 2.5 s of CPU over 10,000 operations = 250 µs each.
        assertEquals(250.0, ProcStat.microsPerOp(250, 100, 10_000), 1e-9);
        assertEquals(-1, ProcStat.microsPerOp(250, 100, 0));
    }

    @Test
    void thisJvmHasSpentSomeCpuAndAGoneProcessCountsNothing() {
        Assumptions.assumeTrue(Files.isReadable(Path.of("/proc/self/stat")),
                "SKIPPED: no /proc/self/stat here (not Linux); the bench's CPU figures need Linux's /proc");
        long self = ProcessHandle.current().pid();
        assertTrue(ProcStat.cpuTicks(List.of(self)) > 0, "a running JVM has used CPU");
        assertEquals(0, ProcStat.cpuTicks(List.of(Long.MAX_VALUE)));
    }
}
