package io.rota.raft.core;

import io.rota.raft.core.ConfChangeResult.Reason;
import io.rota.raft.core.Message.AppendEntriesResponse;
import io.rota.raft.core.Message.RequestVote;
import io.rota.raft.core.Message.RequestVoteResponse;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

import static io.rota.raft.core.Network.bytes;
import static io.rota.raft.core.RaftNode.NONE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Membership changes, thesis chapter 4: single-server changes through the log (§4.1), learners that catch
 * up before they vote (§4.2.1), removing the leader (§4.2.2) and removed servers that must not disrupt
 * (§4.2.3). Nodes 1..n start as voters; the spares after them run from the start outside the
 * configuration, as a newly started server would.
 */
class MembershipTest {

    private static ConfChangeResult.Accepted accepted(ConfChangeResult result) {
        return assertInstanceOf(ConfChangeResult.Accepted.class, result);
    }

    private static void refused(Reason reason, ConfChangeResult result) {
        assertEquals(reason, assertInstanceOf(ConfChangeResult.Refused.class, result).reason());
    }

    /** Voters 1..voters and the spares after them; node 1 leads and has made {@code change}, now applied everywhere. */
    private static Network changed(int voters, int spares, ConfChange change) {
        Network net = new Network(voters, spares, o -> o);
        net.electLeader(1);
        accepted(net.node(1).proposeConfChange(change));
        net.drain();
        return net;
    }

    private static Configuration config(Set<Long> voters, Set<Long> learners) {
        return new Configuration(voters, learners);
    }

    private static boolean sentRequestVote(Network net, long from) {
        return requestVotesFrom(net, from) > 0;
    }

    private static long requestVotesFrom(Network net, long from) {
        return net.sent().stream().filter(m -> m instanceof RequestVote && m.from() == from).count();
    }

    @Test
    @DisplayName("§4.1: a configuration survives its own encoding, learners included")
    void configurationEncodingRoundTrips() {
        Configuration c = config(Set.of(1L, 2L, Long.MAX_VALUE), Set.of(7L, 1L << 40));
        assertEquals(c, Configuration.decode(c.encode()));
        assertEquals(Configuration.of(3L), Configuration.decode(Configuration.of(3L).encode()));
        byte[] encoded = c.encode();
        assertThrows(IllegalArgumentException.class, () -> Configuration.decode(Arrays.copyOf(encoded, encoded.length - 1)));
        assertThrows(IllegalArgumentException.class, () -> config(Set.of(1L), Set.of(1L)));
    }

    @Test
    @DisplayName("§4.1: a change that does not fit the configuration is refused with a reason; only the leader changes it")
    void changesThatDoNotFitAreRefused() {
        Network net = new Network(1, 1, o -> o);
        net.electLeader(1);
        RaftNode leader = net.node(1);

        refused(Reason.LAST_VOTER, leader.proposeConfChange(ConfChange.remove(1)));
        refused(Reason.NOT_A_MEMBER, leader.proposeConfChange(ConfChange.remove(2)));
        refused(Reason.NOT_A_LEARNER, leader.proposeConfChange(ConfChange.promote(2)));
        refused(Reason.ALREADY_MEMBER, leader.proposeConfChange(ConfChange.addVoter(1)));
        refused(Reason.NOT_LEADER, net.node(2).proposeConfChange(ConfChange.addLearner(2)));
        assertEquals(Configuration.of(1L), leader.configuration());
    }

    @Test
    @DisplayName("§4.2.1: a learner receives the log but never counts toward a commit and never campaigns")
    void learnerReceivesTheLogButHasNoVote() {
        Network net = new Network(3, 1, o -> o);
        net.electLeader(1);
        net.propose(1, "a");
        net.drain();

        accepted(net.node(1).proposeConfChange(ConfChange.addLearner(4)));
        net.drain();
        net.propose(1, "b");
        net.drain();
        assertEquals(config(Set.of(1L, 2L, 3L), Set.of(4L)), net.node(4).configuration());
        assertEquals(List.of("a", "b"), net.stateMachine(4), "the learner applies the log like any member");

        // Leader 1 and learner 4 hold a new entry, but 1 of the 3 voters is no majority.
        net.isolate(2);
        net.isolate(3);
        long commit = net.node(1).commitIndex();
        ProposalResult.Accepted c = assertInstanceOf(ProposalResult.Accepted.class, net.propose(1, "c"));
        net.drain();
        assertEquals(c.lastIndex(), net.node(4).lastIndex());
        assertEquals(commit, net.node(1).commitIndex(), "a learner's acknowledgement does not count");

        // Alone for twenty election timeouts, the learner never stands.
        net.recover();
        net.isolate(4);
        long term = net.node(4).currentTerm();
        for (int i = 0; i < 200; i++) {
            net.tick(4);
            net.drain();
        }
        assertEquals(Role.FOLLOWER, net.node(4).role());
        assertEquals(term, net.node(4).currentTerm());
        assertFalse(sentRequestVote(net, 4));
    }

