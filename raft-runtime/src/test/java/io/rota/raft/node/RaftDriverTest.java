package io.rota.raft.node;

import io.rota.raft.core.RaftNode;
import io.rota.raft.core.Role;
import io.rota.testkit.Await;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;

import static io.rota.raft.node.LocalCluster.TIMEOUT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The driver's own duties, on three drivers with in-memory disks and network ({@link LocalCluster#inMemory}):
 * pushing role changes to listeners, and persisting snapshots off the driver thread (docs/design.md H6, H7).
 */
class RaftDriverTest {

    /** Snapshot every 20 entries and keep no entries behind it, so compaction shows in the first index. */
    private static final UnaryOperator<NodeConfig> SNAPSHOT_EVERY_20 =
            cfg -> cfg.toBuilder().snapshotCount(20)
                    .raft(cfg.raft().toBuilder().snapshotCatchUpEntries(0).build()).build();

    @Test
    @DisplayName("role listeners hear follower → (pre-)candidate → leader, and a leader change, in order")
    void roleListenersHearEachElectionInOrder() throws Exception {
        ExecutorService listenerThread = Executors.newSingleThreadExecutor();
        try (LocalCluster c = LocalCluster.inMemory(3, cfg -> cfg, ListStateMachine::new)) {
            Map<Long, List<RoleChange>> heard = new HashMap<>();
            for (long id = 1; id <= 3; id++) {
                List<RoleChange> mine = new CopyOnWriteArrayList<>();
                heard.put(id, mine);
                c.node(id).addRoleListener(mine::add, listenerThread);
            }
            long first = c.awaitLeader();
            long term = c.status(first).term();
            awaitLastHeard(heard, first, term);

            long second = first % 3 + 1;
            assertTrue(c.node(first).transferLeadership(second).join());
            Await.until(TIMEOUT, () -> c.awaitLeader() == second, "node " + second + " leads after the transfer");
            long newTerm = c.status(second).term();
            assertTrue(newTerm > term);
            awaitLastHeard(heard, second, newTerm);

            for (long id = 1; id <= 3; id++) {
                List<RoleChange> seen = List.copyOf(heard.get(id));
                String where = "node " + id + " heard " + seen;
                assertEquals(new RoleChange(0, Role.FOLLOWER, RaftNode.NONE), seen.get(0),
                        where + ": first, the role at registration");
                assertSequenceIsConsistent(id, seen, where);
                assertEquals(List.of(first, second), leadersInOrder(seen), where);
            }
            // §5.2: a leader was a candidate of its term just before; §3.10: the transfer skips PreVote.
            List<RoleChange> won = heard.get(second);
            assertEquals(new RoleChange(newTerm, Role.CANDIDATE, RaftNode.NONE), won.get(won.size() - 2));
        } finally {
            listenerThread.shutdownNow();
        }
    }

    @Test
    @DisplayName("a node whose state machine cannot apply stops itself and says so: failStopped completes with the error")
    void aNodeThatCannotApplyStopsAndSaysSo() {
        IllegalStateException broken = new IllegalStateException("cannot apply (simulated)");
        try (LocalCluster c = LocalCluster.inMemory(3, cfg -> cfg, () -> new ListStateMachine() {
            @Override
            public List<Long> apply(List<io.rota.raft.core.Entry> committed) {
                for (io.rota.raft.core.Entry e : committed) {
                    if (e.type() == io.rota.raft.core.Entry.Type.COMMAND
                            && "poison".equals(new String(e.data(), java.nio.charset.StandardCharsets.UTF_8))) {
                        throw broken;
                    }
                }
                return super.apply(committed);
            }
        })) {
            long leader = c.awaitLeader();
            c.write("fine");
            assertFalse(c.node(leader).failStopped().isDone(), "a healthy node has not stopped");
            // Not awaited: the leader stops as it applies it, so the proposal fails with STOPPED.
            c.node(leader).propose("poison".getBytes(java.nio.charset.StandardCharsets.UTF_8), java.time.Duration.ofSeconds(5));
            // Every member applies the same committed entry, so every member stops (fail-stop, never diverge).
            for (long id = 1; id <= 3; id++) {
                RaftDriver<Long> node = c.node(id);
                Await.until(TIMEOUT, () -> node.failStopped().isDone(), "node " + id + " reports that it stopped");
                assertSame(broken, node.failStopped().join());
                assertSame(broken, node.failure());
            }
        }
    }

