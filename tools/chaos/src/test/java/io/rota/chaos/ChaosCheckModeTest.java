package io.rota.chaos;

import io.rota.chaos.checker.Verdict;
import io.rota.chaos.history.Event;
import io.rota.chaos.history.HistoryWriter;
import io.rota.chaos.workload.RegisterWorkload;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code check FILE} on saved histories: a clean one passes, one with a stale final read fails with a window. */
class ChaosCheckModeTest {

    @TempDir
    Path dir;

    private Path history(String finalValue) {
        Path file = dir.resolve("history.jsonl");
        try (HistoryWriter w = new HistoryWriter(file)) {
            w.write(new Event(0, Event.Type.INVOKE, "write", "k0", "v1", null, 10));
            w.write(new Event(0, Event.Type.OK, "write", "k0", "v1", null, 20));
            w.write(Event.nemesis("kill", "kill -9 n1 (leader)", 25));
            w.write(new Event(1, Event.Type.INVOKE, "write", "k0", "v2", null, 30));
            w.write(new Event(1, Event.Type.OK, "write", "k0", "v2", null, 40));
            w.write(Event.nemesis("heal", "restarted n1", 45));
            int p = RegisterWorkload.FINAL_PROCESS;
            w.write(new Event(p, Event.Type.INVOKE, "read", "k0", null, null, 50));
            w.write(new Event(p, Event.Type.OK, "read", "k0", finalValue, null, 60));
        }
        return file;
    }

    @Test
    void aCleanHistoryPasses() {
        ChaosRun.Outcome o = ChaosRun.check(history("v2"), "register", new PrintStream(new ByteArrayOutputStream(), true,
                StandardCharsets.UTF_8));
        assertEquals(Verdict.YES, o.verdict());
        assertEquals(0, o.exitCode());
        assertEquals(1, o.faults());
    }

    @Test
    void aLostWriteFailsWithTheOffendingWindow() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ChaosRun.Outcome o = ChaosRun.check(history("v1"), "register", new PrintStream(out, true, StandardCharsets.UTF_8));
        String report = out.toString(StandardCharsets.UTF_8);
        assertEquals(Verdict.NO, o.verdict(), report);
        assertEquals(1, o.lost(), report);
        assertEquals(1, o.exitCode());
        assertTrue(report.contains("key k0: NOT linearizable") && report.contains("write v2"), report);
        assertTrue(report.contains("linearizable: no  ops: ok=3 failed=0 indeterminate=0  acknowledged writes lost: 1"),
                report);
    }

    @Test
    void aLockHistoryIsCheckedByTheLockWorkloadAfterTheRoundTrip() {
        Path file = dir.resolve("lock.jsonl");
        try (HistoryWriter w = new HistoryWriter(file)) {
            w.write(new Event(0, Event.Type.INVOKE, "acquire", "lock-0", null, null, 10));
            w.write(new Event(0, Event.Type.OK, "acquire", "lock-0", "12", null, 20));
            w.write(new Event(0, Event.Type.INVOKE, "write", "lock-0", "12", null, 30));
            w.write(new Event(0, Event.Type.OK, "write", "lock-0", "12", null, 30));
            w.write(new Event(1, Event.Type.INVOKE, "write", "lock-0", "10", null, 40));
            w.write(new Event(1, Event.Type.OK, "write", "lock-0", "10", null, 40));   // stale, yet accepted
            w.write(new Event(0, Event.Type.INVOKE, "guard", "lock-0", "12", null, 50));
            w.write(new Event(0, Event.Type.OK, "guard", "lock-0", "12", true, 60));
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ChaosRun.Outcome o = ChaosRun.check(file, "lock", new PrintStream(out, true, StandardCharsets.UTF_8));
        String report = out.toString(StandardCharsets.UTF_8);
        assertEquals(Verdict.NO, o.verdict(), report);
        assertEquals(1, o.exitCode());
        assertTrue(report.contains("lock violations with fencing (accepted writes that broke token order): 1"), report);
    }
}