    @Test
    @DisplayName("§4.2.1: with two voters and a learner, the leader and the learner are no majority")
    void learnerIsNotAThirdOfAQuorum() {
        Network net = changed(2, 1, ConfChange.addLearner(3));
        net.isolate(2);

        long commit = net.node(1).commitIndex();
        ProposalResult.Accepted p = assertInstanceOf(ProposalResult.Accepted.class, net.propose(1, "p"));
        net.drain();
        assertEquals(p.lastIndex(), net.node(3).lastIndex());
        assertEquals(commit, net.node(1).commitIndex(), "two of three members, but one of two voters");
    }

    @Test
    @DisplayName("§4.2.1: a candidate counts only voters: a vote granted by a learner does not elect it")
    void aLearnersVoteIsNotCounted() {
        Network net = new Network(3, 1, o -> o.preVote(false).checkQuorum(false));
        net.electLeader(1);
        accepted(net.node(1).proposeConfChange(ConfChange.addLearner(4)));
        net.drain();
        net.crash(1);
        net.isolate(3);

        RaftNode candidate = net.node(2);
        while (candidate.role() != Role.CANDIDATE) {
            candidate.tick();
        }
        net.collect(2); // its RequestVotes go to voters 1 and 3 only, and nowhere here
        candidate.step(new RequestVoteResponse(candidate.currentTerm(), 4, 2, true, false));

        assertEquals(Role.CANDIDATE, candidate.role(), "its own vote and a learner's are not 2 of 3 voters");
    }

    @Test
    @DisplayName("§4.2.1: promoting a learner is refused while it is behind, and accepted once it has caught up")
    void promotionWaitsForTheLearnerToCatchUp() {
        Network net = new Network(3, 1, o -> o);
        net.electLeader(1);
        RaftNode leader = net.node(1);
        net.isolate(4);
        accepted(leader.proposeConfChange(ConfChange.addLearner(4)));
        net.drain();
        refused(Reason.LEARNER_NOT_RESPONDING, leader.proposeConfChange(ConfChange.promote(4))); // never heard from

        net.recover();
        net.tickUntil(() -> net.node(4).lastIndex() == leader.lastIndex(), 20);
        net.isolate(4);
        for (int batch = 0; batch < 11; batch++) {
            List<byte[]> commands = new ArrayList<>();
            for (int k = 0; k < 100; k++) {
                commands.add(bytes("w" + batch + "." + k));
            }
            leader.propose(commands);
            net.drain();
        }
        assertTrue(leader.lastIndex() - net.node(4).lastIndex() > ConfChange.PROMOTION_MAX_LAG_ENTRIES);
        refused(Reason.LEARNER_BEHIND, leader.proposeConfChange(ConfChange.promote(4)));

        net.recover();
        net.tickUntil(() -> net.node(4).lastIndex() == leader.lastIndex(), 20);
        ConfChangeResult.Accepted a = accepted(leader.proposeConfChange(ConfChange.promote(4)));
        net.drain();
        for (long id = 1; id <= 4; id++) {
            assertEquals(Configuration.of(1L, 2L, 3L, 4L), net.node(id).configuration(), "node " + id);
            assertTrue(net.node(id).commitIndex() >= a.index(), "node " + id);
        }
    }

    /**
     * Isolate {@code silent} and let the leader's clock run past an election timeout, answered by everyone
     * else: the leader then has not heard from {@code silent} within an election timeout.
     */
    private static void fallSilent(Network net, long leader, long... silent) {
        for (long s : silent) {
            net.isolate(s);
        }
        for (int i = 0; i <= net.options(leader).electionTicks(); i++) {
            net.tick(leader);
            net.drain();
        }
    }