    @Test
    @DisplayName("a snapshot is written off the driver thread: commits and heartbeats go on, compaction waits for it")
    void aSnapshotIsWrittenWhileTheLoopGoesOn() {
        CountDownLatch gate = new CountDownLatch(1);
        try (LocalCluster c = LocalCluster.inMemory(3, SNAPSHOT_EVERY_20, () -> new GatedMachine(gate, 0))) {
            long leader = c.awaitLeader();
            long term = c.status(leader).term();
            GatedMachine machine = (GatedMachine) c.machine(leader);
            List<String> written = new ArrayList<>();
            try {
                writeAll(c, written, 25);
                Await.until(TIMEOUT, () -> machine.serialising.getCount() == 0,
                        "the leader's snapshot thread is serialising its capture");
                // Longer than three election timeouts (at most 2 × 10 ticks of 20 ms each): without heartbeats
                // a follower would have started an election by then.
                long until = System.nanoTime() + 3 * 2 * 10 * 20_000_000L;
                while (System.nanoTime() < until) {
                    writeAll(c, written, 1);
                }
                // A linearizable read is confirmed by a heartbeat round with a majority (§6.4).
                assertEquals(written, c.commands(leader));
                NodeStatus during = c.status(leader);
                assertEquals(term, during.term(), "no election while the snapshot was being written");
                assertEquals(Role.LEADER, during.role());
                assertTrue(during.appliedIndex() > 3 * 20, "applied " + during.appliedIndex());
                assertEquals(0, during.snapshotIndex(), "no snapshot counts before it is durable");
                assertEquals(1, during.firstIndex(), "the log is not compacted before the snapshot is durable");
                assertEquals(1, machine.captures.get(), "one snapshot in flight at a time");
            } finally {
                gate.countDown();
            }
            Await.until(TIMEOUT, () -> c.status(leader).snapshotIndex() > 0, "the snapshot is durable");
            NodeStatus after = c.status(leader);
            assertTrue(after.snapshotIndex() >= 20, "snapshot at " + after.snapshotIndex());
            assertEquals(after.snapshotIndex() + 1, after.firstIndex(), "the log is compacted to the snapshot");
        }
    }

    @Test
    @DisplayName("a snapshot that fails to persist compacts nothing, and is retried snapshotCount entries later")
    void aFailedSnapshotDoesNotCompactTheLog() {
        CountDownLatch open = new CountDownLatch(0);
        try (LocalCluster c = LocalCluster.inMemory(3, SNAPSHOT_EVERY_20, () -> new GatedMachine(open, 1))) {
            long leader = c.awaitLeader();
            GatedMachine machine = (GatedMachine) c.machine(leader);
            List<String> written = new ArrayList<>();
            writeAll(c, written, 25);
            Await.until(TIMEOUT, () -> machine.failed.get() == 1, "the first snapshot failed");

            // The failed attempt was at an index of at least 20; 10 more commands stay below its + 20.
            writeAll(c, written, 10);
            assertEquals(written, c.commands(leader));
            NodeStatus failed = c.status(leader);
            assertEquals(0, failed.snapshotIndex(), "a failed snapshot does not count");
            assertEquals(1, failed.firstIndex(), "a failed snapshot compacts nothing");
            assertEquals(1, machine.captures.get(), "no new attempt before another snapshotCount entries");

            writeAll(c, written, 30);
            Await.until(TIMEOUT, () -> c.status(leader).snapshotIndex() > 0, "the next snapshot is durable");
            NodeStatus after = c.status(leader);
            assertTrue(machine.captures.get() >= 2, "captures: " + machine.captures.get());
            assertEquals(after.snapshotIndex() + 1, after.firstIndex(), "the log is compacted to the snapshot");
            assertEquals(written, c.commands(leader));
        }
    }

