package io.rota.raft.core;

import io.rota.raft.core.Message.TimeoutNow;
import io.rota.raft.core.ProposalResult.Accepted;
import io.rota.raft.core.ProposalResult.Reason;
import io.rota.raft.core.ProposalResult.Rejected;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.List;

import static io.rota.raft.core.Network.ofType;
import static io.rota.raft.core.RaftNode.NONE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Leadership transfer (§3.10 of the thesis). */
class LeadershipTransferTest {

    @Test
    @DisplayName("§3.10: transfer to an up-to-date follower sends TimeoutNow; it becomes leader in the next term")
    void transferToUpToDateFollower() {
        Network net = new Network(3);
        net.electLeader(1);
        long term = net.node(1).currentTerm();

        assertTrue(net.node(1).transferLeadership(2));
        net.drain();

        assertEquals(List.of(new TimeoutNow(term, 1, 2)), ofType(net.sent(), TimeoutNow.class));
        assertEquals(2, net.leader());
        assertEquals(term + 1, net.node(2).currentTerm());
        assertEquals(Role.FOLLOWER, net.node(1).role());
        assertEquals(2, net.node(1).leaderId());
    }

    @Test
    @DisplayName("§3.10: transfer to a lagging follower first brings its log up to date, then sends TimeoutNow")
    void transferToLaggingFollowerCatchesItUpFirst() {
        Network net = new Network(3);
        net.electLeader(1);
        net.cut(1, 3);
        for (int i = 0; i < 5; i++) {
            net.propose(1, "c" + i);
        }
        net.drain();
        net.recover();
        assertEquals(1, net.node(3).lastIndex(), "node 3 missed entries 2..6");

        net.node(1).transferLeadership(3);
        net.handleReadies();
        assertEquals(List.of(), ofType(net.outbox(), TimeoutNow.class), "not before node 3 has caught up");
        net.drain();

        assertEquals(3, net.leader(), "node 3 could only win with an up-to-date log");
        assertEquals(List.of("c0", "c1", "c2", "c3", "c4"), net.stateMachine(3));
    }

    @Test
    @DisplayName("§3.10: the leader rejects proposals with TRANSFERRING_LEADERSHIP while a transfer is in progress")
    void proposalsRejectedDuringTransfer() {
        Network net = new Network(3);
        net.electLeader(1);

        net.node(1).transferLeadership(2);

        assertEquals(new Rejected(Reason.TRANSFERRING_LEADERSHIP, 1), net.propose(1, "x"));
    }

    @Test
    @DisplayName("§3.10: a transfer to an unreachable target is aborted after an election timeout; proposals are accepted again")
    void transferAbortedAfterElectionTimeout() {
        Network net = new Network(3);
        net.electLeader(1);
        net.cut(1, 2);
        int electionTicks = net.options(1).electionTicks();

        net.node(1).transferLeadership(2);
        for (int i = 0; i < electionTicks - 1; i++) {
            net.tick(1);
            net.drain();
        }
        assertEquals(2, net.node(1).leadTransferee(), "still within the election timeout");
        assertEquals(new Rejected(Reason.TRANSFERRING_LEADERSHIP, 1), net.propose(1, "x"));

        net.tick(1);
        net.drain();
        assertEquals(NONE, net.node(1).leadTransferee());
        assertEquals(Role.LEADER, net.node(1).role());
        assertTrue(net.propose(1, "x") instanceof Accepted);
    }
}
