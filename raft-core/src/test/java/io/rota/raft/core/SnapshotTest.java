package io.rota.raft.core;

import io.rota.raft.core.Message.AppendEntriesResponse;
import io.rota.raft.core.Message.InstallSnapshot;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

import static io.rota.raft.core.Network.bytes;
import static io.rota.raft.core.Network.disk;
import static io.rota.raft.core.Network.ids;
import static io.rota.raft.core.Network.ofType;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** Log compaction and InstallSnapshot (§7, Figures 12 and 13). */
class SnapshotTest {

    private static final List<String> C1_TO_C5 = List.of("c1", "c2", "c3", "c4", "c5");

    /** Leader 1 with entries 1 (no-op) and 2..6 (c1..c5) committed; node 3 missed 2..6 if {@code lag3}. */
    private static Network cluster(boolean lag3) {
        return cluster(lag3, o -> o);
    }

    private static Network cluster(boolean lag3, UnaryOperator<RaftOptions.Builder> tweak) {
        Network net = new Network(3, o -> tweak.apply(o.snapshotCatchUpEntries(0)));
        net.electLeader(1);
        if (lag3) {
            net.cut(1, 3);
        }
        for (String c : C1_TO_C5) {
            net.propose(1, c);
        }
        net.drain();
        net.recover();
        return net;
    }

    private static Snapshot snapshot(long index, long term) {
        return new Snapshot(new SnapshotMetadata(index, term, Configuration.of(1L, 2L, 3L)), bytes(""));
    }

    @Test
    @DisplayName("§7: compact() replaces the log prefix by a snapshot; the last included index and term are kept")
    void compactDropsThePrefix() {
        Network net = cluster(false);
        RaftNode leader = net.node(1);
        long term = leader.currentTerm();

        assertEquals(5, net.compact(1, 4));

        assertEquals(5, leader.firstIndex());
        assertEquals(term, leader.term(4), "lastIncludedTerm is still known");
        assertEquals(-1, leader.term(3));
        assertEquals(new SnapshotMetadata(4, term, Configuration.of(1L, 2L, 3L)), leader.latestSnapshot().metadata());
        assertEquals(List.of("5@" + term, "6@" + term), ids(net.disk(1).entries()));
    }

    @Test
    @DisplayName("§7: a follower whose next entry was compacted away receives InstallSnapshot and restores from it")
    void laggingFollowerGetsSnapshot() {
        Network net = cluster(true);
        net.compact(1, 6);

        net.tick(1);
        net.drain();

        List<InstallSnapshot> sent = ofType(net.sent(), InstallSnapshot.class);
        assertEquals(1, sent.size());
        assertEquals(6, sent.get(0).snapshot().index());
        RaftNode follower = net.node(3);
        assertEquals(7, follower.firstIndex());
        assertEquals(6, follower.commitIndex());
        assertEquals(C1_TO_C5, net.stateMachine(3));

        net.propose(1, "c6"); // and then ordinary replication continues
        net.drain();
        assertEquals(7, follower.lastIndex());
        assertEquals(7, net.node(1).commitIndex());
    }

    @Test
    @DisplayName("§7: a follower with an empty log is brought up to date with InstallSnapshot after the leader compacted")
    void emptyFollowerGetsSnapshot() {
        // Regression test for a bug this test found (now fixed): the leader's nextIndex for node 3 is 1, so sendAppend asks log.term(0). RaftLog.term() returns 0 for
        // index 0 even when the log is compacted (`return index == 0 ? 0 : -1;`), so the leader does not fall back
        // to InstallSnapshot and calls log.slice(1, ..), which throws IllegalArgumentException("slice from 1 but
        // the log starts at 7") out of step(). term(0) must be -1 once compactedIndex > 0.
        Network net = new Network(3, o -> o.snapshotCatchUpEntries(0));
        net.isolate(3); // node 3 never hears anything: a new or long-dead server
        net.electLeader(1);
        for (String c : C1_TO_C5) {
            net.propose(1, c);
        }
        net.drain();
        net.compact(1, 6);
        net.recover();

        net.tick(1);
        net.drain();

        assertEquals(1, net.sentCount(InstallSnapshot.class, 3));
        assertEquals(6, net.node(3).commitIndex());
        assertEquals(C1_TO_C5, net.stateMachine(3));
    }

