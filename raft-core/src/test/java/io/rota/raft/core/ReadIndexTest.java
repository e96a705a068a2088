package io.rota.raft.core;

import io.rota.raft.core.Message.AppendEntries;
import io.rota.raft.core.Message.Heartbeat;
import io.rota.raft.core.Message.ReadIndexRequest;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.List;

import static io.rota.raft.core.Network.ofType;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Linearizable reads with ReadIndex (§6.4 of the thesis). */
class ReadIndexTest {

    /** A 3-node cluster whose leader 1 has committed entry 2 ("x"). */
    private static Network clusterWithCommitIndex2() {
        Network net = new Network(3);
        net.electLeader(1);
        net.propose(1, "x");
        net.drain();
        assertEquals(2, net.node(1).commitIndex());
        return net;
    }

    @Test
    @DisplayName("§6.4: the leader releases a read only after a heartbeat round is acknowledged by a majority")
    void readWaitsForAMajorityHeartbeatRound() {
        Network net = clusterWithCommitIndex2();
        net.isolate(1);

        assertTrue(net.node(1).readIndex(42));
        net.drain();
        assertEquals(List.of(), net.readStates(1), "no follower confirmed the leadership yet");
        assertEquals(1, net.node(1).pendingReads());

        net.recover();
        net.cut(1, 3); // node 2 alone, with the leader, is a majority
        net.tick(1);
        net.drain();
        assertEquals(List.of(new ReadState(42, 2)), net.readStates(1));
        assertEquals(0, net.node(1).pendingReads());
    }

    @Test
    @DisplayName("§6.4 step 2: the read index is the commit index when the read arrived, not when it is released")
    void readIndexIsCommitIndexAtRequestTime() {
        Network net = clusterWithCommitIndex2();

        net.propose(1, "y");        // entry 3, not yet committed
        net.node(1).readIndex(7);   // its heartbeats leave after the AppendEntries for entry 3
        net.drain();

        assertEquals(3, net.node(1).commitIndex(), "entry 3 committed before the heartbeat round completed");
        assertEquals(List.of(new ReadState(7, 2)), net.readStates(1));
    }

    @Test
    @DisplayName("§6.4 step 1: a new leader holds reads until it has committed an entry of its term (its no-op)")
    void newLeaderHoldsReadsUntilNoOpCommits() {
        Network net = new Network(3);
        net.dropType(AppendEntries.class); // the no-op reaches no one
        net.electLeader(1);

        net.node(1).readIndex(5);
        net.tick(1); // heartbeats still get through
        net.drain();
        assertEquals(List.of(), net.readStates(1));
        assertEquals(1, net.node(1).pendingReads());

        net.recover();
        net.tick(1);
        net.drain();
        assertEquals(List.of(new ReadState(5, 1)), net.readStates(1));
    }

    @Test
    @DisplayName("§6.4 batching: reads that arrive while a round is in flight are all released by ONE more round")
    void readsDuringARoundShareTheNextRound() {
        Network net = clusterWithCommitIndex2();
        int heartbeatsBefore = ofType(net.sent(), Heartbeat.class).size();

        net.node(1).readIndex(1);
        net.handleReadies(); // round 1 is on the wire
        for (long ctx = 2; ctx <= 10; ctx++) {
            net.node(1).readIndex(ctx);
        }
        net.drain();

        assertEquals(10, net.readStates(1).size());
        assertTrue(net.readStates(1).stream().allMatch(r -> r.readIndex() == 2));
        assertEquals(4, ofType(net.sent(), Heartbeat.class).size() - heartbeatsBefore,
                "two rounds of two heartbeats");
    }

    @Test
    @DisplayName("§6.4: a follower forwards a read to the leader and gets the read index back")
    void followerReadIsForwarded() {
        Network net = clusterWithCommitIndex2();

        assertTrue(net.node(2).readIndex(5));
        net.drain();

        long term = net.node(1).currentTerm();
        assertEquals(List.of(new ReadIndexRequest(term, 2, 1, List.of(5L))), ofType(net.sent(), ReadIndexRequest.class));
        assertEquals(List.of(new ReadState(5, 2)), net.readStates(2));
        assertEquals(List.of(), net.readStates(1));
        assertFalse(new Network(3).node(2).readIndex(5), "no known leader: the caller must retry");
    }

    @Test
    @DisplayName("§6.4: a deposed leader cut off from the majority never releases a read")
    void deposedLeaderNeverReleasesARead() {
        Network net = new Network(3, o -> o.checkQuorum(false)); // so that node 1 keeps believing it leads
        net.electLeader(1);
        net.isolate(1);

        net.node(1).readIndex(9);
        net.tickUntil(() -> net.node(2).role() == Role.LEADER || net.node(3).role() == Role.LEADER, 100);
        net.propose(net.node(2).role() == Role.LEADER ? 2 : 3, "new");
        net.drain();
        assertEquals(Role.LEADER, net.node(1).role());
        assertEquals(List.of(), net.readStates(1));

        net.recover();
        for (int i = 0; i < 5; i++) {
            net.tickAll();
            net.drain();
        }
        assertEquals(Role.FOLLOWER, net.node(1).role());
        assertEquals(List.of(), net.readStates(1));
        assertEquals(0, net.node(1).pendingReads());
    }
}
