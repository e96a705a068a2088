package io.rota.raft.core;

import io.rota.raft.core.Message.AppendEntriesResponse;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Whole-cluster scenarios in the style of the MIT 6.824 Raft labs. The network also checks State Machine
 * Safety on every apply: no two nodes may ever apply different entries at the same index.
 */
class ClassicScenariosTest {

    private static long otherLeader(Network net, long old) {
        long leader = net.leader();
        return leader == old ? RaftNode.NONE : leader;
    }

    @Test
    @DisplayName("§5.4: an uncommitted entry of a crashed leader that reached a majority is committed by the next leader")
    void uncommittedEntryOnMajorityIsCommittedByNextLeader() {
        Network net = new Network(3);
        net.electLeader(1);
        net.cut(1, 3);
        net.drop(m -> m instanceof AppendEntriesResponse && m.from() == 2); // the leader never learns of node 2's copy
        net.propose(1, "x");
        net.drain();
        assertEquals(1, net.node(1).commitIndex(), "x is not committed when the leader crashes");

        net.crash(1);
        net.recover();
        assertEquals(2, net.tickUntilLeader(), "only node 2 has the most up-to-date log");
        net.restart(1);
        net.tickUntil(() -> net.node(1).commitIndex() == 3, 20);

        for (long id = 1; id <= 3; id++) {
            assertEquals(List.of("x"), net.stateMachine(id), "node " + id);
        }
    }

    @Test
    @DisplayName("§5.3/§5.4: an uncommitted entry only on the crashed leader is overwritten by the next leader and never applied")
    void uncommittedEntryOnlyOnLeaderIsOverwritten() {
        Network net = new Network(3);
        net.electLeader(1);
        net.isolate(1);
        net.propose(1, "y");
        net.drain();

        net.crash(1);
        net.recover();
        long leader = net.tickUntilLeader();
        net.propose(leader, "z");
        net.drain();
        net.restart(1);
        net.tickUntil(() -> net.node(1).commitIndex() == 3, 20);

        assertEquals(net.node(leader).term(2), net.node(1).term(2), "index 2 now holds the new leader's no-op");
        for (long id = 1; id <= 3; id++) {
            assertEquals(List.of("z"), net.stateMachine(id), "node " + id);
        }
    }

    @Test
    @DisplayName("§5.1/§5.3: a partitioned old leader rejoins, steps down, and its uncommitted entries are discarded")
    void partitionedOldLeaderRejoins() {
        Network net = new Network(3, o -> o.checkQuorum(false)); // the old leader does not notice on its own
        net.electLeader(1);
        net.isolate(1);
        net.propose(1, "stale");

        net.tickUntil(() -> otherLeader(net, 1) != RaftNode.NONE, 100);
        long leader = otherLeader(net, 1);
        net.propose(leader, "fresh");
        net.drain();
        assertEquals(Role.LEADER, net.node(1).role(), "node 1 still believes it leads");

        net.recover();
        net.tickUntil(() -> net.node(1).commitIndex() == 3, 20);

        assertEquals(Role.FOLLOWER, net.node(1).role());
        assertEquals(leader, net.node(1).leaderId());
        assertEquals(net.node(leader).currentTerm(), net.node(1).currentTerm());
        for (long id = 1; id <= 3; id++) {
            assertEquals(List.of("fresh"), net.stateMachine(id), "node " + id);
        }
    }

    @Test
    @DisplayName("Figure 2 persistent state: after all nodes restart from disk, every committed entry is still there")
    void restartOfAllNodesKeepsCommittedEntries() {
        Network net = new Network(3);
        net.electLeader(1);
        for (String c : List.of("a", "b", "c", "d", "e")) {
            net.propose(1, c);
        }
        net.drain();
        assertEquals(6, net.node(1).commitIndex());

        for (long id = 1; id <= 3; id++) {
            net.crash(id);
        }
        for (long id = 1; id <= 3; id++) {
            net.restart(id);
        }
        net.drain(); // each node re-applies what its disk says is committed
        for (long id = 1; id <= 3; id++) {
            assertEquals(List.of("a", "b", "c", "d", "e"), net.stateMachine(id), "node " + id);
        }
        long leader = net.tickUntilLeader();
        net.propose(leader, "f");
        net.tickUntil(() -> net.stateMachine(1).size() == 6 && net.stateMachine(2).size() == 6
                && net.stateMachine(3).size() == 6, 20);

        for (long id = 1; id <= 3; id++) {
            assertEquals(List.of("a", "b", "c", "d", "e", "f"), net.stateMachine(id), "node " + id);
        }
    }
}
