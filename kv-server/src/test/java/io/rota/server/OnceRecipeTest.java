package io.rota.server;

import io.rota.client.RotaClient;
import io.rota.client.recipes.Once;
import io.rota.client.recipes.OnceOptions;
import io.rota.client.recipes.OnceRecord;
import io.rota.client.recipes.OnceState;
import io.rota.client.recipes.OnceStatus;
import io.rota.testkit.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Once-records against three in-JVM servers. */
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
}
