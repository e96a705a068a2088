package io.rota.server;

import io.rota.client.Op;
import io.rota.client.RotaClient;
import io.rota.client.recipes.FenceGuard;
import io.rota.client.recipes.LockLostException;
import io.rota.client.recipes.Once;
import io.rota.client.recipes.OnceOptions;
import io.rota.client.recipes.OnceRecord;
import io.rota.client.recipes.OnceState;
import io.rota.client.recipes.OnceStatus;
import io.rota.client.recipes.StaleTokenException;
import io.rota.testkit.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Once-records against three in-JVM servers. */
@Tag("cluster")
class OnceRecipeTest {

    @RegisterExtension
    static final SharedCluster CLUSTER = new SharedCluster(Duration.ofSeconds(10));

    static final OnceOptions OPTIONS = OnceOptions.defaults().withClaimTtl(Duration.ofSeconds(2));
    static final Duration WAIT = Duration.ofSeconds(30);

    /** Threads for the concurrent contenders (the common pool has one thread on two cores). */
    private final ExecutorService pool = Executors.newCachedThreadPool();

    @AfterEach
    void stopThreads() {
        pool.shutdownNow();
    }

    static RotaClient client() {
        return CLUSTER.connect();
    }

    @Test
    @DisplayName("six concurrent claimers: exactly one wins; DONE is never claimed again")
    void firstClaimWinsAndDoneIsNeverRerun() throws Exception {
        int claimers = 6;
        List<RotaClient> rotas = new ArrayList<>();
        List<CompletableFuture<Boolean>> claims = new ArrayList<>();
        List<OnceRecord> records = new ArrayList<>();
        CountDownLatch go = new CountDownLatch(1);
        try {
            for (int i = 0; i < claimers; i++) {
                RotaClient rota = client();
                rotas.add(rota);
                OnceRecord r = Once.of(rota, OPTIONS.withOwner("claimer-" + i)).record("reminder/day-1/user-42");
                records.add(r);
                claims.add(CompletableFuture.supplyAsync(() -> {
                    try {
                        go.await();
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                    return r.claim();
                }, pool));
            }
            go.countDown();
            int winner = -1;
            for (int i = 0; i < claimers; i++) {
                if (claims.get(i).get(30, TimeUnit.SECONDS)) {
                    assertEquals(-1, winner, "two claimers won");
                    winner = i;
                }
            }
            assertTrue(winner >= 0, "nobody won");
            OnceStatus claimed = records.get(0).status().orElseThrow();
            assertEquals(OnceState.CLAIMED, claimed.state());
            assertEquals("claimer-" + winner, claimed.owner());
            assertTrue(records.get(winner).complete("sent"));
            OnceStatus done = records.get(0).status().orElseThrow();
            assertEquals(OnceState.DONE, done.state());
            assertEquals("sent", done.result());
            for (int i = 0; i < claimers; i++) {
                assertFalse(records.get(i).claim(), "DONE must not be claimed again");
            }
        } finally {
            rotas.forEach(RotaClient::close);
        }
    }

    @Test
    @DisplayName("a dead claimer's record is free again once its lease expires; its late complete does not apply")
    void deadClaimerIsTakenOver() {
        RotaClient dying = client();
        try (RotaClient other = client()) {
            OnceRecord first = Once.of(dying, OPTIONS).record("takeover");
            assertTrue(first.claim());
            OnceRecord second = Once.of(other, OPTIONS).record("takeover");
            assertFalse(second.claim());
            dying.close();   // dies mid-work: never completes, never releases
            Await.until(WAIT, second::claim, "the record is claimable after the dead claimer's lease expired");
            assertTrue(second.complete("done by the second"));
            assertEquals("done by the second", Once.of(other, OPTIONS).status("takeover").orElseThrow().result());
        } finally {
            dying.close();
        }
    }

    @Test
    @DisplayName("FAILED is final by default and claimable again with retryFailed; closing an unfinished claim frees it")
    void failedSemanticsAndGivingUp() {
        try (RotaClient rota = client()) {
            OnceRecord r = Once.of(rota, OPTIONS).record("flaky");
            assertTrue(r.claim());
            assertTrue(r.fail("smtp timeout"));
            OnceStatus failed = r.status().orElseThrow();
            assertEquals(OnceState.FAILED, failed.state());
            assertEquals("smtp timeout", failed.result());
            assertFalse(Once.of(rota, OPTIONS).record("flaky").claim(), "FAILED is not retried by default");
            OnceRecord retry = Once.of(rota, OPTIONS.withRetryFailed(true)).record("flaky");
            assertTrue(retry.claim());
            assertTrue(retry.complete("sent on retry"));
            assertEquals(OnceState.DONE, r.status().orElseThrow().state());
            assertThrows(IllegalStateException.class, () -> r.complete("not claimed"));

            OnceRecord abandoned = Once.of(rota, OPTIONS).record("given-up");
            assertTrue(abandoned.claim());
            abandoned.close();
            assertTrue(abandoned.status().isEmpty());
            try (OnceRecord again = Once.of(rota, OPTIONS).record("given-up")) {
                assertTrue(again.claim(), "a given-up claim is free at once");
                assertTrue(again.complete("ok"));
            }
        }
    }

    @Test
    @DisplayName("completed records vanish after their retention")
    void completedRecordsExpire() {
        try (RotaClient rota = client()) {
            Once once = Once.of(rota, OPTIONS.withRetention(Duration.ofSeconds(2)));
            OnceRecord r = once.record("short-lived");
            assertTrue(r.claim());
            assertTrue(r.complete("ok"));
            assertEquals(OnceState.DONE, once.status("short-lived").orElseThrow().state());
            Await.until(WAIT, () -> once.status("short-lived").isEmpty(), "the DONE record expired");
            OnceRecord forever = Once.of(rota, OPTIONS.withRetention(Duration.ZERO)).record("kept");
            assertTrue(forever.claim());
            assertTrue(forever.complete("ok"));
            assertEquals(0, rota.kv().get("rota/once/kept").first().orElseThrow().lease());
        }
    }

    // Issue 31, item 3: a paused claimer resumed unstopped and unfenced; the work ran twice.
    @Test
    @DisplayName("a claimer whose lease ended is lost at once; the next claimer's higher token fences its late writes")
    void aPausedClaimerIsFencedByTheNextClaimersToken() throws Exception {
        try (RotaClient paused = client(); RotaClient next = client()) {
            OnceRecord a = Once.of(paused, OPTIONS.withOwner("a")).record("fenced/report");
            assertTrue(a.claim());
            long tokenA = a.fencingToken();
            assertTrue(a.isHeld());
            CountDownLatch working = new CountDownLatch(1);
            CompletableFuture<Object> work = CompletableFuture.supplyAsync(() -> {
                try {
                    return a.runGuarded(() -> {
                        working.countDown();
                        new CountDownLatch(1).await();   // works until interrupted
                        return null;
                    });
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }, pool);
            assertTrue(working.await(30, TimeUnit.SECONDS));

            // The pause, as the cluster sees it: A's lease ends while A does not know yet.
            paused.leases().revoke(paused.kv().get("rota/once/fenced/report").first().orElseThrow().lease());
            Await.until(WAIT, () -> a.lostReason() != null, "A learns its claim is gone");
            assertFalse(a.isHeld(), "lost means lost at once");
            assertTrue(a.safeUntilNanos() - System.nanoTime() <= 0, "safe-until ends where the loss was learnt");
            ExecutionException stopped = assertThrows(ExecutionException.class, () -> work.get(30, TimeUnit.SECONDS));
            assertInstanceOf(LockLostException.class, stopped.getCause().getCause(), "A's guarded work was interrupted");

            OnceRecord b = Once.of(next, OPTIONS.withOwner("b")).record("fenced/report");
            assertTrue(b.claim());
            assertTrue(b.fencingToken() > tokenA, "every later claim has a higher token");
            FenceGuard resource = new FenceGuard();
            resource.check(b.fencingToken());
            assertThrows(StaleTokenException.class, () -> resource.check(tokenA), "A's fenced write is refused");
            assertTrue(b.guardedTxn().then(Op.put("fenced/report/out", "by b")).commit().succeeded());

            assertFalse(a.complete("sent by a"), "A's complete does not apply: the record is B's");
            assertEquals(OnceState.CLAIMED, b.status().orElseThrow().state(), "not marked done by A");
            assertEquals("b", b.status().orElseThrow().owner());
            assertTrue(b.complete("sent by b"));
            assertEquals("sent by b", b.status().orElseThrow().result());
            assertEquals("by b", next.kv().get("fenced/report/out").first().orElseThrow().valueString());
        }
    }

    // Issue 31, item 3: one rule for an interrupt, in the SDK as in rotactl.
    @Test
    @DisplayName("an interrupted claimer's close() releases the claim at once and keeps the interrupt")
    void anInterruptReleasesTheClaim() {
        try (RotaClient rota = client()) {
            OnceRecord r = Once.of(rota, OPTIONS).record("interrupted/job");
            assertTrue(r.claim());
            Thread.currentThread().interrupt();   // the caller stops the work
            try {
                assertDoesNotThrow(r::close, "the release runs on an interrupted thread");
                assertTrue(Thread.currentThread().isInterrupted(), "the interrupt is kept");
            } finally {
                Thread.interrupted();
            }
            assertTrue(r.status().isEmpty(), "released, not failed: the next claim runs the work again");
            try (OnceRecord again = Once.of(rota, OPTIONS).record("interrupted/job")) {
                assertTrue(again.claim());
            }
        }
    }

    @Test
    @DisplayName("reset deletes a FAILED or DONE record so it runs again, and refuses while it is claimed")
    void resetIsADeliberateRetry() {
        try (RotaClient rota = client()) {
            Once once = Once.of(rota, OPTIONS);
            assertTrue(once.reset("reset/none").isEmpty());
            OnceRecord r = once.record("reset/job");
            assertTrue(r.claim());
            assertThrows(IllegalStateException.class, () -> once.reset("reset/job"), "in progress: not reset");
            assertTrue(r.fail("smtp timeout"));
            assertFalse(once.record("reset/job").claim());
            assertEquals("smtp timeout", once.reset("reset/job").orElseThrow().result());
            assertTrue(once.status("reset/job").isEmpty());
            try (OnceRecord again = once.record("reset/job")) {
                assertTrue(again.claim(), "runs again after the reset");
                assertTrue(again.complete("ok"));
            }
        }
    }

    // Issue 31, item 3: retention was bucketed by each client's wall clock, so a client whose clock ran ahead left
    // bucket leases that a later client took for its records with only seconds left.
    @Test
    @DisplayName("a completed record's lease has its whole retention left, whatever retention lease others left behind")
    void retentionIsCountedByTheClusterNotAWallClock() {
        Duration retention = Duration.ofSeconds(48);
        try (RotaClient rota = client()) {
            // What a client whose clock ran ahead left: short-lived leases named as current (old and new names).
            long shortLease = rota.leases().grant(Duration.ofSeconds(4)).id();
            long bucketMs = retention.toMillis() / 24;
            long bucket = System.currentTimeMillis() / bucketMs;
            for (long b = bucket; b < bucket + 10; b++) {
                rota.kv().put("rota/once.retention/" + b, Long.toHexString(shortLease), shortLease);
            }
            rota.kv().put("rota/once.retention/" + retention.toMillis() + "ms", Long.toHexString(shortLease), shortLease);

            OnceRecord r = Once.of(rota, OPTIONS.withRetention(retention)).record("retention/job");
            assertTrue(r.claim());
            assertTrue(r.complete("ok"));
            long lease = rota.kv().get("rota/once/retention/job").first().orElseThrow().lease();
            Duration left = rota.leases().timeToLive(lease, false).remaining();
            assertTrue(left.compareTo(retention.minusSeconds(2)) >= 0, "the record is kept its retention: " + left);
            assertTrue(left.compareTo(retention.plusSeconds(3)) <= 0, "and at most one bucket more: " + left);
        }
    }
}