    private static ConfChangeResult.Refused refusedFor(Reason reason, ConfChangeResult result) {
        ConfChangeResult.Refused r = assertInstanceOf(ConfChangeResult.Refused.class, result);
        assertEquals(reason, r.reason());
        return r;
    }

    @Test
    @DisplayName("§4.1, strict reconfiguration (MF2): removing the one follower that answers, while the other is silent, is refused; force does it; removing the silent one is fine")
    void removalThatLosesQuorumIsRefusedUnlessForced() {
        // CheckQuorum off: who answered must be known without it.
        Network net = new Network(3, o -> o.checkQuorum(false));
        net.electLeader(1);
        fallSilent(net, 1, 3);

        ConfChangeResult.Refused r = refusedFor(Reason.QUORUM_AT_RISK, net.node(1).proposeConfChange(ConfChange.remove(2)));
        assertEquals(Set.of(1L, 2L), r.responding(), "the refusal names who answers");
        assertEquals(Configuration.of(1L, 2L, 3L), net.node(1).configuration(), "nothing was appended");

        // {1,3} would need both; 3 is silent, so the entry could never commit. Forced, it is appended anyway.
        ConfChangeResult.Accepted forced = accepted(net.node(1).proposeConfChange(ConfChange.remove(2), true));
        net.drain();
        assertTrue(net.node(1).commitIndex() < forced.index(), "as promised: it cannot commit while 3 is silent");
        net.recover();
        net.tickUntil(() -> net.node(1).commitIndex() >= forced.index(), 20);
    }

    @Test
    @DisplayName("§4.1, strict reconfiguration (MF2): removing a silent voter leaves a quorum of voters that answer, so it is allowed")
    void removingTheSilentVoterIsAllowed() {
        Network net = new Network(3, o -> o);
        net.electLeader(1);
        fallSilent(net, 1, 3);
        ConfChangeResult.Accepted a = accepted(net.node(1).proposeConfChange(ConfChange.remove(3)));
        net.drain();
        assertTrue(net.node(1).commitIndex() >= a.index(), "{1,2}: both answer");
    }

    @Test
    @DisplayName("§4.1, strict reconfiguration (MF2): a voter added to three needs three of four; with one of three silent it is refused, a learner is not")
    void addingAVoterWithOneOfThreeSilentIsRefused() {
        Network net = new Network(3, 2, o -> o);
        net.electLeader(1);
        fallSilent(net, 1, 3);
        // The newcomer has not answered yet: 1 and 2 are two of the three votes {1,2,3,4} needs.
        refused(Reason.QUORUM_AT_RISK, net.node(1).proposeConfChange(ConfChange.addVoter(4)));
        accepted(net.node(1).proposeConfChange(ConfChange.addLearner(5))); // a learner does not change the quorum
    }

    @Test
    @DisplayName("§4.2.1, strict reconfiguration (MF5): a learner that stopped answering is not promoted, forced or not")
    void silentLearnerIsNotPromoted() {
        Network net = changed(3, 1, ConfChange.addLearner(4));
        assertEquals(net.node(1).lastIndex(), net.node(4).lastIndex(), "caught up");
        fallSilent(net, 1, 4);

        ConfChangeResult.Refused r = refusedFor(Reason.LEARNER_NOT_RESPONDING,
                net.node(1).proposeConfChange(ConfChange.promote(4)));
        assertEquals(Set.of(1L, 2L, 3L), r.responding());
        refused(Reason.LEARNER_NOT_RESPONDING, net.node(1).proposeConfChange(ConfChange.promote(4), true));

        net.recover();
        net.propose(1, "heard"); // the learner answers the AppendEntries that carries it
        net.drain();
        accepted(net.node(1).proposeConfChange(ConfChange.promote(4)));
    }

    @Test
    @DisplayName("§4.1: a voter added to three makes four, and a commit then needs three of them")
    void addingAVoterToThreeNeedsThreeOfFour() {
        Network net = changed(3, 1, ConfChange.addVoter(4));
        for (long id = 1; id <= 4; id++) {
            assertEquals(Configuration.of(1L, 2L, 3L, 4L), net.node(id).configuration(), "node " + id);
        }

        net.isolate(3);
        net.isolate(4);
        long commit = net.node(1).commitIndex();
        ProposalResult.Accepted x = assertInstanceOf(ProposalResult.Accepted.class, net.propose(1, "x"));
        net.drain();
        assertEquals(commit, net.node(1).commitIndex(), "nodes 1 and 2 are two of four voters: no majority");

        net.recover();
        net.isolate(4);
        net.tickUntil(() -> net.node(1).commitIndex() >= x.lastIndex(), 5); // 1, 2 and 3: three of four
    }

