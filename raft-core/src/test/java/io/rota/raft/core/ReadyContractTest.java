package io.rota.raft.core;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What a Ready asks the disk for: an fsync exactly when something is promised on it (Figure 2). */
class ReadyContractTest {

    private static RaftNode follower() {
        return new RaftNode(RaftOptions.defaults(2, Configuration.of(1L, 2L, 3L)), PersistentState.EMPTY,
                new SplittableRandom(7));
    }

    private static Ready drain(RaftNode n) {
        Ready rd = n.ready();
        n.advance(rd);
        return rd;
    }

    @Test
    @DisplayName("Figure 2: new entries and a new term must be durable before the acknowledgement leaves")
    void entriesAndTermNeedAnFsync() {
        RaftNode n = follower();
        n.step(new Message.AppendEntries(1, 1, 2, 0, 0, List.of(Entry.noOp(1, 1)), 0));
        Ready rd = drain(n);
        assertTrue(rd.mustSync());
        assertEquals(1, rd.entries().size());
        assertEquals(1, rd.hardState().currentTerm());
        assertTrue(rd.messages().get(0) instanceof Message.AppendEntriesResponse, "the ack waits for the disk");
    }

    @Test
    @DisplayName("Figure 2: a vote must be durable before the vote leaves")
    void voteNeedsAnFsync() {
        RaftNode n = follower();
        n.step(new Message.RequestVote(1, 3, 2, 0, 0, false, false));
        Ready rd = drain(n);
        assertTrue(rd.mustSync());
        assertEquals(3, rd.hardState().votedFor());
        assertTrue(rd.leaderMessages().isEmpty(), "a vote never goes out before the persist step");
    }

    @Test
    @DisplayName("Figure 2: commitIndex is volatile, so a Ready that only moves it needs no fsync")
    void commitIndexAloneNeedsNoFsync() {
        RaftNode n = follower();
        n.step(new Message.AppendEntries(1, 1, 2, 0, 0, List.of(Entry.noOp(1, 1)), 0));
        drain(n);
        n.step(new Message.Heartbeat(1, 1, 2, 1, 0));
        Ready rd = drain(n);
        assertNotNull(rd.hardState());
        assertEquals(1, rd.hardState().commitIndex());
        assertTrue(rd.entries().isEmpty());
        assertFalse(rd.mustSync());
        assertTrue(rd.hasWrites(), "still written, just not waited for");
    }
}
