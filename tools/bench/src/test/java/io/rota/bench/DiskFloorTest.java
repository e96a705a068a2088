package io.rota.bench;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DiskFloorTest {

    @TempDir
    Path dir;

    @Test
    void measuresEveryRoundAndLeavesNothingBehind() throws Exception {
        DiskFloor.Result r = DiskFloor.measure(dir, 3, 20, 300);
        assertEquals(20, r.alone().sortedNanos().length);
        assertEquals(20, r.majority().sortedNanos().length);
        assertEquals(20, r.all().sortedNanos().length);
        assertTrue(r.alone().percentile(0) > 0, "a synced append takes time");
        for (int i = 0; i < 20; i++) {
            // Each round's majority finished no later than its last writer, so the sorted figures keep that order.
            assertTrue(r.majority().sortedNanos()[i] <= r.all().sortedNanos()[i], "round rank " + i);
        }
        try (Stream<Path> left = Files.list(dir)) {
            assertEquals(0, left.count(), "the measuring directory and its files are deleted");
        }
    }

    @Test
    void oneWriterIsItsOwnMajority() throws Exception {
        DiskFloor.Result r = DiskFloor.measure(dir, 1, 10, 64);
        assertEquals(r.all().mean(), r.majority().mean());
    }

    @Test
    void aDirectoryThatCannotBeWrittenIsAnIoError() throws Exception {
        Path file = Files.writeString(dir.resolve("not-a-dir"), "x");
        assertThrows(IOException.class, () -> DiskFloor.measure(file, 3, 5, 10));
    }

    @Test
    void theReportStatesTheCeilingsTheFiguresImply() {
        // Alone 500 µs a sync: 2,000 writes/s with a disk per member; a majority of three 1,000 µs: 1,000 writes/s
        // on one shared disk, and a lock cycle (two writes in a row) 500/s.
        DiskFloor.Result r = new DiskFloor.Result(3, 300, DiskFloor.Sample.of(new long[] {500_000, 500_000}),
                DiskFloor.Sample.of(new long[] {900_000, 1_100_000}), DiskFloor.Sample.of(new long[] {1_200_000}));
        String report = DiskFloor.report(r, dir);
        assertTrue(report.contains("at most 1,000 writes/s at one in flight; "
                + "a lock + unlock cycle (two writes in a row) at most 500/s"),
                report);
        assertTrue(report.contains("at most 2,000 writes/s at one in flight; 1,000 lock cycles/s"), report);
        assertTrue(report.contains("a majority (2) done p50 1,100 µs, mean 1,000 µs"), report);
    }

    @Test
    void badOptionsAreRefusedWithTheirNames() {
        StringWriter err = new StringWriter();
        CommandLine cl = new CommandLine(new RotaBench()).setErr(new PrintWriter(err));
        assertEquals(2, cl.execute("disk", "--writers", "0", "--dir", dir.toString()));
        assertTrue(err.toString().contains("--writers, --rounds and --bytes must be at least 1"), err.toString());
        err.getBuffer().setLength(0);
        assertEquals(2, cl.execute("disk", "--dir", dir.resolve("missing").toString()));
        assertTrue(err.toString().contains("is not a writable directory"), err.toString());
    }
}