    @Test
    @DisplayName("§4.1: a removed follower learns of its removal and ignores its election timer; two voters commit")
    void removingAFollower() {
        Network net = changed(3, 0, ConfChange.remove(3));

        assertEquals(Configuration.of(1L, 2L), net.node(1).configuration());
        assertEquals(Configuration.of(1L, 2L), net.node(2).configuration());
        assertEquals(Configuration.of(1L, 2L), net.node(3).configuration(),
                "the leader kept replicating to node 3 until the change committed, so it learnt it is out");

        net.isolate(3);
        long term = net.node(3).currentTerm();
        for (int i = 0; i < 200; i++) {
            net.tickAll();
            net.drain();
        }
        assertEquals(term, net.node(3).currentTerm());
        assertFalse(sentRequestVote(net, 3), "a server outside the configuration never campaigns");
        assertFalse(net.node(1).progress().containsKey(3L), "the leader stopped replicating to it");

        ProposalResult.Accepted p = assertInstanceOf(ProposalResult.Accepted.class, net.propose(1, "two of two"));
        net.drain();
        assertTrue(net.node(1).commitIndex() >= p.lastIndex());
    }

    @Test
    @DisplayName("§4.2.2: a leader that removes itself does not count itself, steps down once the change commits, and hands over")
    void removingTheLeader() {
        Network net = new Network(3);
        net.electLeader(1);
        long term = net.node(1).currentTerm();

        net.isolate(3);
        ConfChangeResult.Accepted a = accepted(net.node(1).proposeConfChange(ConfChange.remove(1)));
        net.drain();
        assertTrue(net.node(2).lastIndex() >= a.index());
        assertEquals(Role.LEADER, net.node(1).role(), "it manages the cluster until the change commits");
        assertTrue(net.node(1).commitIndex() < a.index(),
                "nodes 1 and 2 hold the entry, but the voters are now 2 and 3: the leader does not count itself");
        refused(Reason.NOT_LEADER, net.node(1).proposeConfChange(ConfChange.addLearner(3)));

        net.recover();
        net.tickUntil(() -> net.leader() != NONE && net.leader() != 1, 5);
        assertEquals(Role.FOLLOWER, net.node(1).role());
        assertTrue(net.node(1).commitIndex() >= a.index(), "it stepped down after the commit, which it announced");
        assertEquals(term + 1, net.node(net.leader()).currentTerm(),
                "handed over with TimeoutNow (§3.10): one election, without waiting for a timeout");
        assertTrue(net.events(1).stream().anyMatch(e -> e instanceof RaftEvent.SteppedDown d
                        && d.cause() == RaftEvent.SteppedDown.Cause.REMOVED_FROM_CONFIGURATION && d.term() == term),
                "the step-down is reported for the operator's log: " + net.events(1));

        long newLeader = net.leader();
        long campaigns = requestVotesFrom(net, 1);
        ProposalResult.Accepted p = assertInstanceOf(ProposalResult.Accepted.class, net.propose(newLeader, "y"));
        net.drain();
        assertTrue(net.node(newLeader).commitIndex() >= p.lastIndex());
        for (int i = 0; i < 100; i++) {
            net.tickAll();
            net.drain();
        }
        assertEquals(newLeader, net.leader());
        assertEquals(campaigns, requestVotesFrom(net, 1), "the removed leader never campaigns");
    }

    @Test
    @DisplayName("§4.2.2: a leader that removed itself and crashed before the change committed still finishes it when it restarts")
    void removedLeaderThatCrashedFinishesTheChange() {
        Network net = new Network(2);
        net.electLeader(1);
        net.isolate(2);
        ConfChangeResult.Accepted a = accepted(net.node(1).proposeConfChange(ConfChange.remove(1)));
        net.drain();
        net.crash(1);
        net.restart(1);
        net.recover();
        assertEquals(Configuration.of(2L), net.node(1).configuration());
        assertEquals(Configuration.of(1L, 2L), net.node(2).configuration(), "node 2 never received the change");

        // Node 2 needs node 1's vote, which its longer log refuses; so node 1 stands, counting node 2 alone.
        net.tickUntil(() -> net.leader() == 2, 100);
        assertTrue(net.node(2).commitIndex() >= a.index());
        assertEquals(Configuration.of(2L), net.node(2).configuration());
        assertEquals(Role.FOLLOWER, net.node(1).role());
    }

