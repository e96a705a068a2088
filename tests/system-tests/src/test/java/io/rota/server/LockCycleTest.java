package io.rota.server;

import io.rota.client.RotaClient;
import io.rota.client.SessionLease;
import io.rota.client.recipes.Lock;
import io.rota.client.recipes.LockHandle;
import io.rota.client.recipes.LockLostException;
import io.rota.client.recipes.LockOptions;
import io.rota.client.recipes.LockTimeoutException;
import io.rota.testkit.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What a lock cycle costs and how a lock is handed over (docs/locks.md "What a cycle costs", design.md
 * L1–L4), against three in-JVM servers: the writes per cycle counted as store revisions, the shared session
 * lease, hand-over by the predecessor's deletion event, and when the queue is still read again.
 */
@Tag("cluster")
class LockCycleTest {

    @RegisterExtension
    static final SharedCluster CLUSTER = new SharedCluster(Duration.ofSeconds(10));

    static final LockOptions OPTIONS = LockOptions.defaults().withTtl(Duration.ofSeconds(2));
    static final Duration WAIT = Duration.ofSeconds(30);

    private final ExecutorService pool = Executors.newCachedThreadPool();

    @AfterEach
    void stopThreads() {
        pool.shutdownNow();
    }

    static long revision(RotaClient rota) {
        return rota.kv().get("lock-cycle-test/probe").revision();
    }

    static long queued(RotaClient rota, String name) {
        return rota.kv().getPrefix("rota/lock/" + name + "/").count();
    }

    @Test
    @DisplayName("an uncontended cycle is two writes: the join txn and the compare-and-delete release; no key is left")
    void anUncontendedCycleIsTwoWrites() throws Exception {
        try (RotaClient a = CLUSTER.connect()) {
            Lock lock = Lock.of(a, "two-writes", OPTIONS);
            lock.acquire(WAIT).release();   // the first cycle also grants the session lease (not a revision)
            long before = revision(a);
            LockHandle held = lock.acquire(WAIT);
            assertEquals(before + 1, revision(a), "acquire: one revision (the join txn)");
            assertEquals(before + 1, held.fencingToken(), "the token is the join txn's revision");
            assertEquals(0, a.kv().getPrefix("rota/lock.holder/two-writes").count(), "no lock-delay: no holder record");
            assertTrue(held.release());
            assertEquals(before + 2, revision(a), "release: one revision (the compare-and-delete txn)");
            assertEquals(0, queued(a, "two-writes"));
            assertTrue(a.leases().list().contains(held.leaseId()), "the session lease outlives the release (no revoke)");
        }
    }

    @Test
    @DisplayName("issue 31: per-entity locks leave no key behind once released, with a lock-delay or without (a two-write cycle still)")
    void releasedLocksLeaveNoKeyBehind() throws Exception {
        try (RotaClient a = CLUSTER.connect()) {
            for (LockOptions options : List.of(OPTIONS, OPTIONS.withLockDelay(Duration.ofSeconds(1)))) {
                for (int order = 0; order < 20; order++) {
                    Lock.of(a, "order-" + order, options).acquire(WAIT).release();
                }
                Lock lock = Lock.of(a, "order-0", options);
                long before = revision(a);
                LockHandle held = lock.acquire(WAIT);
                assertTrue(held.release());
                assertEquals(before + 2, revision(a), "a cycle is still two writes");
                assertEquals(0, a.kv().getPrefix("rota/lock/order-").count(), "no contender key left");
                assertEquals(0, a.kv().getPrefix("rota/lock.holder/order-").count(), "no holder record left, lock-delay " + options.lockDelay());
            }
        }
    }

    @Test
    @DisplayName("cycles leave no watch behind on the members, however fast: a watch closed before its creation was"
            + " confirmed is canceled all the same")
    void cyclesLeaveNoWatchBehind() throws Exception {
        try (RotaClient a = CLUSTER.connect()) {
            Lock lock = Lock.of(a, "no-watch-left", OPTIONS);
            for (int i = 0; i < 20; i++) {
                lock.acquire(WAIT).release();   // each holder's tenure watch opens and closes within the cycle
            }
            for (int i = 0; i < 20; i++) {
                a.watches().watch("no-watch-left/k", 0, e -> { }).close();
            }
            // The client is still connected: a watch the members still hold is a leak, checked on every write.
            Await.until(TestCluster.TIMEOUT, () -> CLUSTER.get().liveWatches(0) + CLUSTER.get().liveWatches(1)
                    + CLUSTER.get().liveWatches(2) == 0, "no live watch left on any member");
        }
    }

