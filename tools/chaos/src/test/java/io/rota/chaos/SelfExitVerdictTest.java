package io.rota.chaos;

import io.rota.chaos.checker.Verdict;
import io.rota.chaos.history.History;
import io.rota.testkit.ProcessCluster.SelfExit;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A member that exited on its own (a crash, a fail-stop, a refusal: not a nemesis's kill) fails a chaos run
 * whatever the checker says, and the report counts and names each such exit.
 */
class SelfExitVerdictTest {

    private static final History.Counts COUNTS = new History.Counts(500, 3, 2);

    private static int exitCode(Verdict verdict, long lost, int selfExits) {
        return new ChaosRun.Outcome(verdict, COUNTS, lost, 5, selfExits, "").exitCode();
    }

    @Test
    void aMemberThatExitedOnItsOwnFailsEvenALinearizableRun() {
        assertEquals(0, exitCode(Verdict.YES, 0, 0));
        assertEquals(1, exitCode(Verdict.YES, 0, 1));
        assertEquals(1, exitCode(Verdict.UNKNOWN, 0, 2), "a failure, not an undecided run");
        assertEquals(2, exitCode(Verdict.UNKNOWN, 0, 0));
        assertEquals(1, exitCode(Verdict.NO, 0, 0));
        assertEquals(1, exitCode(Verdict.YES, 1, 0), "a lost write, as before");
    }

    @Test
    void theReportCountsThemAndNamesEachWithItsStatusAndLastLines() {
        assertEquals("members exited on their own: 0", ChaosRun.selfExitReport(List.of()));

        String report = ChaosRun.selfExitReport(List.of(
                new SelfExit("n2", 1234, 1, "12:00:01 INFO became leader\nrota server n2 (id 2) stopped: its Raft"
                        + " node failed with java.io.IOException: disk"),
                new SelfExit("n7", 99, 3, "rota server n7 (id 7) refused to run: peer 1 refused this member")));
        List<String> lines = report.lines().toList();
        assertTrue(lines.get(0).startsWith("members exited on their own: 2 (the run fails"), report);
        assertEquals(List.of(
                "  member n2 (pid 1234) exited on its own with status 1:",
                "    12:00:01 INFO became leader",
                "    rota server n2 (id 2) stopped: its Raft node failed with java.io.IOException: disk",
                "  member n7 (pid 99) exited on its own with status 3:",
                "    rota server n7 (id 7) refused to run: peer 1 refused this member"), lines.subList(1, lines.size()));
    }
}
