package io.rota.raft.node;

import io.rota.raft.core.Entry;
import io.rota.raft.core.Ready;
import io.rota.raft.storage.ForwardingLogStore;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.UnaryOperator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every case of {@link RaftClusterTest} again, with each driver running its turns on its peer transport's one
 * event loop ({@code RaftDriver.Execution.onTransportLoop}, design.md P11) instead of a thread of its own; and the rule that
 * makes that mode correct and fast: the leader's AppendEntries are on the wire before it blocks in its own
 * fsync (§10.2.1), although the thread that would write them is the one doing the fsync.
 */
@Tag("cluster")
class DriverOnLoopTest extends RaftClusterTest {

    private static final String MARKER = "held-write";

    @Override
    LocalCluster cluster(int size, UnaryOperator<NodeConfig> tweak) {
        return LocalCluster.onDriverLoops(dir, size, tweak, (id, store) -> store);
    }

    @Test
    @DisplayName("§10.2.1: on its loop, the leader's AppendEntries reach a follower's disk while the leader's own fsync of the entry is still held")
    void leaderSendsBeforeItsOwnFsync() throws Exception {
        CountDownLatch followerPersisted = new CountDownLatch(1);
        AtomicReference<String> heldLeader = new AtomicReference<>();
        AtomicLong leaderId = new AtomicLong();
        Map<Long, Boolean> seenByLeader = new ConcurrentHashMap<>();
        try (LocalCluster c = LocalCluster.onDriverLoops(dir, 3, cfg -> cfg, (id, store) -> new ForwardingLogStore(store) {
            @Override
            public void persist(Ready ready) {
                boolean carries = ready.entries().stream().anyMatch(DriverOnLoopTest::isMarker);
                if (carries && id == leaderId.get()) {
                    // The leader's own synced write of the entry waits for a follower to have written it: the
                    // follower can only have it if the AppendEntries left before this call.
                    try {
                        seenByLeader.put(id, followerPersisted.await(10, TimeUnit.SECONDS));
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    heldLeader.set(Thread.currentThread().getName());
                } else if (carries) {
                    inner.persist(ready);
                    followerPersisted.countDown();
                    return;
                }
                inner.persist(ready);
            }
        })) {
            long leader = c.awaitLeader();
            leaderId.set(leader);
            // A follower still probing after the election gets nothing new until it answers, and the held leader
            // cannot read the answer: one committed write first puts a follower in the replicate state (§5.3).
            c.node(leader).propose("warm-up".getBytes(StandardCharsets.UTF_8), Duration.ofSeconds(20))
                    .get(20, TimeUnit.SECONDS);
            CompletableFuture<Long> write = c.node(leader).propose(MARKER.getBytes(StandardCharsets.UTF_8),
                    Duration.ofSeconds(20));
            // Checked before the write's outcome: a leader held for the whole 10 s loses its term, and that
            // failure would only hide this one.
            write.exceptionally(e -> null).get(20, TimeUnit.SECONDS);
            assertEquals(Boolean.TRUE, seenByLeader.get(leader),
                    "the follower had not written the entry while the leader's fsync of it was held: "
                            + "the AppendEntries waited for the end of the leader's turn");
            assertTrue(heldLeader.get().startsWith("raft-driver-"), "the leader persisted on its event loop, "
                    + "not on " + heldLeader.get());
            write.get(1, TimeUnit.SECONDS);
        }
    }

    private static boolean isMarker(Entry e) {
        return new String(e.data(), StandardCharsets.UTF_8).equals(MARKER);
    }
}
