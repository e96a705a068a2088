package io.rota.server;

import io.rota.client.RotaClient;
import io.rota.client.RotaException;
import io.rota.client.Watch;
import io.rota.client.recipes.Election;
import io.rota.client.recipes.ElectionListener;
import io.rota.client.recipes.Leader;
import io.rota.client.recipes.LockLostException;
import io.rota.client.recipes.LockOptions;
import io.rota.testkit.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The Election recipe against three in-JVM servers. */
@Tag("cluster")
class ElectionRecipeTest {

    @RegisterExtension
    static final SharedCluster CLUSTER = new SharedCluster(Duration.ofSeconds(10));

    static final LockOptions OPTIONS = LockOptions.defaults().withPrefix("rota/election").withTtl(Duration.ofSeconds(2));
    static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path dir;

    /** Threads for the concurrent contenders (the common pool has one thread on two cores). */
    private final ExecutorService pool = Executors.newCachedThreadPool();

    @AfterEach
    void stopThreads() {
        pool.shutdownNow();
    }

    static RotaClient client() {
        return CLUSTER.connect();
    }

    /** Records what an observer saw. */
    static List<Optional<Leader>> observe(Election e, List<Watch> watches) {
        List<Optional<Leader>> seen = new CopyOnWriteArrayList<>();
        watches.add(e.observe(seen::add));
        return seen;
    }

    @Test
    @DisplayName("issue 31: resign() does not wait for a campaign whose join is still on its way; that campaign then withdraws")
    void resignDoesNotWaitForAJoiningCampaign() throws Exception {
        TestCluster cluster = CLUSTER.get();
        int leader = cluster.awaitLeader();
        try (RotaClient a = client()) {
            Election election = Election.of(a, "joining", OPTIONS);
            for (int i = 0; i < 3; i++) {
                if (i != leader) {
                    cluster.stop(i);   // no quorum: the join waits until the client gives up on it
                }
            }
            CompletableFuture<Object> campaign = new CompletableFuture<>();
            Thread campaigner = new Thread(() -> {
                try {
                    campaign.complete(election.campaign("a"));
                } catch (Throwable e) {
                    campaign.complete(e);
                }
            }, "campaign");
            try {
                campaigner.start();
                Await.until(WAIT, () -> joining(campaigner), "the campaign is joining the queue");
                election.resign();
                // Before issue 31, resign() waited on the monitor the joining campaign held until its call ended.
                assertTrue(joining(campaigner) && !campaign.isDone(), "resign returned while the join was on its way");
            } finally {
                cluster.startStopped();
            }
            Object ended = campaign.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            assertTrue(ended instanceof LockLostException || ended instanceof RotaException,
                    "the resigned campaign is not elected: " + ended);
            Await.until(WAIT, () -> a.kv().getPrefix("rota/election/joining/").count() == 0,
                    "the key its join put is withdrawn");
        } finally {
            cluster.startStopped();
            cluster.awaitLeader();
        }
    }

    private static boolean joining(Thread campaign) {
        return Arrays.stream(campaign.getStackTrace()).anyMatch(f -> f.getClassName().endsWith(".Contender")
                && f.getMethodName().equals("enter"));
    }