    @Test
    @DisplayName("one session lease per client and TTL, shared by its locks; another TTL gets its own")
    void oneSessionLeasePerClientAndTtl() throws Exception {
        try (RotaClient a = CLUSTER.connect()) {
            LockHandle first = Lock.of(a, "session-1", OPTIONS).acquire(WAIT);
            LockHandle second = Lock.of(a, "session-2", OPTIONS).acquire(WAIT);
            LockHandle longer = Lock.of(a, "session-3", OPTIONS.withTtl(Duration.ofSeconds(5))).acquire(WAIT);
            assertEquals(first.leaseId(), second.leaseId());
            assertNotEquals(first.leaseId(), longer.leaseId());
            SessionLease session = a.leases().session(Duration.ofSeconds(2));
            assertSame(session, a.leases().session(Duration.ofSeconds(2)));
            assertEquals(first.leaseId(), session.leaseId());
            assertEquals(Duration.ofSeconds(5), a.leases().timeToLive(longer.leaseId(), false).grantedTtl());
            // Two places of one session in one queue: distinct keys (the lock is not re-entrant).
            Future<LockHandle> again = pool.submit(() -> Lock.of(a, "session-1", OPTIONS).acquire(WAIT));
            Await.until(WAIT, () -> queued(a, "session-1") == 2, "the second place of the same session queued");
            assertTrue(first.release());
            LockHandle next = again.get();
            assertNotEquals(first.key(), next.key());
            assertEquals(first.leaseId(), next.leaseId());
            assertTrue(next.fencingToken() > first.fencingToken());
            next.release();
            second.release();
            longer.release();
        }
    }

    @Test
    @DisplayName("a lost session fails every handle that used it; the next acquisition grants a new session")
    void aLostSessionFailsEveryHandleAndANewOneIsGranted() throws Exception {
        try (RotaClient a = CLUSTER.connect(); RotaClient other = CLUSTER.connect()) {
            LockHandle one = Lock.of(a, "lost-1", OPTIONS).acquire(WAIT);
            LockHandle two = Lock.of(a, "lost-2", OPTIONS).acquire(WAIT);
            AtomicReference<String> lostOne = new AtomicReference<>();
            AtomicReference<String> lostTwo = new AtomicReference<>();
            one.onLost((h, why) -> lostOne.set(why));
            two.onLost((h, why) -> lostTwo.set(why));
            other.leases().revoke(one.leaseId());
            Await.until(WAIT, () -> lostOne.get() != null && lostTwo.get() != null, "both handles told");
            assertFalse(one.isHeld());
            assertFalse(two.isHeld());
            Await.until(WAIT, () -> a.leases().session(Duration.ofSeconds(2)).leaseId() != one.leaseId(),
                    "a new session once the old one is known lost");
            LockHandle again = Lock.of(a, "lost-1", OPTIONS).acquire(WAIT);
            assertNotEquals(one.leaseId(), again.leaseId());
            assertTrue(again.fencingToken() > one.fencingToken());
            assertFalse(one.release(), "a lost handle's release deletes nothing");
            assertTrue(again.isHeld());
            assertTrue(again.release());
        }
    }

    @Test
    @DisplayName("an acquire right after the session was revoked (before a keep-alive noticed) re-grants and succeeds")
    void anAcquireOnARevokedSessionReGrants() throws Exception {
        try (RotaClient a = CLUSTER.connect(); RotaClient other = CLUSTER.connect()) {
            long old = a.leases().session(Duration.ofSeconds(2)).leaseId();
            other.leases().revoke(old);
            LockHandle held = Lock.of(a, "regrant", OPTIONS).acquire(WAIT);   // the join txn finds LEASE_NOT_FOUND
            assertNotEquals(old, held.leaseId());
            assertTrue(held.isHeld());
            assertTrue(held.release());
        }
    }

    @Test
    @DisplayName("hand-over by event: a waiter whose predecessor was the holder takes the lock without reading the queue (only its own key)")
    void handOverByTheDeletionEvent() throws Exception {
        try (RotaClient a = CLUSTER.connect(); RotaClient b = CLUSTER.connect()) {
            LockHandle held = Lock.of(a, "by-event", OPTIONS).acquire(WAIT);
            Lock waiting = Lock.of(b, "by-event", OPTIONS);
            Future<LockHandle> waiter = pool.submit(() -> waiting.acquire(WAIT));
            Await.until(WAIT, () -> queued(a, "by-event") == 2, "the waiter queued");
            long before = revision(a);
            assertTrue(held.release());
            LockHandle next = waiter.get();
            assertEquals(1, waiting.wakeups());
            assertEquals(0, waiting.queueReads(), "the deletion of the first contender decided alone");
            assertEquals(before + 1, revision(a), "a hand-over writes nothing besides the release");
            assertTrue(next.fencingToken() > held.fencingToken());
            next.release();
        }
    }