    @Test
    @DisplayName("§4.1: while a change is uncommitted (though in force on the leader already) a second one is refused")
    void oneChangeAtATime() {
        Network net = new Network(3, 2, o -> o);
        net.electLeader(1);
        net.isolate(2);
        net.isolate(3);
        ConfChangeResult.Accepted a = accepted(net.node(1).proposeConfChange(ConfChange.addLearner(4)));
        net.drain();
        assertEquals(config(Set.of(1L, 2L, 3L), Set.of(4L)), net.node(1).configuration(),
                "in force on the leader from the moment it is appended");
        refused(Reason.CHANGE_IN_PROGRESS, net.node(1).proposeConfChange(ConfChange.addLearner(5)));

        net.recover();
        net.tickUntil(() -> net.node(1).commitIndex() >= a.index(), 5);
        accepted(net.node(1).proposeConfChange(ConfChange.addLearner(5)));
    }

    @Test
    @DisplayName("§4.1 with Ongaro's 2015 correction: a new leader changes nothing until an entry of its own term is committed")
    void newLeaderWaitsForAnEntryOfItsTerm() {
        Network net = new Network(3, 1, o -> o);
        net.dropType(AppendEntriesResponse.class);
        net.electLeader(1);
        assertTrue(net.node(1).commitIndex() < net.node(1).lastIndex(), "its no-op is not committed");
        refused(Reason.NOT_YET_COMMITTED_IN_TERM, net.node(1).proposeConfChange(ConfChange.addLearner(4)));

        net.recover();
        net.tickUntil(() -> net.node(1).commitIndex() == net.node(1).lastIndex(), 5);
        accepted(net.node(1).proposeConfChange(ConfChange.addLearner(4)));
    }

    /**
     * The schedule of Ongaro's 2015 raft-dev report ("one add, one remove"): leader 1 of {1,2,3,4} adds 5,
     * but only 5 gets the entry; leader 2 of term 2, which never saw it, removes 1 at once. Its change, in
     * force as soon as appended, lets {2,3} — a majority of {2,3,4} — commit its entries; yet 1, with the
     * configuration {1,2,3,4,5}, can still be elected by 1, 4 and 5, whose logs lack them. The own-term rule
     * refuses the second change until the no-op of term 2 is committed by a majority of {1,2,3,4}, which
     * then stops 1. This test fails if the rule is taken out (see docs/core.md, the mutation table).
     */
    @Test
    @DisplayName("§4.1, Ongaro's 2015 bug: no change before the new leader commits in its term, so a stale configuration never elects a leader that lacks a committed entry")
    void ongarosSingleServerChangeBugCannotHappen() {
        Network net = new Network(4, 1, o -> o.checkQuorum(false));
        net.electLeader(1);
        net.drop(m -> m.from() == 1 && m.to() != 5);
        accepted(net.node(1).proposeConfChange(ConfChange.addVoter(5))); // reaches node 5 only
        net.drain();

        net.recover();
        net.isolate(1);
        net.drop(m -> m.from() == 2 && m.to() == 4 && !(m instanceof RequestVote)); // 4 votes, gets nothing else
        net.outwaitLeader(3, 4); // they stop hearing from the cut-off leader 1 (§9.6: until then no pre-vote)
        net.electLeader(2);
        net.node(2).proposeConfChange(ConfChange.remove(1)); // refused: the no-op of term 2 is not committed
        net.drain();
        long committed = net.node(2).commitIndex();
        List<Long> committedTerms = new ArrayList<>();
        for (long i = 1; i <= committed; i++) {
            committedTerms.add(net.node(2).term(i));
        }

        net.crash(1); // it comes back as a follower holding {1,2,3,4,5}
        net.restart(1);
        net.recover();
        net.isolate(2);
        net.isolate(3);
        net.outwaitLeader(4, 5);
        net.electLeader(1); // with 4 and 5: a majority of {1,2,3,4,5}
        for (long i = 1; i <= committed; i++) {
            assertEquals(committedTerms.get((int) i - 1), net.node(1).term(i),
                    "Leader Completeness: leader 1 of term " + net.node(1).currentTerm() + " lacks entry " + i
                            + ", committed by leader 2");
        }
    }

