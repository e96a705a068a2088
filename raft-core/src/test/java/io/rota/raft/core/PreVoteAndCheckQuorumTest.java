package io.rota.raft.core;

import io.rota.raft.core.Message.RequestVote;
import io.rota.raft.core.Message.RequestVoteResponse;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.List;

import static io.rota.raft.core.Network.ofType;
import static io.rota.raft.core.RaftNode.NONE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** PreVote (§9.6 of the thesis), the leader lease of voters (§4.2.3) and CheckQuorum (§6.2). Defaults have both on. */
class PreVoteAndCheckQuorumTest {

    private static RequestVote preVote(long term, long from, long to, long lastIndex, long lastTerm) {
        return new RequestVote(term, from, to, lastIndex, lastTerm, true, false);
    }

    @Test
    @DisplayName("§9.6: a pre-candidate asks for votes in term+1 without incrementing its own term or voting")
    void preCandidateKeepsItsTerm() {
        Network net = new Network(3);
        RaftNode node = net.node(1);
        while (node.role() == Role.FOLLOWER) {
            node.tick();
        }

        assertEquals(Role.PRE_CANDIDATE, node.role());
        assertEquals(0, node.currentTerm());
        assertEquals(NONE, node.votedFor());
        Ready ready = net.handleReady(1);
        assertNull(ready.hardState(), "nothing to persist: term and vote are unchanged");
        assertEquals(List.of(preVote(1, 1, 2, 0, 0), preVote(1, 1, 3, 0, 0)), ready.messages());
    }

    @Test
    @DisplayName("§9.6: a granted pre-vote changes neither the voter's term nor its vote")
    void preVoteChangesNothingOnTheVoter() {
        Network net = new Network(3);

        net.node(2).step(preVote(5, 1, 2, 0, 0));

        assertEquals(List.of(new RequestVoteResponse(5, 2, 1, true, true)), net.collect(2));
        assertEquals(0, net.node(2).currentTerm());
        assertEquals(NONE, net.node(2).votedFor());
    }

    @Test
    @DisplayName("§9.6: a partitioned node with PreVote keeps its term and does not disrupt the leader when it rejoins")
    void partitionedNodeDoesNotDisruptOnRejoin() {
        Network net = new Network(3);
        net.electLeader(1);
        long term = net.node(1).currentTerm();

        net.isolate(3);
        for (int i = 0; i < 100; i++) { // ten election timeouts alone
            net.tickAll();
            net.drain();
        }
        assertEquals(term, net.node(3).currentTerm(), "pre-votes that fail do not raise the term");

        net.recover();
        for (int i = 0; i < 5; i++) {
            net.tickAll();
            net.drain();
        }
        assertEquals(1, net.leader());
        assertEquals(term, net.node(1).currentTerm());
        assertEquals(Role.FOLLOWER, net.node(3).role());
        assertEquals(1, net.node(3).leaderId());
        assertEquals(term, net.node(3).currentTerm());
    }

    @Test
    @DisplayName("§4.2.3: a server that heard from the leader within the election timeout ignores RequestVote and pre-vote of a higher term")
    void voterInLeaseIgnoresHigherTermRequests() {
        Network net = new Network(3);
        net.electLeader(1);
        RaftNode follower = net.node(2);
        long term = follower.currentTerm();

        follower.step(new RequestVote(term + 1, 3, 2, 100, term, false, false));
        follower.step(preVote(term + 1, 3, 2, 100, term));

        assertEquals(List.of(), net.collect(2));
        assertEquals(term, follower.currentTerm());
        assertEquals(1, follower.votedFor());
        assertEquals(1, follower.leaderId());

        for (int i = 0; i < 10; i++) { // one election timeout without hearing from the leader
            follower.tick();
        }
        follower.step(new RequestVote(term + 1, 3, 2, 100, term, false, false));
        assertEquals(List.of(new RequestVoteResponse(term + 1, 2, 3, true, false)),
                ofType(net.collect(2), RequestVoteResponse.class), "the lease has expired");
    }

    @Test
    @DisplayName("§3.10: a leadership-transfer vote (leadershipTransfer=true) is not blocked by the lease")
    void transferVoteIsNotBlockedByLease() {
        Network net = new Network(3);
        net.electLeader(1);
        RaftNode follower = net.node(2);
        long term = follower.currentTerm();

        follower.step(new RequestVote(term + 1, 3, 2, follower.lastIndex(), follower.lastTerm(), false, true));

        assertEquals(List.of(new RequestVoteResponse(term + 1, 2, 3, true, false)), net.collect(2));
        assertEquals(term + 1, follower.currentTerm());
        assertEquals(3, follower.votedFor());
    }

