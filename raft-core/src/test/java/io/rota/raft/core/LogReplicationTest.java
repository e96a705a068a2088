package io.rota.raft.core;

import io.rota.raft.core.Message.AppendEntries;
import io.rota.raft.core.Message.AppendEntriesResponse;
import io.rota.raft.core.Message.Heartbeat;
import io.rota.raft.core.ProposalResult.Accepted;
import io.rota.raft.core.ProposalResult.Reason;
import io.rota.raft.core.ProposalResult.Rejected;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static io.rota.raft.core.Network.bytes;
import static io.rota.raft.core.Network.ids;
import static io.rota.raft.core.Network.ofType;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Log replication: §5.3 (AppendEntries, Figure 2), plus the flow control of §10.2. */
class LogReplicationTest {

    private static Entry e(long index, long term) {
        return Entry.command(index, term, bytes("e" + index));
    }

    private static AppendEntries append(long term, long prevIndex, long prevTerm, List<Entry> entries, long commit) {
        return new AppendEntries(term, 1, 2, prevIndex, prevTerm, entries, commit);
    }

    private static long[] terms(long first, int count, long term) {
        long[] t = new long[count + 1];
        t[0] = first;
        for (int i = 1; i <= count; i++) {
            t[i] = term;
        }
        return t;
    }

    @Test
    @DisplayName("§5.3: the leader appends a command, replicates it, commits it on a majority and followers learn the commit")
    void leaderReplicatesAndCommits() {
        Network net = new Network(3);
        net.electLeader(1);
        long term = net.node(1).currentTerm();

        assertEquals(new Accepted(term, 2, 2), net.propose(1, "x"));
        net.drain();

        for (long id = 1; id <= 3; id++) {
            assertEquals(term, net.node(id).term(2), "node " + id);
            assertEquals(2, net.node(id).commitIndex(), "node " + id);
            assertEquals(List.of("x"), net.stateMachine(id), "node " + id);
        }
    }

    @Test
    @DisplayName("§5.3: an entry is committed once a majority stores it, and not before (5 nodes: 2 copies no, 3 copies yes)")
    void commitNeedsAMajority() {
        Network net = new Network(5);
        net.electLeader(1);
        net.cut(1, 3);
        net.cut(1, 4);
        net.cut(1, 5);

        net.propose(1, "x");
        net.drain();
        assertEquals(1, net.node(1).commitIndex(), "only leader and node 2 hold entry 2");

        net.recover();
        net.cut(1, 4);
        net.cut(1, 5);
        net.tick(1); // a heartbeat makes the leader resend to node 3
        net.drain();
        assertEquals(2, net.node(1).commitIndex());
    }

    @Test
    @DisplayName("§5.3: a follower whose ack arrives after the entry committed still learns the commit without waiting for a heartbeat")
    void lateFollowerLearnsCommitWithoutHeartbeat() {
        // Regression test for a bug this test found (now fixed): node 2's ack commits the no-op and the leader broadcasts the commit, but node 3 is then a paused
        // PROBE follower and gets nothing; when node 3's own ack arrives, RaftNode.handleAppendEntriesResponse
        // calls sendAppend(m.from(), false) in its "wasPaused" branch, which sends nothing when there are no
        // new entries, so node 3 keeps commitIndex 0 until the next heartbeat. It should be sendAppend(.., true).
        Network net = new Network(3);

        net.electLeader(1); // no ticks after the election: only the commit announcement can tell them

        assertEquals(1, net.node(1).commitIndex());
        assertEquals(1, net.node(2).commitIndex());
        assertEquals(1, net.node(3).commitIndex());
    }

    @Test
    @DisplayName("§5.3: a follower learns the commit index from the leader's heartbeat")
    void followerLearnsCommitFromHeartbeat() {
        Network net = new Network(3, o -> o, id -> Network.disk(1, 0, 1, 1));
        RaftNode follower = net.node(2);

        follower.step(new Heartbeat(1, 1, 2, 2, 0));

        assertEquals(2, follower.commitIndex());
        Ready ready = net.handleReady(2);
        assertEquals(List.of(1L, 2L), ready.committedEntries().stream().map(Entry::index).toList());
    }