    @Test
    @DisplayName("§4.1: a configuration entry truncated by a new leader takes its configuration with it")
    void truncatedConfigurationEntryRevertsTheConfiguration() {
        Network net = new Network(5, 1, o -> o.checkQuorum(false));
        net.electLeader(1);
        net.propose(1, "a");
        net.drain();

        net.drop(m -> m.from() == 1 && m.to() != 2); // the change reaches node 2 only
        ConfChangeResult.Accepted a = accepted(net.node(1).proposeConfChange(ConfChange.addVoter(6)));
        net.drain();
        assertTrue(net.node(2).configuration().isVoter(6), "in force on node 2 as soon as appended, uncommitted");
        assertTrue(net.node(2).commitIndex() < a.index());

        net.crash(1);
        net.recover();
        net.isolate(2);
        net.outwaitLeader(4, 5); // they stop hearing from the crashed leader 1 (§9.6: until then no pre-vote)
        net.electLeader(3); // with 4 and 5: three of the five voters it knows
        net.recover();
        net.tickUntil(() -> !net.node(2).configuration().isVoter(6), 5);

        assertEquals(Configuration.of(1L, 2L, 3L, 4L, 5L), net.node(2).configuration());
        assertEquals(net.node(3).currentTerm(), net.node(2).term(a.index()), "the new leader's entry replaced it");
    }

    @Test
    @DisplayName("§7 and §4: a snapshot holds the configuration at its index, learners included; newcomers and restarts recover it")
    void snapshotsCarryTheConfiguration() {
        Network net = new Network(3, 2, o -> o.snapshotCatchUpEntries(0));
        net.electLeader(1);
        net.propose(1, "a");
        net.drain();
        long beforeChange = net.node(1).lastIndex();
        accepted(net.node(1).proposeConfChange(ConfChange.addLearner(4)));
        net.drain();
        net.propose(1, "b");
        net.drain();

        net.compact(1, beforeChange);
        assertEquals(Configuration.of(1L, 2L, 3L), net.node(1).latestSnapshot().metadata().configuration(),
                "the configuration at the snapshot's index, not the latest");
        net.compact(1, net.node(1).appliedIndex());
        Configuration withLearner = config(Set.of(1L, 2L, 3L), Set.of(4L));
        assertEquals(withLearner, net.node(1).latestSnapshot().metadata().configuration());

        // Node 5 is added after the compaction: it can only catch up by the snapshot (§7).
        accepted(net.node(1).proposeConfChange(ConfChange.addLearner(5)));
        net.drain();
        Configuration both = config(Set.of(1L, 2L, 3L), Set.of(4L, 5L));
        assertNotNull(net.node(5).latestSnapshot());
        assertEquals(withLearner, net.node(5).latestSnapshot().metadata().configuration());
        assertEquals(both, net.node(5).configuration());
        assertEquals(List.of("a", "b"), net.stateMachine(5));

        // Restarts: node 1 from its snapshot and the configuration entry after it; node 4 from its log alone.
        net.crash(1);
        net.restart(1);
        assertEquals(both, net.node(1).configuration());
        net.crash(4);
        net.restart(4);
        assertEquals(both, net.node(4).configuration());
    }

    @Test
    @DisplayName("§4.1: a new server takes entries from a leader its bootstrap configuration does not name")
    void newServerHearsFromALeaderItDoesNotKnow() {
        Network net = changed(3, 2, ConfChange.addVoter(4));
        assertTrue(net.node(1).transferLeadership(4));
        net.drain();
        assertEquals(4, net.leader());
        net.tickUntil(() -> net.node(4).commitIndex() == net.node(4).lastIndex(), 5);

        accepted(net.node(4).proposeConfChange(ConfChange.addLearner(5)));
        net.drain();
        assertEquals(4, net.node(5).leaderId());
        assertEquals(net.node(4).lastIndex(), net.node(5).lastIndex());
    }