    @Test
    @DisplayName("§6.2 CheckQuorum: a leader cut off from the majority steps down within two election timeouts")
    void isolatedLeaderStepsDown() {
        Network net = new Network(3);
        net.electLeader(1);
        long term = net.node(1).currentTerm();
        net.isolate(1);

        int ticks = 0;
        while (net.node(1).role() == Role.LEADER && ticks < 100) {
            net.tick(1);
            net.drain();
            ticks++;
        }

        assertTrue(ticks <= 20, "stepped down after " + ticks + " ticks");
        assertEquals(Role.FOLLOWER, net.node(1).role());
        assertEquals(NONE, net.node(1).leaderId());
        assertEquals(term, net.node(1).currentTerm());
    }

    @Test
    @DisplayName("§6.2 CheckQuorum: a leader that hears from a majority stays leader")
    void connectedLeaderStaysLeader() {
        Network net = new Network(3);
        net.electLeader(1);
        net.isolate(3); // a majority (1, 2) remains

        for (int i = 0; i < 100; i++) {
            net.tick(1);
            net.drain();
        }

        assertEquals(Role.LEADER, net.node(1).role());
    }
    @Test
    @DisplayName("reportPeerDown: when the leader's process is gone, the lowest-id survivor campaigns on its next tick and wins before the others time out")
    void survivorsElectANewLeaderWithinTicksWhenTheLeaderIsReportedDown() {
        Network net = new Network(3);
        net.electLeader(3);
        long term = net.node(3).currentTerm();
        net.crash(3);

        net.node(1).reportPeerDown(3);
        net.node(2).reportPeerDown(3);
        assertEquals(NONE, net.node(1).leaderId(), "a follower that lost its leader no longer claims one");

        net.tickAll(); // rank 0 (node 1) campaigns on its first tick; rank 1 (node 2) would wait 3 ticks
        net.drain();

        assertEquals(Role.LEADER, net.node(1).role(), "elected one tick after the report, not a whole timeout later");
        assertEquals(term + 1, net.node(1).currentTerm(), "one election, no split vote");
        assertEquals(1, net.node(2).leaderId());
    }

    @Test
    @DisplayName("reportPeerDown: the second survivor takes over when the first cannot win (its log is behind)")
    void secondSurvivorWinsWhenTheFirstIsBehind() {
        Network net = new Network(3);
        net.electLeader(3);
        net.cut(3, 1); // node 1 misses the next entry
        net.propose(3, "x");
        net.drain();
        net.recover();
        net.crash(3);

        net.node(1).reportPeerDown(3);
        net.node(2).reportPeerDown(3);
        net.tickUntil(() -> net.leader() != NONE, 5);

        assertEquals(2, net.leader(), "§5.4.1: only node 2 holds every committed entry");
    }

    @Test
    @DisplayName("reportPeerDown is only a hint: a false report by a follower that is cut off from the leader disrupts nothing (§9.6, §4.2.3)")
    void falseReportByOneFollowerDoesNotDisrupt() {
        Network net = new Network(3);
        net.electLeader(1);
        long term = net.node(1).currentTerm();
        net.tickAll(); // node 3 hears the leader's heartbeat: it is in lease
        net.drain();

        net.node(2).reportPeerDown(1); // wrong: node 1 is alive
        net.tick(2);
        net.drain();

        assertEquals(1, net.leader());
        assertEquals(term, net.node(1).currentTerm(), "node 3 refused the pre-vote, so no term was raised");
        assertEquals(term, net.node(2).currentTerm());
    }

    @Test
    @DisplayName("D20 (issue 32): after a false report, hearing from the leader restores the full election timeout; without PreVote the follower does not depose it later")
    void aFalseReportIsForgottenWhenTheLeaderSpeaks() {
        // Found by the simulator's quiet check (seeds 3/11282, 4/3410, 4/17775): the report cut the follower's
        // election timeout to one tick, and hearing from the leader again kept it cut; with heartbeats every
        // three ticks the follower then timed out between two of them, forever, and with PreVote off its
        // RequestVotes' higher term eventually deposed a healthy leader.
        Network net = new Network(3, o -> o.preVote(false).heartbeatTicks(3));
        net.electLeader(1);
        long term = net.node(1).currentTerm();
        net.tickAll();
        net.drain();
        net.node(2).reportPeerDown(1); // wrong: node 1 is alive ...
        for (int i = 0; i < 3; i++) {
            net.tick(1); // ... and its next heartbeat reaches node 2 before node 2's cut timeout runs out
            net.drain();
        }
        assertEquals(1, net.node(2).leaderId());
        for (int i = 0; i < 200; i++) {
            net.tickAll();
            net.drain();
        }
        assertEquals(1, net.leader());
        assertEquals(term, net.node(1).currentTerm(), "the healthy leader was deposed");
    }

    @Test
    @DisplayName("reportPeerDown of a peer that is not the leader changes nothing")
    void reportOfANonLeaderIsIgnored() {
        Network net = new Network(3);
        net.electLeader(1);

        net.node(2).reportPeerDown(3);
        net.node(1).reportPeerDown(2);

        assertEquals(1, net.node(2).leaderId());
        assertEquals(Role.LEADER, net.node(1).role());
    }
}
