package io.rota.server.sim;

import io.rota.proto.Frame;
import io.rota.raft.core.Message;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Directed schedules in the server simulator, for the holes a random sweep reaches too rarely (as the core
 * has its Figure 8 tests next to its simulator). Each names the rule, the schedule, and the invariant of
 * {@link ServerWorld} that fails if the hole is put back (docs/core.md, mutation table).
 */
class ServerScenarioTest {

    private static final long S = 1_000_000_000L;
    private static final long MS = 1_000_000L;

    private final ServerWorld w = new ServerWorld(7, 3);
    private final SimClient.Probe probe = new SimClient.Probe(w);

    private ServerWorld started() {
        w.quietNetwork = true;
        w.start();
        w.runUntil(4 * S);
        assertNotNull(w.leader(), "a leader after 4 s");
        return w;
    }

    private void runFor(long nanos) {
        w.runUntil(w.now() + nanos);
    }

    private SimMember followerOf(SimMember leader) {
        return w.members.stream().filter(m -> m != leader).findFirst().orElseThrow();
    }

    private Frame answered(CompletableFuture<Frame> f) {
        assertTrue(f.isDone(), "answered");
        return f.join();
    }

    @Test
    @DisplayName("issue 11, hole 4: a read confirmed by ReadIndex but never applied here ends by its deadline")
    void aConfirmedReadThatCannotBeAppliedEndsByItsDeadline() {
        started();
        SimMember leader = w.leader();
        SimMember follower = followerOf(leader);
        // The follower hears heartbeats and read confirmations but no entries: it can never apply the
        // read index the leader confirms.
        w.hold(m -> m instanceof Message.AppendEntries && m.to() == follower.id);
        answered(probeAfter(probe.put(leader, "w/1"), 500 * MS));
        CompletableFuture<Frame> read = probe.read(follower);
        runFor(6 * S);   // the world fails the run if the member keeps the read past its deadline
        Frame answer = answered(read);
        assertTrue(answer.hasError(), "a typed error, not a stale answer: " + answer);
        w.hold(m -> false);
        w.release(m -> true);
        runFor(2 * S);
    }

    @Test
    @DisplayName("issue 11, hole 4: a proposal whose index a later term reuses on the same leader is answered")
    void aProposalOverwrittenAtItsIndexIsAnswered() {
        started();
        SimMember old = w.leader();
        int isolated = old.index;
        // The old leader, cut from its peers, appends ten writes no one else will ever see.
        w.isolate(isolated, false, 3 * S);
        List<CompletableFuture<Frame>> lost = new ArrayList<>();
        for (int i = 1; i <= 10; i++) {
            lost.add(probe.put(old, "w/lost-" + i));
        }
        runFor(3 * S + 200 * MS);   // the others elect a leader and commit its no-op at the first of those indexes
        SimMember next = w.leader();
        assertNotNull(next);
        assertTrue(next != old, "a new leader while the old one was cut off");
        runFor(500 * MS);          // healed: the old leader's log is cut back to the new leader's
        // Hand leadership back at once, before anything else is written: the old leader appends its no-op
        // and then a new write at the indexes its lost writes had (the driver's pending-proposal map).
        next.driver.transferLeadership(old.id);
        runFor(1 * S);
        assertEquals(old, w.leader(), "leadership handed back");
        CompletableFuture<Frame> fresh = probe.put(old, "w/fresh");
        runFor(7 * S);             // the world fails the run if a write is never answered
        assertTrue(answered(fresh).hasPutResponse());
        // Each lost write was answered: the router retried the ones it knew were not applied.
        lost.forEach(this::answered);
    }

    @Test
    @DisplayName("issue 11, hole 5: a late ReadIndex answer meant for a member's previous life is not taken")
    void aReadIndexAnswerForThePreviousIncarnationIsIgnored() {
        started();
        SimMember leader = w.leader();
        SimMember follower = followerOf(leader);
        answered(probeAfter(probe.put(leader, "w/1"), 500 * MS));
        // The follower's read is confirmed by the leader, but the answer is held in the network ...
        w.hold(m -> m instanceof Message.ReadIndexResponse && m.to() == follower.id);
        probe.read(follower);
        runFor(300 * MS);
        // ... while the follower restarts.
        w.crash(follower.index, MS);
        runFor(1 * S);
        // It stops receiving entries, a write commits without it, and it serves a new read.
        w.hold(m -> (m instanceof Message.ReadIndexResponse || m instanceof Message.AppendEntries)
                && m.to() == follower.id);
        long revision = answered(probeAfter(probe.put(leader, "w/2"), 500 * MS)).getPutResponse().getHeader().getRevision();
        CompletableFuture<Frame> read = probe.read(follower);
        runFor(300 * MS);
        // The old life's answer arrives first: it names an older read index, and must not answer this read.
        assertEquals(1, w.releaseOldest(m -> m instanceof Message.ReadIndexResponse));
        runFor(500 * MS);
        w.hold(m -> false);
        w.release(m -> true);
        runFor(3 * S);
        Frame answer = answered(read);
        assertTrue(answer.getRangeResponse().getHeader().getRevision() >= revision, answer::toString);
    }

    private CompletableFuture<Frame> probeAfter(CompletableFuture<Frame> f, long nanos) {
        runFor(nanos);
        return f;
    }
}
