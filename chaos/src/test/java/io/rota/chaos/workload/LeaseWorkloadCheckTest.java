package io.rota.chaos.workload;

import io.rota.chaos.checker.Verdict;
import io.rota.chaos.history.Event;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The lease properties on hand-written histories (times in seconds; E = 1 s, so the bound is 3 + 2 + 1 = 6 s). */
class LeaseWorkloadCheckTest {

    private static final Duration E = Duration.ofSeconds(1);
    private static final long S = 1_000_000_000L;

    private final List<Event> events = new ArrayList<>();

    private void pair(String f, String value, double from, double to) {
        events.add(new Event(0, Event.Type.INVOKE, f, "lease-0-0", null, null, (long) (from * S)));
        events.add(new Event(0, Event.Type.OK, f, "lease-0-0", value, null, (long) (to * S)));
    }

    private void held(double stopAt) {
        pair("grant", "7", 0, 0.1);
        pair("write", "7", 0.2, 0.3);
        for (double t = 0.5; t < stopAt; t += 0.5) {
            pair("read", "held", t, t + 0.01);
        }
        pair("stop", null, stopAt, stopAt);
    }

    @Test
    void aKeyThatVanishesWithinTheBoundPasses() {
        held(5);
        pair("read", "held", 6, 6.01);
        pair("read", null, 8, 8.01);
        WorkloadResult r = LeaseWorkload.checkHistory(events, E);
        assertEquals(Verdict.YES, r.verdict(), r.report());
        assertTrue(r.report().contains("expiries observed: 1"), r.report());
    }

    @Test
    void aKeptAliveKeyThatVanishesIsAViolation() {
        pair("grant", "7", 0, 0.1);
        pair("write", "7", 0.2, 0.3);
        pair("read", null, 1, 1.01);
        pair("stop", null, 2, 2);
        WorkloadResult r = LeaseWorkload.checkHistory(events, E);
        assertEquals(Verdict.NO, r.verdict(), r.report());
        assertTrue(r.report().contains("while kept alive"), r.report());
    }

    @Test
    void aVanishingAfterOnLostIsExcused() {
        pair("grant", "7", 0, 0.1);
        pair("write", "7", 0.2, 0.3);
        pair("read", null, 1, 1.01);
        pair("lost", "UNAVAILABLE", 1.2, 1.2);
        pair("stop", null, 2, 2);
        assertEquals(Verdict.YES, LeaseWorkload.checkHistory(events, E).verdict());
    }

    @Test
    void aKeyStillPresentPastTheBoundIsAViolationEvenAcrossALeaderChange() {
        held(5);
        pair("read", "held", 12, 12.01);
        pair("read", null, 12.5, 12.51);
        assertEquals(Verdict.NO, LeaseWorkload.checkHistory(events, E).verdict());

        events.add(0, Event.nemesis("kill", "kill -9 n1 (leader)", 4 * S));
        events.add(Event.nemesis("heal", "restarted n1", 13 * S));
        WorkloadResult r = LeaseWorkload.checkHistory(events, E);
        assertEquals(Verdict.NO, r.verdict(), r.report());
        assertTrue(r.report().contains("faults meanwhile: kill -9 n1 (leader) at 4.000 s"), r.report());
    }

    @Test
    void aKeyOutlivingItsBoundWhileTheClusterHadNoMajorityIsNotJudged() {
        held(5);
        pair("read", "held", 12, 12.01);
        pair("read", null, 12.5, 12.51);
        events.add(0, Event.nemesis("kill", "kill -9 n1 (leader), n2", 4 * S));
        events.add(Event.nemesis("heal", "restarted n1, n2", 13 * S));
        WorkloadResult r = LeaseWorkload.checkHistory(events, E);
        assertEquals(Verdict.YES, r.verdict(), r.report());
        assertTrue(r.report().contains("not judged"), r.report());
    }
}
