package io.rota.chaos.checker;

import io.rota.chaos.history.Event;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The lease properties on hand-written histories (times in seconds). TTL 3 s less the 0.5 s margin: a
 * keep-alive sent at t makes the holder safe until t + 2.5 s. E = 1 s, so the late-expiry bound is
 * TTL + 3E + 1 s + 1 s slack = 8 s.
 */
class LeaseCheckerTest {

    private static final Duration TTL = Duration.ofSeconds(3);
    private static final Duration E = Duration.ofSeconds(1);
    private static final Duration SLACK = Duration.ofSeconds(1);
    /** The lease workload records onLost from its listener thread as this + the holder's process number. */
    private static final int LISTENER_PROCESS = 100_000;
    private static final long S = 1_000_000_000L;
    private static final String KEY = "lease-0-0";

    private final List<Event> events = new ArrayList<>();

    private void pair(int process, String f, String value, double from, double to) {
        events.add(new Event(process, Event.Type.INVOKE, f, KEY, null, null, (long) (from * S)));
        events.add(new Event(process, Event.Type.OK, f, KEY, value, null, (long) (to * S)));
    }

    private void pair(String f, String value, double from, double to) {
        pair(0, f, value, from, to);
    }

    /** The holder records that a keep-alive sent at {@code sent} was confirmed, at {@code at}. */
    private void renewed(double sent, double at) {
        pair("safe-until", Long.toString((long) ((sent + 2.5) * S)), at, at);
    }

    /** Granted at 0, put at 0.3, kept alive (a keep-alive each second) and read every half second until stopAt. */
    private void held(double stopAt) {
        pair("grant", "7", 0, 0.1);
        renewed(0, 0.1);
        pair("write", "7", 0.2, 0.3);
        for (double t = 0.5; t < stopAt; t += 0.5) {
            if (t == Math.floor(t)) {
                renewed(t - 0.5, t);
            }
            pair("read", "held", t, t + 0.01);
        }
        pair("stop", null, stopAt, stopAt);
    }

    private CheckReport check() {
        return LeaseChecker.check(events, TTL, LeaseChecker.bound(TTL, E, SLACK));
    }

    @Test
    void aKeyThatVanishesAfterSafeUntilAndWithinTheBoundPasses() {
        held(5);   // the last keep-alive was sent at 4.5: safe until 7
        pair("read", "held", 6, 6.01);
        pair("read", null, 8, 8.01);
        CheckReport r = check();
        assertEquals(Verdict.YES, r.verdict(), r.report());
        assertTrue(r.report().contains("expiries observed: 1"), r.report());
        assertTrue(r.report().contains("safe-until recorded for 1"), r.report());
    }

    @Test
    void aKeptAliveKeyGoneBeforeSafeUntilIsAViolation() {
        pair("grant", "7", 0, 0.1);
        renewed(0, 0.1);
        pair("write", "7", 0.2, 0.3);
        pair("read", null, 1, 1.01);
        pair("stop", null, 2, 2);
        CheckReport r = check();
        assertEquals(Verdict.NO, r.verdict(), r.report());
        assertTrue(r.report().contains("before its holder's safe-until 2.500 s"), r.report());
    }

    @Test
    void onLostDoesNotExcuseAKeyGoneBeforeSafeUntil() {
        pair("grant", "7", 0, 0.1);
        renewed(0, 0.1);
        pair("write", "7", 0.2, 0.3);
        pair(LISTENER_PROCESS, "lost", "UNAVAILABLE", 1.2, 1.2);
        pair("read", null, 1.5, 1.51);
        pair("stop", null, 2, 2);
        CheckReport r = check();
        assertEquals(Verdict.NO, r.verdict(), r.report());
        assertTrue(r.report().contains("onLost at 1.200 s is no excuse"), r.report());
    }

    @Test
    void aStoppedHoldersKeyGoneBeforeItsSafeUntilIsAnEarlyExpiry() {
        held(5);                       // safe until 7
        pair("read", null, 5.5, 5.51);   // gone 1.5 s early: the old "kept alive" check let this pass
        CheckReport r = check();
        assertEquals(Verdict.NO, r.verdict(), r.report());
        assertTrue(r.report().contains("an early expiry"), r.report());
    }

    @Test
    void aKeptAliveKeyGoneAfterItsSafeUntilIsCountedNotJudged() {
        pair("grant", "7", 0, 0.1);
        renewed(0, 0.1);                 // and no keep-alive confirmed since: safe until 2.5
        pair("write", "7", 0.2, 0.3);
        pair("read", "held", 2, 2.01);
        pair("read", null, 3, 3.01);
        pair(LISTENER_PROCESS, "lost", "UNAVAILABLE", 3.5, 3.5);
        pair("stop", null, 4, 4);
        CheckReport r = check();
        assertEquals(Verdict.YES, r.verdict(), r.report());
        assertTrue(r.report().contains("kept-alive keys gone after their safe-until (keep-alives failing; not judged): 1"),
                r.report());
    }

    @Test
    void aKeyStillPresentPastTheBoundIsAViolationEvenAcrossALeaderChange() {
        held(5);
        pair("read", "held", 14, 14.01);
        pair("read", null, 14.5, 14.51);
        assertEquals(Verdict.NO, check().verdict());

        events.add(0, Event.nemesis("kill", "kill -9 n1 (leader)", 4 * S));
        events.add(Event.nemesis("heal", "restarted n1", 15 * S));
        CheckReport r = check();
        assertEquals(Verdict.NO, r.verdict(), r.report());
        assertTrue(r.report().contains("faults meanwhile: kill -9 n1 (leader) at 4.000 s"), r.report());
        assertTrue(r.report().contains("(bound 8.0 s)"), r.report());
    }

    @Test
    void aKeyGoneWithinTheCorrectedBoundPasses() {
        held(5);
        pair("read", "held", 12, 12.01);   // 7 s after the stop: within TTL + 3E + 1 s + slack
        pair("read", null, 12.5, 12.51);
        CheckReport r = check();
        assertEquals(Verdict.YES, r.verdict(), r.report());
    }

    @Test
    void aKeyOutlivingItsBoundWhileTheClusterHadNoMajorityIsNotJudged() {
        held(5);
        pair("read", "held", 14, 14.01);
        pair("read", null, 14.5, 14.51);
        events.add(0, Event.nemesis("kill", "kill -9 n1 (leader), n2", 4 * S));
        events.add(Event.nemesis("heal", "restarted n1, n2", 15 * S));
        CheckReport r = check();
        assertEquals(Verdict.YES, r.verdict(), r.report());
        assertTrue(r.report().contains("not judged"), r.report());
    }
}
