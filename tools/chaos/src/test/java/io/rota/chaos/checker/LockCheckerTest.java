package io.rota.chaos.checker;

import io.rota.chaos.history.Event;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The lock checks on hand-written histories (times in milliseconds; one lock, "lock-0"). */
class LockCheckerTest {

    private static final String LOCK = "lock-0";
    private static final long MS = 1_000_000L;

    private final List<Event> events = new ArrayList<>();

    private void at(int process, Event.Type type, String f, Long token, Boolean result, long ms) {
        events.add(new Event(process, type, f, LOCK, token == null ? null : Long.toString(token), result, ms * MS));
    }

    private void acquire(int process, long token, long from, long to) {
        at(process, Event.Type.INVOKE, "acquire", null, null, from);
        at(process, Event.Type.OK, "acquire", token, null, to);
    }

    private void write(int process, long token, boolean accepted, long ms) {
        at(process, Event.Type.INVOKE, "write", token, null, ms);
        at(process, accepted ? Event.Type.OK : Event.Type.FAIL, "write", token, null, ms);
    }

    private void guard(int process, long token, boolean applied, long from, long to) {
        at(process, Event.Type.INVOKE, "guard", token, null, from);
        at(process, Event.Type.OK, "guard", token, applied, to);
    }

    private void release(int process, long token, long from, long to) {
        at(process, Event.Type.INVOKE, "release", token, null, from);
        at(process, Event.Type.OK, "release", token, true, to);
    }

    /** A holder that acquires, writes twice, writes guarded and releases, all in [from, from + 100 ms]. */
    private void cleanHolder(int process, long token, long from) {
        acquire(process, token, from, from + 10);
        write(process, token, true, from + 20);
        write(process, token, true, from + 40);
        guard(process, token, true, from + 50, from + 60);
        release(process, token, from + 70, from + 100);
    }

    private CheckReport check() {
        return LockChecker.check(events);
    }

    @Test
    void successiveHoldersWithGrowingTokensPass() {
        cleanHolder(0, 10, 0);
        cleanHolder(1, 12, 200);
        cleanHolder(0, 15, 400);
        events.add(Event.nemesis("pause", "SIGSTOP n2 (leader)", 150 * MS));
        CheckReport r = check();
        assertEquals(Verdict.YES, r.verdict(), r.report());
        assertTrue(r.report().contains("acquisitions: 3"), r.report());
        assertTrue(r.report().contains("fenced writes accepted: 6, stale writes rejected by the resource: 0"), r.report());
        assertTrue(r.report().contains("overlaps observed (a critical section began before another holder's ended): 0"),
                r.report());
        assertTrue(r.report().contains("violations: 0"), r.report());
    }

    private void doomed(int process, String kind, Event.Type outcome, long ms) {
        events.add(new Event(process, Event.Type.INVOKE, "doomed", LOCK, kind, null, ms * MS));
        events.add(new Event(process, outcome, "doomed", LOCK, kind, null, (ms + 5) * MS));
    }

    @Test
    void doomedOperationsAreCountedAndOneThatSucceedsIsAViolation() {
        cleanHolder(0, 10, 0);
        doomed(0, "oversized", Event.Type.FAIL, 30);
        doomed(0, "self", Event.Type.INFO, 40);
        cleanHolder(1, 12, 200);
        CheckReport ok = check();
        assertEquals(Verdict.YES, ok.verdict(), ok.report());
        assertTrue(ok.report().contains("refused 1, outcome unknown 1, succeeded (must not): 0"), ok.report());

        doomed(1, "denied", Event.Type.OK, 230);
        CheckReport r = check();
        assertEquals(Verdict.NO, r.verdict(), r.report());
        assertTrue(r.report().contains("doomed operation 'denied' succeeded"), r.report());
        assertTrue(r.report().contains("violations: 1"), r.report());
    }

    @Test
    void aStaleWriteAcceptedByTheResourceIsAViolation() {
        acquire(0, 10, 0, 10);
        write(0, 10, true, 20);
        at(0, Event.Type.INVOKE, "stall", 10L, null, 30);
        acquire(1, 12, 15, 300);
        write(1, 12, true, 310);
        at(0, Event.Type.OK, "stall", 10L, null, 320);
        write(0, 10, true, 330);   // a broken resource let the stale holder through
        release(1, 12, 400, 410);
        release(0, 10, 420, 430);
        CheckReport r = check();
        assertEquals(Verdict.NO, r.verdict(), r.report());
        assertTrue(r.report().contains("lock violations with fencing (accepted writes that broke token order): 1"),
                r.report());
        assertTrue(r.report().contains("accepted token 10 from process 0"), r.report());
    }