    @Test
    @DisplayName("three candidates: one leader at a time, resign hands over in campaign order, observe sees it in order")
    void resignHandsOverInOrderAndObserveFollows() throws Exception {
        List<RotaClient> rotas = new ArrayList<>();
        List<Watch> watches = new ArrayList<>();
        try (RotaClient watcher = client()) {
            List<Optional<Leader>> seen = observe(Election.of(watcher, "ordered", OPTIONS), watches);
            List<Election> candidates = new ArrayList<>();
            List<CompletableFuture<Leader>> campaigns = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                RotaClient rota = client();
                rotas.add(rota);
                Election e = Election.of(rota, "ordered", OPTIONS);
                candidates.add(e);
                String value = "candidate-" + i;
                campaigns.add(CompletableFuture.supplyAsync(() -> {
                    try {
                        return e.campaign(value);
                    } catch (InterruptedException ex) {
                        throw new IllegalStateException(ex);
                    }
                }, pool));
                int queued = i + 1;
                Await.until(WAIT, () -> watcher.kv().getPrefix("rota/election/ordered/").count() == queued,
                        "candidate " + queued + " queued");
            }
            List<Long> epochs = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                Leader leader = campaigns.get(i).get(30, TimeUnit.SECONDS);
                assertEquals("candidate-" + i, leader.value());
                assertTrue(candidates.get(i).isLeader());
                for (int j = i + 1; j < 3; j++) {
                    assertFalse(candidates.get(j).isLeader(), "two leaders at once");
                    assertFalse(campaigns.get(j).isDone());
                }
                assertEquals(leader.key(), candidates.get(i).leader().orElseThrow().key());
                epochs.add(candidates.get(i).epoch());
                candidates.get(i).resign();
                assertFalse(candidates.get(i).isLeader());
            }
            assertTrue(epochs.get(0) < epochs.get(1) && epochs.get(1) < epochs.get(2), "epochs grow: " + epochs);
            Await.until(WAIT, () -> seen.size() == 5, "observer saw none, 3 leaders, none: " + seen);
            assertEquals(Optional.empty(), seen.get(0));
            for (int i = 0; i < 3; i++) {
                assertEquals("candidate-" + i, seen.get(i + 1).orElseThrow().value());
                assertEquals(epochs.get(i), seen.get(i + 1).orElseThrow().epoch());
            }
            assertEquals(Optional.empty(), seen.get(4));
        } finally {
            watches.forEach(Watch::close);
            rotas.forEach(RotaClient::close);
        }
    }

    @Test
    @DisplayName("a leader whose client dies (no resign) is replaced after its lease expires; gained/lost listeners fire")
    void failoverWhenTheLeaderDies() throws Exception {
        RotaClient dying = client();
        List<Watch> watches = new ArrayList<>();
        try (RotaClient other = client(); RotaClient watcher = client()) {
            List<Optional<Leader>> seen = observe(Election.of(watcher, "failover", OPTIONS), watches);
            AtomicReference<String> lostReason = new AtomicReference<>();
            AtomicReference<Leader> gained = new AtomicReference<>();
            Election first = Election.of(dying, "failover", OPTIONS).addListener(new ElectionListener() {
                @Override
                public void gained(Leader leader) {
                }

                @Override
                public void lost(String reason) {
                    lostReason.set(reason);
                }
            });
            Leader old = first.campaign("old");
            Election second = Election.of(other, "failover", OPTIONS).addListener(new ElectionListener() {
                @Override
                public void gained(Leader leader) {
                    gained.set(leader);
                }

                @Override
                public void lost(String reason) {
                }
            });
            first.proclaim("old-v2");
            Await.until(WAIT, () -> seen.stream().anyMatch(l -> l.isPresent() && l.get().value().equals("old-v2")),
                    "the proclaimed value observed");
            CompletableFuture<Leader> campaign = CompletableFuture.supplyAsync(() -> {
                try {
                    return second.campaign("new");
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            }, pool);
            dying.close();
            Leader now = campaign.get(30, TimeUnit.SECONDS);
            assertTrue(now.epoch() > old.epoch());
            assertEquals(now, gained.get());
            Await.until(WAIT, () -> lostReason.get() != null, "the old leader is told it lost");
            assertFalse(first.isLeader());
            assertThrows(LockLostException.class, () -> first.proclaim("stale"));
            Await.until(WAIT, () -> seen.get(seen.size() - 1).map(l -> l.value().equals("new")).orElse(false),
                    "the observer sees the new leader: " + seen);
            long epoch = 0;
            for (Optional<Leader> l : seen) {
                if (l.isPresent()) {
                    assertTrue(l.get().epoch() >= epoch, "epochs never go back: " + seen);
                    epoch = l.get().epoch();
                }
            }
            second.resign();
        } finally {
            watches.forEach(Watch::close);
            dying.close();
        }
    }

    private CompletableFuture<Leader> campaignAsync(Election e, String value) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return e.campaign(value);
            } catch (InterruptedException ex) {
                throw new IllegalStateException(ex);
            }
        }, pool);
    }

    // Issue 11, hole 6: resign() from another thread withdrew the key but left campaign() waiting forever.
    @Test
    @DisplayName("resign() from another thread ends a campaign that is still waiting, at once")
    void campaignWakesUpWhenResignIsCalledFromAnotherThread() throws Exception {
        try (RotaClient leading = client(); RotaClient waiting = client()) {
            Election leader = Election.of(leading, "withdrawn", OPTIONS);
            leader.campaign("leader");
            Election candidate = Election.of(waiting, "withdrawn", OPTIONS);
            CompletableFuture<Leader> campaign = campaignAsync(candidate, "candidate");
            Await.until(WAIT, () -> waiting.kv().getPrefix("rota/election/withdrawn/").count() == 2, "the candidate queued");
            candidate.resign();
            ExecutionException ended = assertThrows(ExecutionException.class, () -> campaign.get(5, TimeUnit.SECONDS));
            assertTrue(ended.getCause() instanceof LockLostException, "ended with " + ended.getCause());
            assertFalse(candidate.isLeader());
            assertEquals(1, waiting.kv().getPrefix("rota/election/withdrawn/").count(), "the candidate's key is gone");
            leader.resign();
        }
    }

    // Issue 11, hole 6: closing the client under a waiting campaign() left it waiting forever.
    @Test
    @DisplayName("closing the client ends a waiting campaign, and close() returns")
    void campaignEndsAndCloseReturnsWhenTheClientIsClosed() throws Exception {
        try (RotaClient leading = client()) {
            Election leader = Election.of(leading, "closed", OPTIONS);
            leader.campaign("leader");
            RotaClient waiting = client();
            Election candidate = Election.of(waiting, "closed", OPTIONS);
            CompletableFuture<Leader> campaign = campaignAsync(candidate, "candidate");
            Await.until(WAIT, () -> leading.kv().getPrefix("rota/election/closed/").count() == 2, "the candidate queued");
            CompletableFuture<Void> closed = CompletableFuture.runAsync(waiting::close, pool);
            closed.get(10, TimeUnit.SECONDS);
            ExecutionException ended = assertThrows(ExecutionException.class, () -> campaign.get(5, TimeUnit.SECONDS));
            assertFalse(ended.getCause() instanceof TimeoutException, "ended with " + ended.getCause());
            assertTrue(leader.isLeader());
            leader.resign();
        }
    }

    // Issue 11, hole 6: observe() ended for good on its first error (here COMPACTED after a reconnect).
    @Test
    @DisplayName("observe keeps following the leader after its watch fell behind the history and was COMPACTED")
    void observeResumesAfterTheHistoryWasCompacted() throws Exception {
        try (TestCluster cluster = new TestCluster(dir, 3, Duration.ofSeconds(10))) {
            cluster.awaitLeader();
            try (RotaClient watcher = RotaClient.connect(cluster.endpoints());
                 RotaClient rota = RotaClient.connect(cluster.endpoints())) {
                List<Optional<Leader>> seen = new CopyOnWriteArrayList<>();
                try (Watch w = Election.of(watcher, "resumed", OPTIONS).observe(seen::add)) {
                    Await.until(WAIT, () -> w.endpoint() != null && seen.size() == 1, "observing");
                    String endpoint = w.endpoint();
                    TestCluster.outgrowTheHistory(rota, "filler/");
                    for (int i = 0; i < 3; i++) {
                        if (cluster.endpoint(i).equals(endpoint)) {
                            cluster.stop(i);   // the observer's watch resumes elsewhere, behind the history
                        }
                    }
                    Election candidate = Election.of(rota, "resumed", OPTIONS);
                    Leader elected = candidate.campaign("after-compaction");
                    Await.until(WAIT, () -> seen.stream().anyMatch(l -> l.equals(Optional.of(elected))),
                            "the observer sees the leader elected after the compaction: " + seen);
                    assertTrue(w.isActive());
                    candidate.resign();
                    Await.until(WAIT, () -> seen.get(seen.size() - 1).isEmpty(), "then nobody: " + seen);
                }
            }
        }
    }
}
