package io.rota.raft.core;

import io.rota.raft.core.Message.AppendEntries;
import io.rota.raft.core.Message.AppendEntriesResponse;
import io.rota.raft.core.Message.RequestVote;
import io.rota.raft.core.Message.RequestVoteResponse;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.function.UnaryOperator;

import static io.rota.raft.core.Network.ofType;
import static io.rota.raft.core.RaftNode.NONE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Leader election: §5.1 (terms), §5.2 (elections), §5.4.1 (election restriction). */
class ElectionTest {

    /** Plain Raft as in the paper: no PreVote, no CheckQuorum. */
    static final UnaryOperator<RaftOptions.Builder> PLAIN = o -> o.preVote(false).checkQuorum(false);

    private static RequestVote vote(long term, long from, long to, long lastIndex, long lastTerm) {
        return new RequestVote(term, from, to, lastIndex, lastTerm, false, false);
    }

    private static RequestVoteResponse granted(long term, long from, long to) {
        return new RequestVoteResponse(term, from, to, true, false);
    }

    /** Ticks node 1 until it leaves the follower role; returns the number of ticks. */
    private static int ticksUntilCampaign(RaftNode node) {
        int ticks = 0;
        while (node.role() == Role.FOLLOWER && ticks < 100) {
            node.tick();
            ticks++;
        }
        return ticks;
    }

    @Test
    @DisplayName("§5.1: a leader that sees a higher term in any message adopts it and becomes follower")
    void leaderStepsDownOnHigherTerm() {
        Network net = new Network(3, PLAIN);
        net.electLeader(1);
        long term = net.node(1).currentTerm();

        net.node(1).step(new AppendEntriesResponse(term + 1, 2, 1, false, 0, 0, 0, 0));

        assertEquals(Role.FOLLOWER, net.node(1).role());
        assertEquals(term + 1, net.node(1).currentTerm());
        assertEquals(NONE, net.node(1).votedFor());
    }

    @Test
    @DisplayName("§5.1: requests with a stale term are rejected and the reply carries the current term")
    void staleTermRequestsAreRejected() {
        Network net = new Network(3, PLAIN, id -> Network.disk(5, 0));
        RaftNode node = net.node(1);

        node.step(new AppendEntries(3, 2, 1, 0, 0, List.of(Entry.command(1, 3, new byte[0])), 0));
        node.step(vote(3, 3, 1, 10, 3));

        List<Message> out = net.collect(1);
        assertEquals(List.of(new AppendEntriesResponse(5, 1, 2, false, 0, 0, 0, 0),
                new RequestVoteResponse(5, 1, 3, false, false)), out);
        assertEquals(0, node.lastIndex());
        assertEquals(5, node.currentTerm());
        assertEquals(NONE, node.votedFor());
    }

    @Test
    @DisplayName("§5.2: a follower that hears nothing for its election timeout becomes candidate, increments its term, votes for itself and requests votes")
    void followerStartsElectionAfterTimeout() {
        Network net = new Network(3, PLAIN);
        RaftNode node = net.node(1);

        int ticks = ticksUntilCampaign(node);

        assertTrue(ticks >= 10 && ticks < 20, "timeout in [electionTicks, 2 electionTicks): " + ticks);
        assertEquals(Role.CANDIDATE, node.role());
        assertEquals(1, node.currentTerm());
        assertEquals(1, node.votedFor());
        assertEquals(List.of(vote(1, 1, 2, 0, 0), vote(1, 1, 3, 0, 0)), net.collect(1));
    }

    @Test
    @DisplayName("§5.2: election timeouts are randomized in [electionTicks, 2 x electionTicks)")
    void electionTimeoutsAreRandomized() {
        Set<Integer> timeouts = new HashSet<>();
        for (long seed = 0; seed < 50; seed++) {
            RaftOptions options = PLAIN.apply(RaftOptions.builder(1, Configuration.of(1L, 2L, 3L))).build();
            RaftNode node = new RaftNode(options, PersistentState.EMPTY, new SplittableRandom(seed));
            int ticks = ticksUntilCampaign(node);
            assertTrue(ticks >= 10 && ticks < 20, "seed " + seed + ": " + ticks);
            timeouts.add(ticks);
        }
        assertTrue(timeouts.size() >= 5, "timeouts should vary across seeds: " + timeouts);
    }

    @Test
    @DisplayName("§5.2: a candidate wins once it has votes from a majority (3 of 5), not before")
    void candidateWinsWithMajority() {
        Network net = new Network(5, PLAIN);
        RaftNode node = net.node(1);
        ticksUntilCampaign(node);

        node.step(granted(1, 2, 1));
        assertEquals(Role.CANDIDATE, node.role(), "2 of 5 votes are not a majority");

        node.step(granted(1, 3, 1));
        assertEquals(Role.LEADER, node.role());
        assertEquals(1, node.leaderId());
    }

    @Test
    @DisplayName("§5.2: a candidate that receives AppendEntries from a leader of its own term returns to follower")
    void candidateStepsDownOnAppendEntriesOfSameTerm() {
        Network net = new Network(3, PLAIN);
        RaftNode node = net.node(1);
        ticksUntilCampaign(node);

        node.step(new AppendEntries(1, 2, 1, 0, 0, List.of(), 0));

        assertEquals(Role.FOLLOWER, node.role());
        assertEquals(2, node.leaderId());
        assertEquals(1, node.currentTerm());
    }