    @Test
    void anOverlapWhoseStaleWritesWereRejectedIsNoViolation() {
        acquire(0, 10, 0, 10);
        write(0, 10, true, 20);
        at(0, Event.Type.INVOKE, "stall", 10L, null, 30);
        acquire(1, 12, 15, 300);
        write(1, 12, true, 310);
        at(0, Event.Type.OK, "stall", 10L, null, 320);
        write(0, 10, false, 330);                 // the resource's fencing refused it
        guard(0, 10, false, 340, 350);            // and so did Rota
        guard(1, 12, true, 345, 360);
        release(0, 10, 420, 430);
        release(1, 12, 400, 410);
        CheckReport r = check();
        assertEquals(Verdict.YES, r.verdict(), r.report());
        assertTrue(r.report().contains("stale writes rejected by the resource: 1"), r.report());
        assertTrue(r.report().contains("from a stale holder, a later holder had acquired: 1"), r.report());
        assertTrue(r.report().contains("overlaps observed (a critical section began before another holder's ended): 1"),
                r.report());
        assertTrue(r.report().contains("simulated holder stalls: 1"), r.report());
    }

    @Test
    void aStaleGuardedRotaWriteThatAppliedIsAViolation() {
        acquire(0, 10, 0, 10);
        acquire(1, 12, 15, 300);
        guard(0, 10, true, 320, 330);   // invoked after token 12 was acquired: its key must be gone
        release(0, 10, 340, 350);
        release(1, 12, 400, 410);
        CheckReport r = check();
        assertEquals(Verdict.NO, r.verdict(), r.report());
        assertTrue(r.report().contains("stale guarded Rota writes applied: 1"), r.report());
    }

    @Test
    void aTokenLowerThanOneAcquiredBeforeTheAcquireBeganIsAViolation() {
        cleanHolder(0, 12, 0);
        cleanHolder(1, 10, 200);   // acquired after the first holder had token 12, yet with 10
        CheckReport r = check();
        assertEquals(Verdict.NO, r.verdict(), r.report());
        assertTrue(r.report().contains("token order violations (a token handed out twice, or lower than one acquired"
                + " before): 1"), r.report());
    }

    private void safeUntil(int process, long until, long ms) {
        at(process, Event.Type.INVOKE, "safe-until", null, null, ms);
        at(process, Event.Type.OK, "safe-until", until * MS, null, ms);
    }

    @Test
    void aHolderWhoAcquiresWithinTheLastHoldersSafeUntilIsAViolation() {
        acquire(0, 10, 0, 10);
        safeUntil(0, 2_500, 10);     // nobody else may hold the lock before 2.5 s
        write(0, 10, true, 20);
        acquire(1, 12, 15, 1_000);   // yet token 12 was granted at 1 s: the lease expired early
        safeUntil(1, 3_500, 1_000);
        release(0, 10, 1_200, 1_210);
        release(1, 12, 1_300, 1_310);
        CheckReport r = check();
        assertEquals(Verdict.NO, r.verdict(), r.report());
        assertTrue(r.report().contains("holders whose safe windows overlap (a higher token acquired before a lower"
                + " one's safe-until, release or stall): 1"), r.report());
        assertTrue(r.report().contains("process 1 acquired token 12 at 1.000 s, while process 0's tenure with token 10"
                + " lasted until 1.200 s (safe-until 2.500 s)"), r.report());
    }

    @Test
    void successorsAfterAReleaseAStallOrTheSafeUntilPass() {
        acquire(0, 10, 0, 10);
        safeUntil(0, 2_500, 10);
        release(0, 10, 100, 110);          // released at 0.1 s: the next may come at once
        acquire(1, 12, 50, 120);
        safeUntil(1, 2_600, 120);
        at(1, Event.Type.INVOKE, "stall", 12L, null, 200);   // the stall revoked the lease at 0.2 s
        acquire(2, 14, 150, 250);
        safeUntil(2, 2_700, 250);
        at(1, Event.Type.OK, "stall", 12L, null, 260);
        write(1, 12, false, 270);
        release(1, 12, 280, 290);
        acquire(0, 16, 300, 2_800);        // holder 2 never released: its lease expired after 2.7 s
        safeUntil(0, 5_000, 2_800);
        release(0, 16, 2_900, 2_910);
        CheckReport r = check();
        assertEquals(Verdict.YES, r.verdict(), r.report());
        assertTrue(r.report().contains("safe-until, release or stall): 0"), r.report());
    }

    @Test
    void aTokenHandedOutTwiceIsAViolation() {
        acquire(0, 10, 0, 10);
        acquire(1, 10, 5, 20);
        CheckReport r = check();
        assertEquals(Verdict.NO, r.verdict(), r.report());
        assertTrue(r.report().contains("token 10 handed out twice"), r.report());
    }
}