    /**
     * A list state machine whose captures serialise only once {@code gate} is open, and whose first
     * {@code failures} serialisations fail as a full disk would.
     */
    private static final class GatedMachine extends ListStateMachine {
        final AtomicInteger captures = new AtomicInteger();
        final AtomicInteger failed = new AtomicInteger();
        final CountDownLatch serialising = new CountDownLatch(1);
        private final CountDownLatch gate;
        private final AtomicInteger failuresLeft;

        GatedMachine(CountDownLatch gate, int failures) {
            this.gate = gate;
            this.failuresLeft = new AtomicInteger(failures);
        }

        @Override
        public Capture capture() {
            captures.incrementAndGet();
            Capture image = super.capture();
            return out -> {
                serialising.countDown();
                try {
                    gate.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while waiting to serialise", e);
                }
                if (failuresLeft.getAndDecrement() > 0) {
                    failed.incrementAndGet();
                    throw new UncheckedIOException(new IOException("no space left on device (simulated)"));
                }
                image.writeTo(out);
            };
        }
    }

    private static void writeAll(LocalCluster c, List<String> written, int count) {
        for (int i = 0; i < count; i++) {
            String command = "c" + written.size();
            c.write(command);
            written.add(command);
        }
    }

    /** Wait until {@code leader} last heard that it leads in {@code term}, and everyone else that they follow it. */
    private static void awaitLastHeard(Map<Long, List<RoleChange>> heard, long leader, long term) {
        Await.until(TIMEOUT, () -> heard.entrySet().stream().allMatch(e -> {
            List<RoleChange> seen = e.getValue();
            RoleChange expected = new RoleChange(term, e.getKey() == leader ? Role.LEADER : Role.FOLLOWER, leader);
            return !seen.isEmpty() && seen.get(seen.size() - 1).equals(expected);
        }), "every listener last heard that node " + leader + " leads in term " + term + ": " + heard);
    }

    /**
     * Each change is a change; terms never go back; a term has at most one leader (§5.2 Election Safety);
     * and this node leads only straight after being a candidate of the same term.
     */
    private static void assertSequenceIsConsistent(long id, List<RoleChange> seen, String where) {
        Map<Long, Long> leaderOfTerm = new HashMap<>();
        for (int k = 0; k < seen.size(); k++) {
            RoleChange now = seen.get(k);
            if (k > 0) {
                RoleChange before = seen.get(k - 1);
                assertNotEquals(before, now, where + ": told twice at " + k);
                assertTrue(now.term() >= before.term(), where + ": the term went back at " + k);
                if (now.isLeader()) {
                    assertEquals(new RoleChange(now.term(), Role.CANDIDATE, RaftNode.NONE), before,
                            where + ": led without being a candidate first, at " + k);
                }
            }
            if (now.isLeader()) {
                assertEquals(id, now.leaderId(), where);
            }
            if (now.leaderId() != RaftNode.NONE) {
                Long other = leaderOfTerm.putIfAbsent(now.term(), now.leaderId());
                assertTrue(other == null || other == now.leaderId(), where + ": two leaders in term " + now.term());
            }
        }
    }

    /** The leaders a node heard of, in the order it first heard of each. */
    private static List<Long> leadersInOrder(List<RoleChange> seen) {
        List<Long> leaders = new ArrayList<>();
        for (RoleChange r : seen) {
            if (r.leaderId() != RaftNode.NONE && (leaders.isEmpty() || leaders.get(leaders.size() - 1) != r.leaderId())) {
                leaders.add(r.leaderId());
            }
        }
        return leaders;
    }
}
