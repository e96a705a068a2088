package io.rota.raft.core;

import io.rota.raft.core.Message.AppendEntriesResponse;
import io.rota.raft.core.Message.RequestVote;
import io.rota.raft.core.Message.RequestVoteResponse;
import io.rota.raft.core.RaftEvent.BecameFollower;
import io.rota.raft.core.RaftEvent.BecameLeader;
import io.rota.raft.core.RaftEvent.ElectionLost;
import io.rota.raft.core.RaftEvent.ElectionStarted;
import io.rota.raft.core.RaftEvent.LeaderChanged;
import io.rota.raft.core.RaftEvent.ProposalsRefused;
import io.rota.raft.core.RaftEvent.SnapshotInstalled;
import io.rota.raft.core.RaftEvent.SteppedDown;
import io.rota.raft.core.RaftEvent.TransferAborted;
import io.rota.raft.core.RaftEvent.TransferStarted;
import io.rota.raft.core.RaftEvent.VoteDenied;
import io.rota.raft.core.RaftEvent.VoteGranted;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.List;

import static io.rota.raft.core.RaftNode.NONE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What the core reports in {@link Ready#events()} (design decision H9): one event per election, vote, role,
 * leader or term change, in the order it happened. Deterministic: the {@link Network} of the other core tests.
 */
class RaftEventTest {

    private static final ElectionStarted.Cause TIMEOUT = ElectionStarted.Cause.ELECTION_TIMEOUT;

    @Test
    @DisplayName("An election: the winner reports its pre-vote, its election and its leadership; a voter its votes, the new term and the new leader")
    void electionIsReportedByWinnerAndVoters() {
        Network net = new Network(3);

        net.electLeader(1);

        assertEquals(List.of(
                new ElectionStarted(1, true, TIMEOUT),
                new ElectionStarted(1, false, ElectionStarted.Cause.PRE_VOTE_WON),
                new BecameLeader(1, 1)), net.events(1));
        assertEquals(List.of(
                new VoteGranted(1, 1, true),
                new LeaderChanged(1, NONE, NONE), // the candidate's RequestVote brought term 1; no leader yet
                new VoteGranted(1, 1, false),
                new LeaderChanged(1, 1, NONE)), net.events(2));
        assertEquals(net.events(2), net.events(3));
    }

    @Test
    @DisplayName("§6.2 CheckQuorum: a leader cut off from the majority reports that it stepped down for a lost quorum")
    void checkQuorumStepDownIsReported() {
        Network net = new Network(3);
        net.electLeader(1);
        long term = net.node(1).currentTerm();
        net.events(1).clear();
        net.isolate(1);

        while (net.node(1).role() == Role.LEADER) {
            net.tick(1);
            net.drain();
        }

        assertEquals(List.of(new SteppedDown(term, SteppedDown.Cause.QUORUM_LOST, NONE)), net.events(1));
    }

    @Test
    @DisplayName("§5.1: a leader that sees a higher term reports it stepped down and who had the term")
    void higherTermStepDownIsReported() {
        Network net = new Network(3);
        net.electLeader(1);
        long term = net.node(1).currentTerm();
        net.events(1).clear();

        net.node(1).step(new AppendEntriesResponse(term + 1, 3, 1, false, 0, 0, 0, 0));
        net.handleReadies();

        assertEquals(List.of(new SteppedDown(term + 1, SteppedDown.Cause.HIGHER_TERM, 3)), net.events(1));
    }

    @Test
    @DisplayName("A follower told its leader's process is gone reports the lost leader, then an election caused by it")
    void leaderReportedDownIsTheElectionsCause() {
        Network net = new Network(3);
        net.electLeader(3);
        long term = net.node(3).currentTerm();
        net.crash(3);
        net.events(1).clear();

        net.node(1).reportPeerDown(3);
        net.tick(1);
        net.handleReadies();

        assertEquals(List.of(
                new LeaderChanged(term, NONE, 3),
                new ElectionStarted(term + 1, true, ElectionStarted.Cause.LEADER_DOWN)), net.events(1));
    }

    @Test
    @DisplayName("§3.10: a leadership transfer is reported by the old leader (started, completed) and the new one (election, leadership)")
    void leadershipTransferIsReported() {
        Network net = new Network(3);
        net.electLeader(1);
        long term = net.node(1).currentTerm();
        net.events(1).clear();
        net.events(2).clear();

        net.node(1).transferLeadership(2);
        net.drain();

        assertEquals(List.of(
                new TransferStarted(term, 2),
                new SteppedDown(term + 1, SteppedDown.Cause.TRANSFER_COMPLETED, 2),
                new VoteGranted(term + 1, 2, false),
                new LeaderChanged(term + 1, 2, NONE)), net.events(1));
        assertEquals(List.of(
                new ElectionStarted(term + 1, false, ElectionStarted.Cause.LEADERSHIP_TRANSFER),
                new BecameLeader(term + 1, 0)), net.events(2));
    }

    @Test
    @DisplayName("§3.10: a transfer that does not finish within an election timeout is reported as aborted")
    void abortedTransferIsReported() {
        Network net = new Network(3);
        net.electLeader(1);
        long term = net.node(1).currentTerm();
        net.cut(1, 2);
        net.events(1).clear();

        net.node(1).transferLeadership(2);
        for (int i = 0; i < net.options(1).electionTicks(); i++) {
            net.tick(1);
            net.drain();
        }

        assertEquals(List.of(new TransferStarted(term, 2), new TransferAborted(term, 2)), net.events(1));
    }

    @Test
    @DisplayName("Each refused vote names its rule: stale term (§5.1), leader lease (§4.2.3), one vote per term and a known leader (§5.2)")
    void deniedVotesNameTheirRule() {
        Network net = new Network(3);
        net.cut(1, 3); // node 3 does not vote in this election
        net.electLeader(1);
        net.recover();
        net.tick(1); // its heartbeat brings node 3 the term and the leader
        net.drain();
        long term = net.node(1).currentTerm();
        net.events(2).clear();
        net.events(3).clear();

        net.node(2).step(new RequestVote(term - 1, 3, 2, 100, term, false, false));
        net.node(2).step(new RequestVote(term + 1, 3, 2, 100, term, false, false)); // it just heard from node 1
        net.node(2).step(new RequestVote(term, 3, 2, 100, term, false, false));     // it voted for node 1
        net.node(3).step(new RequestVote(term, 2, 3, 100, term, false, false));     // it follows node 1
        net.handleReadies();

        assertEquals(List.of(
                new VoteDenied(term - 1, 3, false, VoteDenied.Reason.STALE_TERM),
                new VoteDenied(term + 1, 3, false, VoteDenied.Reason.LEADER_LEASE),
                new VoteDenied(term, 3, false, VoteDenied.Reason.ALREADY_VOTED)), net.events(2));
        assertEquals(List.of(new VoteDenied(term, 2, false, VoteDenied.Reason.LEADER_KNOWN)), net.events(3));
    }

    @Test
    @DisplayName("§5.4.1: a vote refused for the election restriction says so, after the term it brought")
    void voteRefusedForAStaleLogNamesTheElectionRestriction() {
        Network net = new Network(3, o -> o, id -> id == 2 ? Network.disk(1, 0, 1) : PersistentState.EMPTY);

        net.node(2).step(new RequestVote(2, 3, 2, 0, 0, false, false)); // node 2 holds entry 1@1; node 3 nothing
        net.collect(2);

        assertEquals(List.of(
                new LeaderChanged(2, NONE, NONE),
                new VoteDenied(2, 3, false, VoteDenied.Reason.LOG_NOT_UP_TO_DATE)), net.events(2));
    }

    @Test
    @DisplayName("§5.2: a pre-candidate refused by a majority reports the lost pre-vote and its count")
    void lostPreVoteIsReported() {
        Network net = new Network(3);
        RaftNode node = net.node(1);
        while (node.role() == Role.FOLLOWER) {
            node.tick();
        }

        // A refusal carries the voter's own term, not the proposed one.
        node.step(new RequestVoteResponse(0, 2, 1, false, true));
        node.step(new RequestVoteResponse(0, 3, 1, false, true));
        net.collect(1);

        assertEquals(List.of(new ElectionStarted(1, true, TIMEOUT), new ElectionLost(1, true, 1, 3)), net.events(1));
        assertEquals(Role.FOLLOWER, node.role());
    }

    @Test
    @DisplayName("§5.2: a candidate that hears from the leader of its term reports that it became its follower")
    void candidateYieldingToLeaderIsReported() {
        Network net = new Network(3);
        RaftNode node = net.node(1);
        while (node.role() == Role.FOLLOWER) {
            node.tick();
        }
        node.step(new RequestVoteResponse(1, 2, 1, true, true)); // a granted pre-vote echoes the proposed term

        node.step(new Message.Heartbeat(1, 3, 1, 0, 0)); // node 3 won term 1 first
        net.collect(1);

        assertEquals(List.of(
                new ElectionStarted(1, true, TIMEOUT),
                new ElectionStarted(1, false, ElectionStarted.Cause.PRE_VOTE_WON),
                new BecameFollower(1, 3, Role.CANDIDATE)), net.events(1));
    }

    @Test
    @DisplayName("A leader at its uncommitted-bytes limit reports refusing proposals once, not once per proposal")
    void refusedProposalsAreReportedOncePerEpisode() {
        Network net = new Network(3);
        net.electLeader(1);
        net.isolate(1); // nothing commits
        long limit = net.options(1).maxUncommittedBytes();
        byte[] half = new byte[(int) (limit / 2)];
        net.events(1).clear();

        assertInstanceOf(ProposalResult.Accepted.class, net.node(1).propose(half));
        assertInstanceOf(ProposalResult.Accepted.class, net.node(1).propose(new byte[1]));
        assertInstanceOf(ProposalResult.Rejected.class, net.node(1).propose(half));
        assertInstanceOf(ProposalResult.Rejected.class, net.node(1).propose(half));
        net.handleReadies();

        assertEquals(1, net.events(1).size(), net.events(1).toString());
        ProposalsRefused refused = assertInstanceOf(ProposalsRefused.class, net.events(1).get(0));
        assertEquals(limit, refused.limit());
        assertTrue(refused.uncommittedBytes() > limit / 2, refused.toString());
    }

    @Test
    @DisplayName("§7: a follower restored from the leader's snapshot reports it, with the leader and the index")
    void installedSnapshotIsReported() {
        Network net = new Network(3);
        net.electLeader(1);
        long term = net.node(1).currentTerm();
        net.events(2).clear();
        Snapshot snapshot = new Snapshot(new SnapshotMetadata(10, term, Configuration.of(1L, 2L, 3L)), new byte[0]);

        net.node(2).step(new Message.InstallSnapshot(term, 1, 2, snapshot));
        net.collect(2);

        assertEquals(List.of(new SnapshotInstalled(term, 1, 10)), net.events(2));
    }
}