    @Test
    @DisplayName("§7 Figure 13 rules 7-8: a follower installs a snapshot: Ready.snapshot set, log reset, commit = snapshot index")
    void followerInstallsSnapshot() {
        Network net = new Network(3, o -> o, id -> disk(1, 0, 1)); // [1@1]
        Snapshot snap = snapshot(10, 2);

        net.node(2).step(new InstallSnapshot(2, 1, 2, snap));
        Ready ready = net.handleReady(2);

        assertEquals(snap, ready.snapshot());
        assertEquals(List.of(), ready.entries());
        assertEquals(new HardState(2, 0, 10), ready.hardState());
        assertEquals(List.of(new AppendEntriesResponse(2, 2, 1, true, 10, 0, 0, 0)), ready.messages());
        RaftNode follower = net.node(2);
        assertEquals(11, follower.firstIndex());
        assertEquals(10, follower.lastIndex());
        assertEquals(10, follower.commitIndex());
        assertEquals(10, follower.appliedIndex());
    }

    @Test
    @DisplayName("§7 Figure 13 rule 6: if the log holds the snapshot's last entry, the entries following it are retained")
    void snapshotMatchingTheLogKeepsTheSuffix() {
        Network net = new Network(3, o -> o, id -> disk(1, 0, 1, 1, 1, 1, 1)); // [1..5 @1]

        net.node(2).step(new InstallSnapshot(1, 1, 2, snapshot(3, 1)));
        Ready ready = net.handleReady(2);

        assertNull(ready.snapshot(), "the log already has everything the snapshot covers");
        assertEquals(List.of("1@1", "2@1", "3@1"), ids(ready.committedEntries()));
        assertEquals(List.of(new AppendEntriesResponse(1, 2, 1, true, 3, 0, 0, 0)), ready.messages());
        assertEquals(5, net.node(2).lastIndex());
        assertEquals(3, net.node(2).commitIndex());
    }

    @Test
    @DisplayName("§7: a stale snapshot (index <= commitIndex) is answered without any change")
    void staleSnapshotChangesNothing() {
        Network net = new Network(3, o -> o, id -> disk(1, 5, 1, 1, 1, 1, 1)); // [1..5 @1], all committed
        net.collect(2);

        net.node(2).step(new InstallSnapshot(1, 1, 2, snapshot(3, 1)));
        Ready ready = net.handleReady(2);

        assertNull(ready.snapshot());
        assertEquals(List.of(), ready.entries());
        assertEquals(List.of(new AppendEntriesResponse(1, 2, 1, true, 5, 0, 0, 0)), ready.messages());
        assertEquals(1, net.node(2).firstIndex());
        assertEquals(5, net.node(2).lastIndex());
    }

    @Test
    @DisplayName("§7: a lost snapshot is sent again after snapshotRetryTicks")
    void lostSnapshotIsRetried() {
        Network net = cluster(true);
        net.compact(1, 6);
        net.dropType(InstallSnapshot.class);
        net.tick(1);
        net.drain();
        assertEquals(1, net.sentCount(InstallSnapshot.class, 3));
        net.recover();

        int retryTicks = net.options(1).snapshotRetryTicks();
        for (int i = 0; i < retryTicks - 1; i++) {
            net.tick(1);
            net.drain();
        }
        assertEquals(1, net.sentCount(InstallSnapshot.class, 3), "the leader waits for the answer");
        assertEquals(1, net.node(3).lastIndex());

        net.tick(1);
        net.drain();
        assertEquals(2, net.sentCount(InstallSnapshot.class, 3));
        assertEquals(6, net.node(3).commitIndex());
        assertEquals(C1_TO_C5, net.stateMachine(3));
    }

    /**
     * Node 3 behind from entry 2, snapshot at 4: every InstallSnapshot the leader sends node 3 is held back
     * (returned, in order), as if the first were still streaming and the transport dropped the rest (Peer);
     * meanwhile c6, c7 and a snapshot at 8.
     */
    private static List<InstallSnapshot> snapshotOvertakenWhileStreaming(Network net) {
        List<InstallSnapshot> held = new ArrayList<>();
        net.drop(m -> m instanceof InstallSnapshot s && held.add(s));
        net.compact(1, 4);
        net.tick(1);
        net.drain();
        assertEquals(1, held.size());
        net.propose(1, "c6");
        net.propose(1, "c7");
        net.drain();
        net.compact(1, 8);
        return held;
    }