    @Test
    @DisplayName("§5.2: a candidate rejected by a majority gives up and waits as follower for a new timeout")
    void candidateLosesOnMajorityRejection() {
        Network net = new Network(3, PLAIN);
        RaftNode node = net.node(1);
        ticksUntilCampaign(node);

        node.step(new RequestVoteResponse(1, 2, 1, false, false));
        node.step(new RequestVoteResponse(1, 3, 1, false, false));

        assertEquals(Role.FOLLOWER, node.role());
        assertEquals(1, node.currentTerm());

        int ticks = ticksUntilCampaign(node);
        assertTrue(ticks >= 10, "it retries only after a new election timeout: " + ticks);
        assertEquals(Role.CANDIDATE, node.role());
        assertEquals(2, node.currentTerm());
    }

    @Test
    @DisplayName("§5.2 Figure 2: only granting a vote resets the election timer; rejecting a stale candidate of a higher term does not")
    void rejectedVoteDoesNotResetTheElectionTimer() {
        // Regression test for a bug this test found (now fixed): stepHigherTerm() calls becomeFollower(m.term(), NONE) for every RequestVote of a higher term, and
        // becomeFollower -> resetVolatileRoleState() sets electionElapsed = 0 and draws a new timeout, even when the
        // vote is then denied (§5.4.1). Figure 2 resets the timer only on AppendEntries from the leader or a granted
        // vote, so a candidate with a stale log can keep the up-to-date servers from ever timing out first (plain
        // Raft, PreVote off; the 6.824 students' guide describes this exact livelock).
        Network twin = new Network(3, PLAIN, id -> Network.disk(1, 0, 1, 1));
        int timeout = ticksUntilCampaign(twin.node(1)); // same seed, undisturbed: it times out at this tick

        Network net = new Network(3, PLAIN, id -> Network.disk(1, 0, 1, 1)); // log [1@1, 2@1]
        RaftNode node = net.node(1);
        for (int i = 1; i < timeout; i++) {
            node.tick();
        }
        node.step(vote(2, 2, 1, 1, 1)); // higher term, shorter log: denied
        assertEquals(NONE, node.votedFor());

        node.tick();
        assertEquals(Role.CANDIDATE, node.role(), "the election timeout elapses on schedule");
    }

    @Test
    @DisplayName("§5.2: each server votes for at most one candidate in a given term (first-come-first-served)")
    void oneVotePerTerm() {
        Network net = new Network(3, PLAIN);
        RaftNode node = net.node(1);

        node.step(vote(1, 2, 1, 0, 0));
        node.step(vote(1, 3, 1, 0, 0));
        node.step(vote(1, 2, 1, 0, 0)); // a retry from the same candidate

        assertEquals(List.of(granted(1, 1, 2), new RequestVoteResponse(1, 1, 3, false, false), granted(1, 1, 2)),
                net.collect(1));
        assertEquals(2, node.votedFor());
    }

    @Test
    @DisplayName("§5.2: after a split vote no one wins the term; a new election in a higher term elects a leader")
    void splitVoteIsRetriedInANewTerm() {
        Network net = new Network(4, PLAIN);
        ticksUntilCampaign(net.node(1));
        ticksUntilCampaign(net.node(2));
        net.cut(1, 4); // node 3 will vote for 1, node 4 for 2: 2 votes each, a majority is 3
        net.cut(2, 3);
        net.drain();

        assertEquals(NONE, net.leader());
        assertEquals(Role.CANDIDATE, net.node(1).role());
        assertEquals(Role.CANDIDATE, net.node(2).role());

        net.recover();
        long leader = net.tickUntilLeader();
        assertTrue(net.node(leader).currentTerm() >= 2, "the winner's term: " + net.node(leader).currentTerm());
    }

    @Test
    @DisplayName("§5.4.1 election restriction: deny the vote if the candidate's last log term is older, or equal with a shorter log")
    void voteDeniedToLessUpToDateLog() {
        Network net = new Network(3, PLAIN, id -> Network.disk(2, 0, 1, 2)); // log [1@1, 2@2]
        RaftNode node = net.node(1);

        node.step(vote(3, 2, 1, 5, 1)); // longer, but last term 1 < 2
        node.step(vote(3, 3, 1, 1, 2)); // same last term, shorter

        assertEquals(List.of(new RequestVoteResponse(3, 1, 2, false, false),
                new RequestVoteResponse(3, 1, 3, false, false)), net.collect(1));
        assertEquals(NONE, node.votedFor());
    }

    @Test
    @DisplayName("§5.4.1 election restriction: grant the vote to a log at least as up-to-date (higher last term, even if shorter)")
    void voteGrantedToAtLeastAsUpToDateLog() {
        Network net = new Network(3, PLAIN, id -> Network.disk(2, 0, 1, 2));
        RaftNode node = net.node(1);

        node.step(vote(3, 2, 1, 1, 3));

        assertEquals(List.of(granted(3, 1, 2)), net.collect(1));
        assertEquals(2, node.votedFor());
    }

    @Test
    @DisplayName("Figure 2 'persist before responding': a vote leaves only in Ready.messages() of the Ready whose hardState records it")
    void voteIsSentWithTheHardStateThatRecordsIt() {
        Network net = new Network(3);
        net.node(1).step(vote(1, 2, 1, 0, 0));

        Ready ready = net.handleReady(1);

        assertEquals(new HardState(1, 2, 0), ready.hardState());
        assertEquals(List.of(granted(1, 1, 2)), ready.messages());
        assertTrue(ready.leaderMessages().isEmpty(), "a vote must not be sent before the persist step");
        assertNull(net.handleReady(1), "nothing more to do");
        assertEquals(1, ofType(net.sent(), RequestVoteResponse.class).size());
    }
}
