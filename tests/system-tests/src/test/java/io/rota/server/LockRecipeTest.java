package io.rota.server;

import io.rota.client.KeyValue;
import io.rota.client.Op;
import io.rota.client.RotaClient;
import io.rota.client.recipes.FenceGuard;
import io.rota.client.recipes.Fencing;
import io.rota.client.recipes.Lock;
import io.rota.client.recipes.LockHandle;
import io.rota.client.recipes.LockLostException;
import io.rota.client.recipes.LockOptions;
import io.rota.client.recipes.LockTimeoutException;
import io.rota.client.recipes.StaleTokenException;
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
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The Lock recipe against three in-JVM servers: exclusion, FIFO, fencing, safe-until, lock-delay. */
@Tag("cluster")
class LockRecipeTest {

    @RegisterExtension
    static final SharedCluster CLUSTER = new SharedCluster(Duration.ofSeconds(10));

    /** 2 s leases (the cluster's minimum with a 500 ms election timeout is 1 s). */
    static final LockOptions OPTIONS = LockOptions.defaults().withTtl(Duration.ofSeconds(2));
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

    static long queued(RotaClient rota, String name) {
        return rota.kv().getPrefix("rota/lock/" + name + "/").count();
    }

    /** Read by every critical section and written back one yield later: a second holder would lose updates. */
    private static int unguardedCounter;

