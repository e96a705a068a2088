package io.rota.raft.core;

import io.rota.raft.core.Message.AppendEntries;
import io.rota.raft.core.Message.AppendEntriesResponse;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.List;

import static io.rota.raft.core.Network.disk;
import static io.rota.raft.core.Network.ids;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Safety: §5.4.2 (committing entries from previous terms, Figure 8) and §10.2.1 (the leader's own disk). */
class SafetyTest {

    /**
     * Figure 8 (c): S5 led term 3 and wrote 2@3 only on itself; S1 wrote 2@2 on S1 and S2 in term 2.
     * Plain Raft (no PreVote, no CheckQuorum), and at most one entry per AppendEntries.
     */
    private static Network figure8() {
        return new Network(5, o -> o.preVote(false).checkQuorum(false).maxEntriesBytesPerMessage(1),
                id -> switch ((int) id) {
                    case 1, 2 -> disk(3, 1, 1, 2);   // [1@1, 2@2]
                    case 5 -> disk(3, 1, 1, 3);      // [1@1, 2@3]
                    default -> disk(3, 1, 1);        // [1@1]
                });
    }

    /** S1 leads term 4 and copies 2@2 to S3 and S4, but its term-4 entry (the no-op) reaches no one. */
    private static void s1ReplicatesOnlyTheTerm2Entry(Network net) {
        net.isolate(5);
        // A follower that lacks index 2 rejects the term-4 entry anyway; drop it wherever it would be stored.
        net.drop(m -> m instanceof AppendEntries a && a.entries().stream().anyMatch(e -> e.term() == 4)
                && net.node(a.to()).lastIndex() >= 2);
        net.electLeader(1);
        assertEquals(4, net.node(1).currentTerm());
        for (long id = 1; id <= 4; id++) {
            assertEquals(2, net.node(id).term(2), "2@2 is stored on a majority, S" + id);
        }
        assertEquals(2, net.node(1).progress().get(3L).matchIndex(), "and the leader knows it");
        assertEquals(2, net.node(1).progress().get(4L).matchIndex());
    }

    @Test
    @DisplayName("§5.4.2 / Figure 8 (c)-(d): a leader does not commit an entry of an older term by counting replicas, so S5 may overwrite it")
    void figure8OldTermEntryIsNotCommittedByCounting() {
        Network net = figure8();
        s1ReplicatesOnlyTheTerm2Entry(net);

        assertEquals(1, net.node(1).commitIndex(), "2@2 is on a majority but is not from term 4");

        // (d) S1 crashes; S5 is elected (its last term 3 beats 2) and overwrites index 2 everywhere.
        net.crash(1);
        net.recover();
        net.electLeader(5);
        for (long id = 2; id <= 5; id++) {
            assertEquals(3, net.node(id).term(2), "S" + id);
            assertEquals(3, net.node(id).commitIndex(), "S" + id);
        }
        for (long id = 2; id <= 5; id++) {
            assertTrue(net.applied(id).stream().noneMatch(e -> e.index() == 2 && e.term() == 2),
                    "S" + id + " must never apply 2@2");
        }
    }

    @Test
    @DisplayName("§5.4.2 / Figure 8 (e): once an entry of the leader's term is on a majority, the older entries before it are committed indirectly")
    void figure8OldTermEntryIsCommittedIndirectly() {
        Network net = figure8();
        s1ReplicatesOnlyTheTerm2Entry(net);
        assertEquals(1, net.node(1).commitIndex());

        net.recover();
        net.isolate(5);
        net.tick(1); // a heartbeat; the followers' answers make S1 resend its term-4 entry
        net.drain();
        assertEquals(3, net.node(1).commitIndex(), "3@4 is on a majority, and 2@2 with it");
        assertEquals(List.of("2@2", "3@4"), ids(net.applied(1).subList(1, 3)));

        // S5 can no longer win: every majority holds an entry of term 4.
        net.recover();
        for (int i = 0; i < 100; i++) {
            net.tick(5);
            net.drain();
            assertNotEquals(Role.LEADER, net.node(5).role());
        }
        for (long id = 1; id <= 4; id++) {
            assertEquals(2, net.node(id).term(2), "S" + id);
        }
    }

    @Test
    @DisplayName("§5.4.2 / §8: a new leader appends a no-op of its term, which commits the entries of earlier terms")
    void newLeaderAppendsNoOp() {
        Network net = new Network(3, o -> o, id -> disk(1, 0, 1, 1)); // [1@1, 2@1], nothing committed

        net.electLeader(1);

        Entry last = net.node(1).logEntries().get(2);
        assertEquals(Entry.Type.NO_OP, last.type());
        assertEquals(net.node(1).currentTerm(), last.term());
        assertEquals(3, net.node(1).commitIndex());
        net.tick(1); // a heartbeat tells every follower the commit index (see LogReplicationTest for why)
        net.drain();
        for (long id = 1; id <= 3; id++) {
            assertEquals(3, net.node(id).commitIndex(), "node " + id);
            assertEquals(List.of("e1", "e2"), net.stateMachine(id), "node " + id);
        }
    }

    @Test
    @DisplayName("§10.2.1: a single-node cluster commits an entry only after advance() reports it durable")
    void singleNodeCommitsAfterAdvance() {
        Network net = new Network(1);
        RaftNode node = net.node(1);
        while (node.role() != Role.LEADER) {
            node.tick();
        }
        assertEquals(0, node.commitIndex(), "the no-op is not on disk yet");

        Ready first = net.handleReady(1); // persist, then advance
        assertEquals(List.of("1@1"), ids(first.entries()));
        assertEquals(List.of(), first.committedEntries());
        assertEquals(1, node.commitIndex());

        net.propose(1, "x");
        assertEquals(1, node.commitIndex());
        Ready second = net.handleReady(1);
        assertEquals(List.of("2@1"), ids(second.entries()));
        assertEquals(2, node.commitIndex());
        net.handleReady(1);
        assertEquals(List.of("x"), net.stateMachine(1));
    }

    @Test
    @DisplayName("§10.2.1: with one follower's ack, a 3-node leader commits only once its own copy is durable (advance)")
    void leaderCountsItselfOnlyAfterAdvance() {
        Network net = new Network(3);
        net.electLeader(1);
        long term = net.node(1).currentTerm();

        net.propose(1, "x"); // entry 2; the leader has not persisted it yet
        net.node(1).step(new AppendEntriesResponse(term, 2, 1, true, 2, 0, 0, 0));
        assertEquals(1, net.node(1).commitIndex(), "only node 2's copy is durable");

        net.handleReady(1);
        assertEquals(2, net.node(1).commitIndex(), "leader + node 2 are a majority");
    }

    @Test
    @DisplayName("§10.2.1: a majority of followers' acks commits even before the leader's own write is durable")
    void majorityOfFollowersSuffices() {
        Network net = new Network(3);
        net.electLeader(1);
        long term = net.node(1).currentTerm();

        net.propose(1, "x");
        net.node(1).step(new AppendEntriesResponse(term, 2, 1, true, 2, 0, 0, 0));
        net.node(1).step(new AppendEntriesResponse(term, 3, 1, true, 2, 0, 0, 0));

        assertEquals(2, net.node(1).commitIndex());
    }
}