    @Test
    @DisplayName("§5.3 AppendEntries receiver rule 2: reply false if log doesn't contain prevLogIndex with prevLogTerm")
    void rejectWhenPrevLogDoesNotMatch() {
        Network net = new Network(3, o -> o, id -> Network.disk(2, 0, 1, 1)); // log [1@1, 2@1]
        RaftNode follower = net.node(2);

        follower.step(append(2, 3, 1, List.of(e(4, 2)), 0)); // we have no entry 3
        follower.step(append(2, 2, 2, List.of(e(3, 2)), 0)); // entry 2 has term 1, not 2

        assertEquals(List.of(
                new AppendEntriesResponse(2, 2, 1, false, 0, 3, 3, 0),  // hint: our log ends at 2
                new AppendEntriesResponse(2, 2, 1, false, 0, 2, 1, 1)), // hint: term 1 starts at 1
                net.collect(2));
        assertEquals(List.of("1@1", "2@1"), ids(follower.logEntries()));
    }

    @Test
    @DisplayName("§5.3 AppendEntries receiver rule 3: a conflicting entry (same index, other term) is deleted with all that follow")
    void conflictingSuffixIsTruncated() {
        Network net = new Network(3, o -> o, id -> Network.disk(1, 0, 1, 1, 1)); // [1@1, 2@1, 3@1]
        RaftNode follower = net.node(2);

        follower.step(append(2, 1, 1, List.of(e(2, 2)), 0));

        assertEquals(List.of("1@1", "2@2"), ids(follower.logEntries()));
        Ready ready = net.handleReady(2);
        assertEquals(List.of("2@2"), ids(ready.entries()));
        assertEquals(List.of(new AppendEntriesResponse(2, 2, 1, true, 2, 0, 0, 0)), ready.messages());
    }

    @Test
    @DisplayName("§5.3 rules 3-4: a stale, duplicated or reordered AppendEntries never truncates entries")
    void staleAppendEntriesNeverTruncates() {
        Network net = new Network(3);
        RaftNode follower = net.node(2);
        follower.step(append(1, 0, 0, List.of(e(1, 1), e(2, 1), e(3, 1)), 0));
        net.collect(2);

        follower.step(append(1, 0, 0, List.of(e(1, 1)), 0));        // an older message, delivered late
        follower.step(append(1, 1, 1, List.of(e(2, 1)), 0));        // another one

        assertEquals(List.of("1@1", "2@1", "3@1"), ids(follower.logEntries()));
        Ready ready = net.handleReady(2);
        assertEquals(List.of(), ready.entries(), "nothing to rewrite on disk");
    }

    @Test
    @DisplayName("§5.3 AppendEntries receiver rule 5: commitIndex = min(leaderCommit, index of last new entry), not lastIndex")
    void commitIsCappedAtLastNewEntry() {
        // The follower holds 2@1 and 3@1 from an old leader; the new leader (term 2) has 2@2, 3@2 committed.
        Network net = new Network(3, o -> o, id -> Network.disk(1, 0, 1, 1, 1));
        RaftNode follower = net.node(2);

        follower.step(append(2, 0, 0, List.of(e(1, 1)), 3)); // a size-limited probe: one entry, leaderCommit 3

        assertEquals(1, follower.commitIndex(), "entries 2 and 3 are not known to match the leader's");
    }

