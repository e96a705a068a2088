package io.rota.server;

import io.rota.client.RotaClient;
import io.rota.client.recipes.Lock;
import io.rota.client.recipes.LockHandle;
import io.rota.client.recipes.LockOptions;
import io.rota.testkit.Await;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A held lock survives the loss of the Raft leader: keep-alives move on, nobody else gets in. */
@Tag("cluster")
class LockFailoverTest {

    @TempDir
    Path dir;

    @Test
    @DisplayName("the Raft leader is stopped while a lock is held: the holder keeps it, the waiter keeps waiting")
    void aHeldLockSurvivesLeaderFailover() throws Exception {
        LockOptions options = LockOptions.defaults().withTtl(Duration.ofSeconds(6));
        ExecutorService pool = Executors.newCachedThreadPool();
        try (TestCluster cluster = new TestCluster(dir, 3, Duration.ofSeconds(10))) {
            int leader = cluster.awaitLeader();
            String endpoints = cluster.endpoints();
            try (RotaClient holder = RotaClient.connect(endpoints); RotaClient other = RotaClient.connect(endpoints)) {
                LockHandle held = Lock.of(holder, "failover", options).acquire(Duration.ofSeconds(30));
                AtomicReference<String> lost = new AtomicReference<>();
                held.onLost((h, reason) -> lost.set(reason));
                Future<LockHandle> waiter = pool.submit(() -> Lock.of(other, "failover", options)
                        .acquire(Duration.ofSeconds(60)));
                Await.until(Duration.ofSeconds(30),
                        () -> holder.kv().getPrefix("rota/lock/failover/").count() == 2, "the waiter queued");

                cluster.stop(leader);
                assertTrue(cluster.awaitLeader() != leader);
                long until = System.nanoTime() + Duration.ofSeconds(9).toNanos();   // 1.5 TTL after the failover
                Await.until(Duration.ofSeconds(30), () -> {
                    assertNull(lost.get(), "the holder lost its lock across the failover");
                    assertTrue(held.isHeld());
                    assertFalse(waiter.isDone(), "the waiter got in while the holder held");
                    return System.nanoTime() - until > 0;
                }, "1.5 TTL of holding across the failover");

                held.release();
                LockHandle next = waiter.get(30, TimeUnit.SECONDS);
                assertTrue(next.fencingToken() > held.fencingToken());
                next.release();
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