    @Test
    @DisplayName("§7: compaction keeps the entries after a snapshot still streaming; once installed, the log continues it")
    void compactionIsPinnedWhileASnapshotStreams() {
        Network net = cluster(true);
        InstallSnapshot first = snapshotOvertakenWhileStreaming(net).get(0);
        assertEquals(5, net.node(1).firstIndex(), "entries 5.. kept for node 3 (the newer snapshot is at 8)");

        net.recover();
        net.deliver(first);
        net.drain();

        assertEquals(1, net.sentCount(InstallSnapshot.class, 3), "node 3 continued from the log, not sent 8");
        assertEquals(8, net.node(3).commitIndex());
        assertEquals(List.of("c1", "c2", "c3", "c4", "c5", "c6", "c7"), net.stateMachine(3));
        net.propose(1, "c8");
        net.drain();
        net.compact(1, 9);
        assertEquals(10, net.node(1).firstIndex(), "installed: the pin is gone");
    }

    @Test
    @DisplayName("§7: the pin outlives a retry (the transport finishes the transfer under way, not the newer one)")
    void thePinOutlivesARetry() {
        Network net = cluster(true);
        List<InstallSnapshot> held = snapshotOvertakenWhileStreaming(net);
        for (int i = 0; i < net.options(1).snapshotRetryTicks() + 2; i++) {
            net.tick(1);
            net.drain();
        }
        assertEquals(8, held.get(held.size() - 1).snapshot().index(), "the retry offered snapshot 8: " + held);
        net.propose(1, "c8");
        net.drain();
        net.compact(1, 9);
        assertEquals(5, net.node(1).firstIndex(), "still pinned after the retry");

        net.recover();
        net.deliver(held.get(0));
        net.drain();

        assertEquals(9, net.node(3).commitIndex());
        assertEquals(List.of("c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8"), net.stateMachine(3));
    }

    @Test
    @DisplayName("§7: the pin is bounded by maxSnapshotPinEntries and dropped when the transport reports a failure")
    void thePinIsBoundedAndDroppedOnFailure() {
        Network bounded = cluster(true, o -> o.maxSnapshotPinEntries(3));
        snapshotOvertakenWhileStreaming(bounded);
        assertEquals(9, bounded.node(1).firstIndex(), "8 - 4 > 3 entries: not pinned");

        Network failed = cluster(true);
        failed.drop(m -> m instanceof InstallSnapshot);
        failed.compact(1, 4);
        failed.tick(1);
        failed.drain();
        assertEquals(1, failed.sentCount(InstallSnapshot.class, 3));
        failed.propose(1, "c6");
        failed.propose(1, "c7");
        failed.drain();
        failed.node(1).reportSnapshotFailure(3);
        failed.compact(1, 8);
        assertEquals(9, failed.node(1).firstIndex(), "nothing streams to node 3: nothing pinned");
    }

    @Test
    @DisplayName("§7: a node restarted from its snapshot plus the following entries recovers the same log and state")
    void restartFromSnapshotAndEntries() {
        Network net = cluster(true);
        net.compact(1, 4);   // the leader keeps 5..6 in its log
        net.compact(1, 6);   // ... and now nothing: node 3 needs the snapshot
        net.tick(1);
        net.drain();
        net.propose(1, "c6");
        net.drain();

        for (long id : List.of(1L, 3L)) {
            RaftNode before = net.node(id);
            long first = before.firstIndex();
            long last = before.lastIndex();
            long term = before.currentTerm();

            net.crash(id);
            net.restart(id);
            net.drain();

            RaftNode after = net.node(id);
            assertEquals(first, after.firstIndex(), "node " + id);
            assertEquals(last, after.lastIndex(), "node " + id);
            assertEquals(term, after.currentTerm(), "node " + id);
            assertEquals(6, after.latestSnapshot().index(), "node " + id);
            assertEquals(List.of("c1", "c2", "c3", "c4", "c5", "c6"), net.stateMachine(id), "node " + id);
        }
    }
}