    @Test
    @DisplayName("8 clients x 5 acquisitions: never two in the critical section, no lost update; tokens strictly increase")
    void mutualExclusionUnderContention() throws Exception {
        long seed = new Random().nextLong();
        Random random = new Random(seed);
        int clients = 8;
        int rounds = 5;
        unguardedCounter = 0;
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        List<Long> tokens = Collections.synchronizedList(new ArrayList<>());
        FenceGuard resource = new FenceGuard();
        List<RotaClient> rotas = new ArrayList<>();
        List<CompletableFuture<Void>> workers = new ArrayList<>();
        try {
            for (int c = 0; c < clients; c++) {
                RotaClient rota = client();
                rotas.add(rota);
                int yields = 1 + random.nextInt(50);
                workers.add(CompletableFuture.runAsync(() -> {
                    Lock lock = Lock.of(rota, "contended", OPTIONS);
                    for (int r = 0; r < rounds; r++) {
                        try (LockHandle held = lock.acquire(WAIT)) {
                            if (inside.incrementAndGet() != 1) {
                                overlaps.incrementAndGet();
                            }
                            tokens.add(held.fencingToken());
                            resource.check(held.fencingToken());
                            int read = unguardedCounter;
                            for (int y = 0; y < yields; y++) {
                                Thread.yield();
                            }
                            unguardedCounter = read + 1;
                            inside.decrementAndGet();
                        } catch (InterruptedException e) {
                            throw new IllegalStateException(e);
                        }
                    }
                }, pool));
            }
            CompletableFuture.allOf(workers.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
        } finally {
            rotas.forEach(RotaClient::close);
        }
        assertEquals(0, overlaps.get(), "two holders at once (seed " + seed + ")");
        assertEquals(clients * rounds, unguardedCounter, "lost updates (seed " + seed + ")");
        assertEquals(clients * rounds, tokens.size(), "seed " + seed);
        for (int i = 1; i < tokens.size(); i++) {
            assertTrue(tokens.get(i) > tokens.get(i - 1), "tokens not increasing: " + tokens + " (seed " + seed + ")");
        }
    }

    @Test
    @DisplayName("waiters get the lock in arrival order, and each release wakes exactly one waiter (no herd)")
    void fifoAndPredecessorOnlyWakeups() throws Exception {
        try (RotaClient rota = client()) {
            Lock lock = Lock.of(rota, "fifo", OPTIONS);
            LockHandle first = lock.acquire(WAIT);
            int waiters = 4;
            ConcurrentLinkedQueue<Integer> order = new ConcurrentLinkedQueue<>();
            List<CompletableFuture<Void>> all = new ArrayList<>();
            for (int w = 0; w < waiters; w++) {
                int me = w;
                all.add(CompletableFuture.runAsync(() -> {
                    try (LockHandle held = lock.acquire(WAIT)) {
                        order.add(me);
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                }, pool));
                long expected = w + 2;
                Await.until(WAIT, () -> queued(rota, "fifo") == expected, "waiter " + me + " queued");
            }
            assertEquals(0, lock.wakeups(), "nobody woke while the holder held");
            first.release();
            CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
            assertEquals(List.of(0, 1, 2, 3), List.copyOf(order));
            assertEquals(waiters, lock.wakeups(), "each waiter woke once, when its predecessor left");
        }
    }

    @Test
    @DisplayName("tryAcquire takes a free lock, refuses a held one without leaving a key; acquire timeout removes the waiter")
    void tryAcquireAndTimeout() throws Exception {
        try (RotaClient a = client(); RotaClient b = client()) {
            LockHandle held = Lock.of(a, "try", OPTIONS).tryAcquire().orElseThrow();
            assertTrue(held.isHeld());
            assertTrue(Lock.of(b, "try", OPTIONS).tryAcquire().isEmpty());
            assertEquals(1, queued(a, "try"));
            long start = System.nanoTime();
            assertThrows(LockTimeoutException.class, () -> Lock.of(b, "try", OPTIONS).acquire(Duration.ofMillis(300)));
            assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(300));
            assertEquals(1, queued(a, "try"), "the timed-out waiter's key is gone");
            assertEquals(held.key(), Lock.of(b, "try", OPTIONS).holder().orElseThrow().keyString());
            assertTrue(held.release());
            assertFalse(held.isHeld());
            LockHandle next = Lock.of(b, "try", OPTIONS).tryAcquire().orElseThrow();
            assertTrue(next.fencingToken() > held.fencingToken());
            next.release();
            assertEquals(0, queued(a, "try"));
        }
    }

    @Test
    @DisplayName("an interrupted waiter leaves the queue at once (its key is removed, not left to expire)")
    void interruptedWaiterLeaves() throws Exception {
        try (RotaClient a = client(); RotaClient b = client()) {
            LockHandle held = Lock.of(a, "interrupted", OPTIONS).acquire(WAIT);
            Future<LockHandle> waiter = pool.submit(() -> Lock.of(b, "interrupted", OPTIONS).acquire(WAIT));
            Await.until(WAIT, () -> queued(a, "interrupted") == 2, "the waiter queued");
            waiter.cancel(true);
            Await.until(Duration.ofMillis(1_500), () -> queued(a, "interrupted") == 1,
                    "the waiter's key removed well before its 2 s lease could expire");
            assertTrue(held.isHeld());
            held.release();
        }
    }

    @Test
    @DisplayName("revoked lease: the holder is told (onLost, isHeld false); its late release does not delete the next holder's key")
    void lostOnRevokeAndLateReleaseDeletesOnlyOwnKey() throws Exception {
        try (RotaClient a = client(); RotaClient b = client()) {
            LockHandle old = Lock.of(a, "revoked", OPTIONS).acquire(WAIT);
            AtomicReference<String> lost = new AtomicReference<>();
            old.onLost((h, reason) -> lost.set(reason));
            a.leases().revoke(old.leaseId());
            Await.until(WAIT, () -> lost.get() != null, "the lost notification");
            assertFalse(old.isHeld());
            // Issue 31: lost means lost at once — safe-until no longer runs on to the lease's old deadline.
            assertTrue(old.safeUntilNanos() - System.nanoTime() <= 0, "safe-until still ahead after the loss");
            assertEquals(Duration.ZERO, old.remaining());
            LockHandle next = Lock.of(b, "revoked", OPTIONS).acquire(WAIT);
            assertFalse(old.release(), "a late release must not delete anything");
            assertEquals(next.key(), Lock.of(b, "revoked", OPTIONS).holder().orElseThrow().keyString());
            assertTrue(next.isHeld());
            assertTrue(next.release());
        }
    }

    @Test
    @DisplayName("runGuarded's void form runs a void call while held; after the lease is revoked it refuses without running")
    void runGuardedVoidFormRunsWhileHeldAndRefusesOnceLost() throws Exception {
        try (RotaClient a = client()) {
            LockHandle held = Lock.of(a, "void-form", OPTIONS).acquire(WAIT);
            AtomicLong sentWith = new AtomicLong();
            held.runGuarded(() -> sentWith.set(held.fencingToken()));   // AtomicLong.set is void: the Runnable form
            assertEquals(held.fencingToken(), sentWith.get());
            AtomicReference<String> lost = new AtomicReference<>();
            held.onLost((h, reason) -> lost.set(reason));
            a.leases().revoke(held.leaseId());
            Await.until(WAIT, () -> lost.get() != null, "the lost notification");
            AtomicInteger ranAfterLoss = new AtomicInteger();
            assertThrows(LockLostException.class, () -> held.runGuarded(() -> ranAfterLoss.set(1)));
            assertEquals(0, ranAfterLoss.get(), "a lost lock must not run the task");
        }
    }

    @Test
    @DisplayName("a paused holder: its task is interrupted at safe-until, before the next holder gets in; its late writes are fenced")
    void pausedHolderIsFencedAndCancelledBeforeSafeUntil() throws Exception {
        FenceGuard resource = new FenceGuard();
        RotaClient paused = client();
        try (RotaClient b = client(); RotaClient woke = client()) {
            LockHandle old = Lock.of(paused, "paused", OPTIONS).acquire(WAIT);
            resource.check(old.fencingToken());
            long safeUntil = old.safeUntilNanos();
            assertTrue(safeUntil - System.nanoTime() <= Duration.ofSeconds(2).toNanos(), "safe-until within the TTL");
            AtomicLong interruptedAt = new AtomicLong();
            AtomicReference<String> lost = new AtomicReference<>();
            old.onLost((h, reason) -> lost.set(reason));
            CountDownLatch never = new CountDownLatch(1);
            CompletableFuture<Exception> task = CompletableFuture.supplyAsync(() -> {
                try {
                    old.runGuarded(() -> {
                        try {
                            never.await();
                        } catch (InterruptedException e) {
                            interruptedAt.set(System.nanoTime());
                            throw e;
                        }
                        return null;
                    });
                    return null;
                } catch (Exception e) {
                    return e;
                }
            }, pool);
            // The pause: keep-alives stop (and the holder never releases), its task keeps running.
            paused.close();
            LockHandle next = Lock.of(b, "paused", OPTIONS).acquire(WAIT);
            long acquiredAt = System.nanoTime();
            Exception ended = task.get(10, TimeUnit.SECONDS);
            assertTrue(ended instanceof LockLostException, "task ended with " + ended);
            assertTrue(interruptedAt.get() != 0 && interruptedAt.get() - acquiredAt < 0,
                    "the old task was interrupted before the next holder acquired");
            assertTrue(lost.get() != null && lost.get().contains("safe-until"), "lost: " + lost.get());
            assertFalse(old.isHeld());
            assertTrue(next.fencingToken() > old.fencingToken());
            resource.check(next.fencingToken());
            // The old holder wakes up and writes late: both fences reject it.
            assertFalse(resource.admit(old.fencingToken()));
            assertThrows(StaleTokenException.class, () -> resource.check(old.fencingToken()));
            assertFalse(Fencing.guard(woke.kv().txn(), old.key(), old.fencingToken())
                    .then(Op.put("paused/report", "stale")).commit().succeeded());
            assertTrue(woke.kv().get("paused/report").kvs().isEmpty());
            assertTrue(next.guardedTxn().then(Op.put("paused/report", "fresh")).commit().succeeded());
            assertEquals("fresh", woke.kv().get("paused/report").first().map(KeyValue::valueString).orElseThrow());
            next.release();
        } finally {
            paused.close();
        }
    }

    @Test
    @DisplayName("safe-until stays ahead while keep-alives run and is before the lease's earliest expiry")
    void safeUntilAdvancesWithKeepAlives() throws Exception {
        try (RotaClient rota = client()) {
            LockHandle held = Lock.of(rota, "safe", OPTIONS).acquire(WAIT);
            long first = held.safeUntilNanos();
            long ttl = held.remaining().toNanos();
            assertTrue(ttl > 0 && ttl < Duration.ofSeconds(2).toNanos() - Duration.ofMillis(200).toNanos(),
                    "margin of 10% TTL + 2 x drift is taken off: " + held.remaining());
            Await.until(WAIT, () -> held.safeUntilNanos() - first > Duration.ofMillis(300).toNanos(),
                    "a keep-alive confirmed later moves safe-until forward");
            assertTrue(held.isHeld());
            held.release();
        }
    }

    @Test
    @DisplayName("lock-delay: after an expired holder the next waits at least the delay; after a clean release it does not")
    void lockDelayOnlyAfterExpiry() throws Exception {
        Duration delay = Duration.ofMillis(1_500);
        LockOptions withDelay = OPTIONS.withLockDelay(delay);
        RotaClient dying = client();
        try (RotaClient b = client(); RotaClient observer = client()) {
            LockHandle old = Lock.of(dying, "delayed", withDelay).acquire(WAIT);
            AtomicLong deletedAt = new AtomicLong();
            try (var w = observer.watches().watch(old.key(), 0, e -> deletedAt.compareAndSet(0, System.nanoTime()))) {
                dying.close();   // expires, never released
                LockHandle next = Lock.of(b, "delayed", withDelay).acquire(WAIT);
                long acquiredAt = System.nanoTime();
                assertTrue(deletedAt.get() != 0, "the old key was deleted by its lease's expiry");
                long waited = acquiredAt - deletedAt.get();
                assertTrue(waited >= delay.minusMillis(100).toNanos(),
                        "waited only " + TimeUnit.NANOSECONDS.toMillis(waited) + " ms after the expiry");
                next.release();
            }
            long start = System.nanoTime();
            Optional<LockHandle> clean = Lock.of(b, "delayed", withDelay).tryAcquire();
            assertTrue(clean.isPresent());
            assertTrue(System.nanoTime() - start < delay.toNanos(), "no delay after a clean release");
            clean.get().release();
        } finally {
            dying.close();
        }
    }

    // Issue 11, hole 6: the holder's watch resumed from its token after the history moved on, got COMPACTED
    // and reported a loss although the key was still the holder's.
    @Test
    @DisplayName("a holder whose watch reconnects after more than 10,000 other writes keeps its lock (no false loss)")
    void holderKeepsTheLockAcrossAReconnectAfterTheHistoryWasCompacted() throws Exception {
        try (TestCluster cluster = new TestCluster(dir, 3, Duration.ofSeconds(10))) {
            cluster.awaitLeader();
            try (RotaClient holder = RotaClient.connect(cluster.endpoints());
                 RotaClient writer = RotaClient.connect(cluster.endpoints())) {
                LockHandle held = Lock.of(holder, "compacted", LockOptions.defaults()).acquire(WAIT);
                AtomicReference<String> lost = new AtomicReference<>();
                held.onLost((h, reason) -> lost.set(reason));
                int[] watching = {-1};
                Await.until(WAIT, () -> {
                    for (int i = 0; i < 3; i++) {
                        if (cluster.liveWatches(i) == 1) {
                            watching[0] = i;
                        }
                    }
                    return watching[0] >= 0;
                }, "the holder's watch on its own key");
                TestCluster.outgrowTheHistory(writer, "filler/");

                // The member the watch streams from goes away: the watch resumes on another one, behind the history.
                cluster.stop(watching[0]);
                Await.until(WAIT, () -> lost.get() != null || watchesOnLiveMembers(cluster, watching[0]) == 1,
                        "the holder's watch back on a live member");
                assertNull(lost.get(), "the holder was told it lost a lock it still holds");
                assertTrue(held.isHeld());
                assertEquals(held.key(), Lock.of(writer, "compacted", OPTIONS).holder().orElseThrow().keyString());

                // The resumed watch still reports a real loss.
                writer.leases().revoke(held.leaseId());
                Await.until(WAIT, () -> lost.get() != null, "the loss after the revoke");
                assertTrue(lost.get().contains("deleted"), lost.get());
                assertFalse(held.release());
            }
        }
    }

    private static long watchesOnLiveMembers(TestCluster cluster, int stopped) {
        long n = 0;
        for (int i = 0; i < 3; i++) {
            n += i == stopped ? 0 : cluster.liveWatches(i);
        }
        return n;
    }

    // Issue 11, hole 6: onLost listeners ran inline on the recipes' one timer thread, so a slow listener held
    // back every other lock's safe-until.
    @Test
    @DisplayName("a slow onLost listener of one lock does not delay another lock's loss at its safe-until")
    void aSlowOnLostListenerDoesNotDelayAnotherLocksSafeUntil() throws Exception {
        RotaClient a = client();
        RotaClient b = client();
        CountDownLatch release = new CountDownLatch(1);
        try {
            LockHandle slow = Lock.of(a, "slow-listener-a", OPTIONS).acquire(WAIT);
            LockHandle other = Lock.of(b, "slow-listener-b", OPTIONS).acquire(WAIT);
            CountDownLatch slowTold = new CountDownLatch(1);
            slow.onLost((h, reason) -> {
                slowTold.countDown();
                try {
                    release.await();   // a listener that blocks (a slow shutdown, a stuck log appender)
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            AtomicLong otherToldAt = new AtomicLong();
            other.onLost((h, reason) -> otherToldAt.set(System.nanoTime()));
            a.close();   // keep-alives stop: the first lock is lost at its safe-until, its listener blocks
            assertTrue(slowTold.await(WAIT.toSeconds(), TimeUnit.SECONDS), "the first lock's listener was told");
            b.close();
            long safeUntil = other.safeUntilNanos();
            Await.until(Duration.ofNanos(Math.max(0, safeUntil - System.nanoTime())).plusSeconds(1),
                    () -> otherToldAt.get() != 0, "the second lock's onLost within 1 s of its safe-until");
            assertFalse(other.isHeld());
        } finally {
            release.countDown();
            a.close();
            b.close();
        }
    }
}