    @Test
    @DisplayName("§3.10: leadership cannot be handed to a learner")
    void leadershipIsNotTransferredToALearner() {
        Network net = changed(3, 1, ConfChange.addLearner(4));
        assertFalse(net.node(1).transferLeadership(4));
        assertEquals(NONE, net.node(1).leadTransferee());
    }

    @Test
    @DisplayName("§4.2.3: a removed server that never learnt of its removal cannot raise the cluster's term (PreVote and CheckQuorum)")
    void removedServerCannotDisrupt() {
        assertUndisturbed(new Network(3));
    }

    @Test
    @DisplayName("§4.2.3: PreVote alone also stops it: its log lacks the entry that removed it, so no one grants its pre-vote")
    void removedServerCannotDisruptWithPreVoteAlone() {
        assertUndisturbed(new Network(3, o -> o.checkQuorum(false)));
    }

    @Test
    @DisplayName("§4.2.3: without PreVote and CheckQuorum, the same removed server does raise the term — why they are needed")
    void withoutPreVoteAndCheckQuorumARemovedServerDisrupts() {
        Network net = new Network(3, o -> o.preVote(false).checkQuorum(false));
        long term = removeNode3BehindItsBackAndRunOn(net);
        assertTrue(net.node(1).currentTerm() > term, "node 3's RequestVotes made the cluster adopt its terms");
    }

    @Test
    @DisplayName("§4.2.3, §9.6 (issue 32): with PreVote alone, a removed server that holds its removal but never learnt it committed cannot win on an idle cluster")
    void removedServerThatMissedTheCommitCannotDisruptWithPreVoteAlone() {
        // The M5 escape lets a server removed by a change it does not know to be committed stand. Granting
        // its pre-vote while we hear from a leader (what etcd does without CheckQuorum) let it win once,
        // raising everyone's term and deposing a healthy leader. §9.6: a pre-vote is granted only by a
        // server that has not heard from a leader for an election timeout.
        Network net = new Network(3, o -> o.checkQuorum(false));
        net.electLeader(1);
        ConfChangeResult.Accepted a = accepted(net.node(1).proposeConfChange(ConfChange.remove(3)));
        for (Message m : net.collect(1)) {
            net.deliver(m); // node 3 appends the entry that removes it ...
        }
        net.drop(m -> m.to() == 3); // ... and hears nothing after: not the commit, not the leader's heartbeats
        net.drain();
        net.tickAll();
        net.drain();
        assertTrue(net.node(1).commitIndex() >= a.index(), "committed by 1 and 2");
        assertTrue(net.node(3).lastIndex() >= a.index(), "node 3 holds its removal");
        assertTrue(net.node(3).commitIndex() < a.index(), "but never learnt that it committed");
        assertLeaderOneUndisturbed(net, healAndRunOn(net));
    }

    private static void assertUndisturbed(Network net) {
        assertLeaderOneUndisturbed(net, removeNode3BehindItsBackAndRunOn(net));
    }

    private static void assertLeaderOneUndisturbed(Network net, long term) {
        assertEquals(1, net.leader());
        assertEquals(term, net.node(1).currentTerm(), "node 1 was never deposed");
        assertEquals(term, net.node(2).currentTerm());
    }

    /**
     * Node 1 leads and removes node 3 while node 3 is cut off, so node 3 never learns it; then the network
     * heals and 200 ticks pass, in which node 3 keeps trying to be elected. Returns the term before.
     */
    private static long removeNode3BehindItsBackAndRunOn(Network net) {
        net.electLeader(1);
        net.isolate(3);
        ConfChangeResult.Accepted a = accepted(net.node(1).proposeConfChange(ConfChange.remove(3)));
        net.drain();
        assertTrue(net.node(1).commitIndex() >= a.index(), "two of the two remaining voters");
        net.tickAll();
        net.drain();
        assertTrue(net.node(3).configuration().isVoter(3), "node 3 was cut off: it never learnt it was removed");
        return healAndRunOn(net);
    }

    /** The network heals and 200 ticks pass, in which node 3 keeps trying to be elected. Returns the term before. */
    private static long healAndRunOn(Network net) {
        long term = net.node(1).currentTerm();
        net.recover();
        for (int i = 0; i < 200; i++) {
            net.tickAll();
            net.drain();
        }
        assertTrue(sentRequestVote(net, 3), "node 3 did try to get elected");
        return term;
    }
}