    @Test
    @DisplayName("§5.3 fast backtracking: a long divergent tail of an old term is repaired in few round trips")
    void fastBacktracking() {
        // Nodes 1 and 2: entry 1@1, then 60 entries of term 3. Node 3: entry 1@1, then 100 entries of term 2.
        Network net = new Network(3, o -> o, id -> id == 3
                ? Network.disk(3, 1, terms(1, 100, 2)) : Network.disk(3, 1, terms(1, 60, 3)));

        net.electLeader(1);

        long rejections = ofType(net.sent(), AppendEntriesResponse.class).stream()
                .filter(r -> r.from() == 3 && !r.success()).count();
        assertEquals(1, rejections, "one rejection names term 2, the leader skips all of it");
        assertTrue(net.sentCount(AppendEntries.class, 3) <= 4, "AppendEntries to node 3: "
                + net.sentCount(AppendEntries.class, 3));
        assertEquals(net.node(1).lastIndex(), net.node(3).lastIndex());
        for (long i = 1; i <= net.node(1).lastIndex(); i++) {
            assertEquals(net.node(1).term(i), net.node(3).term(i), "index " + i);
        }
    }

    @Test
    @DisplayName("§10.2.2 pipelining: in REPLICATE state the leader sends AppendEntries without waiting, up to maxInflightMessages")
    void pipeliningStopsAtMaxInflight() {
        Network net = new Network(3, o -> o.maxInflightMessages(3));
        net.electLeader(1); // followers acknowledged the no-op: they are in REPLICATE

        for (int i = 1; i <= 5; i++) {
            net.propose(1, "c" + i); // entries 2..6
        }
        net.handleReadies();

        List<AppendEntries> toNode2 = ofType(net.outbox(), AppendEntries.class).stream()
                .filter(m -> m.to() == 2).toList();
        assertEquals(List.of(1L, 2L, 3L), toNode2.stream().map(AppendEntries::prevLogIndex).toList());
        assertEquals(new RaftNode.ProgressView(1, 5, "REPLICATE", 3, true), net.node(1).progress().get(2L));

        net.drain(); // acknowledgements free the window and the rest follows
        assertEquals(6, net.node(2).lastIndex());
        assertEquals(6, net.node(1).commitIndex());
    }

    @Test
    @DisplayName("§5.3: the leader retries AppendEntries indefinitely: a follower that lost a full pipeline window catches up")
    void followerCatchesUpAfterLosingAFullPipelineWindow() {
        // Regression test for a bug this test found (now fixed): the lost AppendEntries stay in node 3's Inflights forever. Heartbeat answers reach
        // handleHeartbeatResponse, which calls sendAppend, but Progress.isPaused() is true in REPLICATE while
        // inflights.full(), and nothing ever frees the window (etcd frees one slot, or falls back to probing,
        // on a heartbeat response). Replication to node 3 stops for good; with the default window of 256 it takes
        // 256 lost messages, e.g. a follower partitioned or restarted under write load.
        Network net = new Network(3, o -> o.maxInflightMessages(2));
        net.electLeader(1);
        net.cut(1, 3);
        for (int i = 1; i <= 3; i++) {
            net.propose(1, "c" + i); // the first two AppendEntries to node 3 fill its window and are lost
        }
        net.drain();
        net.recover();

        for (int i = 0; i < 20; i++) { // two election timeouts of heartbeats
            net.tick(1);
            net.drain();
        }

        assertEquals(4, net.node(3).lastIndex());
        assertEquals(List.of("c1", "c2", "c3"), net.stateMachine(3));
    }

    @Test
    @DisplayName("§10.2 batching: propose(List) of 100 commands yields one Ready with 100 entries and one AppendEntries per follower")
    void batchedProposal() {
        Network net = new Network(3);
        net.electLeader(1);
        List<byte[]> commands = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            commands.add(bytes("c" + i));
        }

        ProposalResult result = net.node(1).propose(commands);
        Ready ready = net.handleReady(1);

