package io.rota.server;

import io.rota.client.Auth;
import io.rota.client.KeyValue;
import io.rota.client.RotaClient;
import io.rota.client.RotaException;
import io.rota.client.Watch;
import io.rota.client.WatchEvent;
import io.rota.client.WatchListener;
import io.rota.client.recipes.Lock;
import io.rota.proto.Frame;
import io.rota.client.recipes.LockHandle;
import io.rota.client.recipes.LockOptions;
import io.rota.client.recipes.LockTimeoutException;
import io.rota.testkit.Await;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One lock's failure is no other lock's loss (issue 31, item 1): a client's locks share one session lease,
 * and a failed operation on one of them never ends that session — which would hand the others to their
 * waiters before their holders' safe-until.
 */
@Tag("cluster")
class LockFailureTest {

    @RegisterExtension
    static final SharedCluster CLUSTER = new SharedCluster(Duration.ofSeconds(10));

    /** 2 s leases: a revoked session would hand the lock over within a round trip; an expired one within 2 s. */
    static final LockOptions OPTIONS = LockOptions.defaults().withTtl(Duration.ofSeconds(2));

    @Test
    @DisplayName("issue 31: a second lock refused (name over the key limit) leaves the first held; its waiter waits")
    void aRefusedSecondLockLeavesTheFirstHeld() throws Exception {
        ExecutorService pool = Executors.newCachedThreadPool();
        try (RotaClient a = CLUSTER.connect(); RotaClient b = CLUSTER.connect()) {
            LockHandle held = Lock.of(a, "held", OPTIONS).acquire(Duration.ofSeconds(30));
            CompletableFuture<LockHandle> waiter = waitFor(pool, b, "held");
            Await.until(Duration.ofSeconds(10), () -> a.kv().getPrefix("rota/lock/held/").count() == 2,
                    "B queued behind A");

            RotaException refused = assertThrows(RotaException.class,
                    () -> Lock.of(a, "x".repeat(9_000), OPTIONS).acquire(Duration.ofSeconds(5)));
            assertTrue(refused.code() == RotaException.Code.REQUEST_TOO_LARGE
                    || refused.code() == RotaException.Code.INVALID_ARGUMENT, refused.toString());

            heldUntilReleased(a, held, waiter, "a refusal of another lock");
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    @DisplayName("issue 31: a second lock's acquire that times out behind another holder leaves the first held; its waiter waits")
    void aSecondLocksTimeoutLeavesTheFirstHeld() throws Exception {
        ExecutorService pool = Executors.newCachedThreadPool();
        try (RotaClient a = CLUSTER.connect(); RotaClient b = CLUSTER.connect(); RotaClient c = CLUSTER.connect()) {
            LockHandle busy = Lock.of(c, "busy", OPTIONS).acquire(Duration.ofSeconds(30));
            LockHandle held = Lock.of(a, "held-t", OPTIONS).acquire(Duration.ofSeconds(30));
            CompletableFuture<LockHandle> waiter = waitFor(pool, b, "held-t");
            Await.until(Duration.ofSeconds(10), () -> a.kv().getPrefix("rota/lock/held-t/").count() == 2,
                    "B queued behind A");

            assertThrows(LockTimeoutException.class, () -> Lock.of(a, "busy", OPTIONS).acquire(Duration.ofMillis(300)));
            assertEquals(1, a.kv().getPrefix("rota/lock/busy/").count(), "A's place behind C was deleted");

            heldUntilReleased(a, held, waiter, "a timed-out acquire of another lock");
            busy.release();
        } finally {
            pool.shutdownNow();
        }
    }

    @TempDir
    Path authDir;

    @Test
    @DisplayName("issue 31: a second lock refused for a permission (auth on) leaves the first held; its waiter waits")
    void aPermissionRefusalLeavesTheFirstHeld() throws Exception {
        ExecutorService pool = Executors.newCachedThreadPool();
        try (TestCluster cluster = new TestCluster(authDir, 3, Duration.ofSeconds(10))) {
            cluster.awaitLeader();
            try (RotaClient root = RotaClient.builder().endpoints(cluster.endpoints()).credentials("root", "root-pw").build()) {
                Auth auth = root.auth();
                auth.addUser("root", "root-pw".toCharArray());
                auth.grantRole("root", "root");
                auth.addUser("app", "app-pw".toCharArray());
                auth.addRole("held-only");   // app may use the lock 'held' and nothing else
                auth.grantPermission("held-only", Auth.Permission.prefix(Auth.PermissionType.READWRITE, "rota/lock/held/"));
                auth.grantRole("app", "held-only");
                auth.enable();
            }
            try (RotaClient a = RotaClient.builder().endpoints(cluster.endpoints()).credentials("app", "app-pw").build();
                 RotaClient b = RotaClient.builder().endpoints(cluster.endpoints()).credentials("root", "root-pw").build()) {
                LockHandle held = Lock.of(a, "held", OPTIONS).acquire(Duration.ofSeconds(30));
                CompletableFuture<LockHandle> waiter = waitFor(pool, b, "held");
                Await.until(Duration.ofSeconds(10), () -> b.kv().getPrefix("rota/lock/held/").count() == 2,
                        "B queued behind A");

                RotaException refused = assertThrows(RotaException.class,
                        () -> Lock.of(a, "elsewhere", OPTIONS).acquire(Duration.ofSeconds(5)));
                assertEquals(RotaException.Code.PERMISSION_DENIED, refused.code(), refused.toString());

                heldUntilReleased(b, held, waiter, "a permission refusal of another lock");
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    @DisplayName("issue 31: a lost holder's late release does not delete another client's key of the same name (its lease id granted again)")
    void aLateReleaseSparesAKeyOfTheSameNameUnderAReusedLeaseId() throws Exception {
        try (RotaClient a = CLUSTER.connect(); RotaClient other = CLUSTER.connect();
             FrameClient raw = new FrameClient(CLUSTER.get().client(0))) {
            LockHandle held = Lock.of(a, "reused-id", OPTIONS).acquire(Duration.ofSeconds(30));
            other.leases().revoke(held.leaseId());
            Await.until(Duration.ofSeconds(10), () -> !held.isHeld(), "A learns its session lease was revoked");

            // etcd lets a client grant a lease with an id of its choice once the old one has ended; a key named
            // like A's (session id, sequence) can then exist under someone else's lease.
            Frame granted = raw.call(Frame.newBuilder().setLeaseGrantRequest(
                    io.rota.proto.LeaseGrantRequest.newBuilder().setID(held.leaseId()).setTTL(30)));
            assertTrue(granted.hasLeaseGrantResponse(), granted.toString());
            other.kv().put(held.key(), "another client's", held.leaseId());

            assertFalse(held.release(), "A's lock was lost");
            assertEquals("another client's", other.kv().get(held.key()).first().map(kv -> kv.valueString()).orElse("(deleted)"),
                    "A's late release deleted a key that was not its own");
            other.leases().revoke(held.leaseId());
        }
    }

    @Test
    @DisplayName("issue 31: a join never takes over another client's key of the same name (its session's lease id re-granted): the session is replaced instead")
    void aJoinNeverTakesOverAKeyOfTheSameName() throws Exception {
        try (RotaClient a = CLUSTER.connect(); RotaClient other = CLUSTER.connect()) {
            // A's next contender key is predictable: its session's id, then the JVM's next sequence number.
            LockHandle probe = Lock.of(a, "probe", OPTIONS).acquire(Duration.ofSeconds(30));
            String[] name = probe.key().substring("rota/lock/probe/".length()).split("-");
            String next = "rota/lock/taken/" + name[0] + "-" + Long.toHexString(Long.parseLong(name[1], 16) + 1);
            probe.release();
            // Another client holds a key of exactly that name, as when A's lease id was granted to it after A's
            // lease ended while A was paused; it is the first key of the queue, so it holds 'taken'.
            long theirs = other.leases().grant(Duration.ofSeconds(30)).id();
            other.kv().put(next, "another client's", theirs);

            assertThrows(LockTimeoutException.class, () -> Lock.of(a, "taken", OPTIONS).acquire(Duration.ofSeconds(1)),
                    "A got 'taken' by taking over the other client's key");
            KeyValue kept = other.kv().get(next).first().orElseThrow();
            assertEquals(theirs, kept.lease(), "the other client's key is still on its own lease");
            assertEquals("another client's", kept.valueString());
            assertEquals(1, other.kv().getPrefix("rota/lock/taken/").count(), "A's waiter left on its timeout");
            other.leases().revoke(theirs);
        }
    }

    /** B's acquire of {@code name}, waiting up to a minute, on a thread of the pool. */
    private static CompletableFuture<LockHandle> waitFor(ExecutorService pool, RotaClient b, String name) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return Lock.of(b, name, OPTIONS).acquire(Duration.ofSeconds(60));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }, pool);
    }

    /**
     * After {@code failure}, A's {@code held} stays held — its safe-until ahead of the clock — for longer than the
     * session's TTL (a revoked session hands the lock over within a round trip, an expired one within 2 s), and
     * B's waiter gets it only after A releases, with a greater token.
     */
    private static void heldUntilReleased(RotaClient reader, LockHandle held, CompletableFuture<LockHandle> waiter,
                                          String failure) throws Exception {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
        while (System.nanoTime() - until < 0) {
            assertThrows(TimeoutException.class, () -> waiter.get(50, TimeUnit.MILLISECONDS),
                    "B got " + held.name() + " while A's handle said it still held it, after " + failure);
            assertTrue(held.isHeld() && held.safeUntilNanos() - System.nanoTime() > 0,
                    "A's handle lost " + held.name() + " after " + failure + ": " + held);
        }
        assertEquals(2, reader.kv().getPrefix("rota/lock/" + held.name() + "/").count(), "both places still queued");
        assertTrue(held.release());
        LockHandle next = waiter.get(30, TimeUnit.SECONDS);
        assertTrue(next.fencingToken() > held.fencingToken());
        next.release();
    }

    @Test
    @DisplayName("issue 31: a holder whose watch is refused (the member's 1,000 watches per connection) still holds; a later deletion is still seen")
    void aRefusedWatchIsNotALoss() throws Exception {
        List<Watch> filler = new ArrayList<>();
        try (RotaClient a = CLUSTER.connect(); RotaClient other = CLUSTER.connect()) {
            // Fill the connection's watch slots, so the holder's own watch is refused when the lock is taken.
            List<RotaException> refusals = new CopyOnWriteArrayList<>();
            while (refusals.isEmpty()) {
                filler.add(a.watches().watch("filler", 0, new WatchListener() {
                    @Override
                    public void onEvent(WatchEvent event) {
                    }

                    @Override
                    public void onError(RotaException error) {
                        refusals.add(error);
                    }
                }));
                if (filler.size() % 100 == 0) {
                    a.kv().get("filler");   // a round trip: the refusals of the watches sent so far have arrived
                }
                assertTrue(filler.size() <= 5_000, "no watch limit was met");
            }
            LockHandle held = Lock.of(a, "watch-refused", OPTIONS).acquire(Duration.ofSeconds(30));
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
            while (System.nanoTime() - until < 0) {
                assertTrue(held.isHeld(), "a refused watch is not a lost key: " + held);
                a.kv().get("filler");
            }
            filler.remove(0).close();   // a slot frees: the holder's watch is set up on its next try
            filler.remove(0).close();
            Await.until(Duration.ofSeconds(10), () -> {
                other.kv().delete(held.key());
                return !held.isHeld();
            }, "the holder learns its key was deleted");
        } finally {
            filler.forEach(Watch::close);
        }
    }
}