    @Test
    @DisplayName("issue 31: a waiter whose own key vanished while it waited is told so at the hand-over, never handed the lock")
    void aWaiterWhoseKeyVanishedIsNotHandedTheLock() throws Exception {
        try (RotaClient a = CLUSTER.connect(); RotaClient b = CLUSTER.connect(); RotaClient c = CLUSTER.connect()) {
            LockHandle held = Lock.of(a, "vanished", OPTIONS).acquire(WAIT);
            Future<LockHandle> waiter = pool.submit(() -> Lock.of(b, "vanished", OPTIONS).acquire(WAIT));
            Await.until(WAIT, () -> queued(a, "vanished") == 2, "the waiter queued");
            // Nothing watches a waiter's own key: an operator's delete (or its lease's end) goes unnoticed ...
            String waiterKey = a.kv().getPrefix("rota/lock/vanished/").kvs().stream()
                    .map(kv -> kv.keyString()).filter(k -> !k.equals(held.key())).findFirst().orElseThrow();
            a.kv().delete(waiterKey);
            assertTrue(held.release());
            // ... until the hand-over, which must confirm it: the queue is empty, so a newcomer takes the lock.
            ExecutionException e = assertThrows(ExecutionException.class, waiter::get);
            assertInstanceOf(LockLostException.class, e.getCause(), "lost, not held");
            LockHandle newcomer = Lock.of(c, "vanished", OPTIONS).tryAcquire().orElseThrow();
            newcomer.release();
        }
    }

    @Test
    @DisplayName("a waiter behind a waiter reads the queue once, at the deletion's revision; FIFO holds")
    void aWaiterBehindAWaiterReadsOnce() throws Exception {
        try (RotaClient a = CLUSTER.connect(); RotaClient b = CLUSTER.connect(); RotaClient c = CLUSTER.connect()) {
            LockHandle held = Lock.of(a, "behind", OPTIONS).acquire(WAIT);
            Lock second = Lock.of(b, "behind", OPTIONS);
            Future<LockHandle> secondWaiter = pool.submit(() -> second.acquire(WAIT));
            Await.until(WAIT, () -> queued(a, "behind") == 2, "the second queued");
            Lock third = Lock.of(c, "behind", OPTIONS);
            Future<LockHandle> thirdWaiter = pool.submit(() -> third.acquire(WAIT));
            Await.until(WAIT, () -> queued(a, "behind") == 3, "the third queued");
            held.release();
            LockHandle secondHeld = secondWaiter.get();
            assertFalse(thirdWaiter.isDone(), "FIFO: the third waits for the second");
            assertEquals(0, second.queueReads());
            secondHeld.release();
            LockHandle thirdHeld = thirdWaiter.get();
            assertEquals(1, third.wakeups(), "woken once, by its own predecessor");
            assertEquals(1, third.queueReads(), "its predecessor was a waiter when it joined: one read to be sure");
            assertTrue(held.fencingToken() < secondHeld.fencingToken());
            assertTrue(secondHeld.fencingToken() < thirdHeld.fencingToken());
            thirdHeld.release();
        }
    }

    @Test
    @DisplayName("a predecessor that gives up: the waiter reads the queue, watches the holder, and takes over on its release")
    void aPredecessorThatGivesUpIsSkipped() throws Exception {
        try (RotaClient a = CLUSTER.connect(); RotaClient b = CLUSTER.connect(); RotaClient c = CLUSTER.connect()) {
            LockHandle held = Lock.of(a, "gives-up", OPTIONS).acquire(WAIT);
            Future<LockHandle> quitter = pool.submit(() -> Lock.of(b, "gives-up", OPTIONS).acquire(WAIT));
            Await.until(WAIT, () -> queued(a, "gives-up") == 2, "the quitter queued");
            Lock last = Lock.of(c, "gives-up", OPTIONS);
            Future<LockHandle> lastWaiter = pool.submit(() -> last.acquire(WAIT));
            Await.until(WAIT, () -> queued(a, "gives-up") == 3, "the last queued");
            quitter.cancel(true);   // interrupted: it deletes its key
            Await.until(WAIT, () -> last.wakeups() == 1, "the last woken by its predecessor's deletion");
            assertFalse(lastWaiter.isDone(), "the holder is still ahead: the read found it");
            assertEquals(1, last.queueReads());
            held.release();
            LockHandle lastHeld = lastWaiter.get();
            assertEquals(2, last.wakeups());
            assertEquals(1, last.queueReads(), "then its predecessor was the holder: no second read");
            assertTrue(lastHeld.fencingToken() > held.fencingToken());
            lastHeld.release();
        }
    }

    @Test
    @DisplayName("tryAcquire on a held lock leaves nothing behind, in two writes (join, leave)")
    void tryAcquireLeavesNothingBehind() throws Exception {
        try (RotaClient a = CLUSTER.connect(); RotaClient b = CLUSTER.connect()) {
            LockHandle held = Lock.of(a, "try-cycle", OPTIONS).acquire(WAIT);
            Lock.of(b, "try-cycle", OPTIONS).tryAcquire().ifPresent(h -> {
                throw new AssertionError("acquired a held lock: " + h);
            });
            assertEquals(1, queued(a, "try-cycle"));
            ExecutionException timeout = assertThrows(ExecutionException.class,
                    () -> pool.submit(() -> Lock.of(b, "try-cycle", OPTIONS).acquire(Duration.ofMillis(200))).get());
            assertInstanceOf(LockTimeoutException.class, timeout.getCause());
            assertEquals(1, queued(a, "try-cycle"));
            assertTrue(held.release());
        }
    }
}