        assertEquals(new Accepted(net.node(1).currentTerm(), 2, 101), result);
        assertEquals(100, ready.entries().size());
        List<AppendEntries> appends = ofType(ready.allMessages(), AppendEntries.class);
        assertEquals(List.of(2L, 3L), appends.stream().map(AppendEntries::to).toList());
        assertTrue(appends.stream().allMatch(a -> a.entries().size() == 100));
    }

    @Test
    @DisplayName("Flow control: the leader rejects proposals beyond maxUncommittedBytes with TOO_MUCH_UNCOMMITTED, and accepts again after commit")
    void tooMuchUncommitted() {
        Network net = new Network(3, o -> o.maxUncommittedBytes(100));
        net.electLeader(1);
        net.isolate(1);
        String fifty = "x".repeat(50); // 74 bytes per entry

        assertTrue(net.propose(1, fifty) instanceof Accepted);
        assertEquals(new Rejected(Reason.TOO_MUCH_UNCOMMITTED, 1), net.propose(1, fifty));

        net.recover();
        net.tick(1);
        net.drain();
        assertEquals(2, net.node(1).commitIndex());
        assertTrue(net.propose(1, fifty) instanceof Accepted);
    }

    @Test
    @DisplayName("§5.1/§8: only the leader accepts proposals; others answer NOT_LEADER with a hint to the leader")
    void proposalToNonLeader() {
        Network net = new Network(3);
        assertEquals(new Rejected(Reason.NOT_LEADER, RaftNode.NONE), net.propose(2, "x"));

        net.electLeader(1);
        assertEquals(new Rejected(Reason.NOT_LEADER, 1), net.propose(2, "x"));
        assertEquals(1, net.node(2).lastIndex(), "nothing was appended");
    }

    @Test
    @DisplayName("§5.3: the leader's commit broadcast is a commit notice the followers apply and do not answer: six messages per write, not eight")
    void commitNoticeIsNotAnswered() {
        Network net = new Network(3);
        net.electLeader(1);
        int before = net.sent().size();

        net.propose(1, "x");
        net.drain();

        List<Message> write = net.sent().subList(before, net.sent().size());
        for (long id = 1; id <= 3; id++) {
            assertEquals(2, net.node(id).commitIndex(), "node " + id);
            assertEquals(List.of("x"), net.stateMachine(id), "node " + id);
        }
        List<AppendEntries> appends = ofType(write, AppendEntries.class);
        assertEquals(2, appends.stream().filter(m -> !m.commitNotice() && m.entries().size() == 1).count(),
                "the entry, to each follower: " + write);
        assertEquals(2, appends.stream().filter(m -> m.commitNotice() && m.entries().isEmpty()
                && m.leaderCommit() == 2).count(), "the commit, to each follower: " + write);
        assertEquals(2, ofType(write, AppendEntriesResponse.class).size(),
                "one answer per follower, to the entry only: " + write);
        assertEquals(6, write.size(), write.toString());
    }

    @Test
    @DisplayName("§5.3 receiver rules 2 and 5 for a commit notice: a failed check is answered, a passed one commits up to prevLogIndex unanswered")
    void commitNoticeChecksLikeAnyAppend() {
        Network net = new Network(3, o -> o, id -> Network.disk(1, 0, 1, 1)); // log [1@1, 2@1]
        RaftNode follower = net.node(2);

        follower.step(new AppendEntries(1, 1, 2, 3, 1, List.of(), 3, true)); // we have no entry 3
        assertEquals(List.of(new AppendEntriesResponse(1, 2, 1, false, 0, 3, 3, 0)), net.collect(2));

        follower.step(new AppendEntries(1, 1, 2, 2, 1, List.of(), 5, true));
        assertEquals(2, follower.commitIndex(), "min(leaderCommit, index of last new entry)");
        assertEquals(List.of(), net.collect(2), "no answer to a notice that passed the check");
    }

    @Test
    @DisplayName("§5.3: an acknowledgement lost while no notice would be answered is recovered by the next heartbeat's round")
    void lostAckIsRecoveredByHeartbeat() {
        Network net = new Network(3);
        net.electLeader(1);
        net.isolate(2);
        net.drop(m -> m instanceof AppendEntriesResponse && m.from() == 3); // node 3's ack of entry 2 is lost

        net.propose(1, "x");
        net.drain();
        assertEquals(1, net.node(1).commitIndex(), "node 3 holds entry 2, but the leader never heard");

        net.recover();
        net.isolate(2);
        net.tickUntil(() -> net.node(1).commitIndex() == 2, 50);
        assertEquals(2, net.node(3).commitIndex());
    }
}
