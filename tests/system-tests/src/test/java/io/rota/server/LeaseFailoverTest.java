package io.rota.server;

import io.rota.proto.Frame;
import io.rota.testkit.Await;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static io.rota.server.Requests.get;
import static io.rota.server.Requests.grant;
import static io.rota.server.Requests.keepAlive;
import static io.rota.server.Requests.ok;
import static io.rota.server.Requests.put;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A kept-alive lease survives the loss of its leader (the new leader starts it at min(TTL, checkpointed
 * remaining + election timeout), never earlier); once the keep-alives stop, it expires within
 * TTL + 2 × election timeout of the last one.
 */
@Tag("cluster")
class LeaseFailoverTest {

    @TempDir
    Path dir;

    @Test
    void aKeptAliveLeaseSurvivesLeaderFailoverAndExpiresOnceKeepAlivesStop() {
        ScheduledExecutorService keeper = Executors.newSingleThreadScheduledExecutor();
        try (TestCluster cluster = new TestCluster(dir, 3, Duration.ofSeconds(10))) {
            int leader = cluster.awaitLeader();
            int follower = cluster.follower();
            try (FrameClient c = new FrameClient(cluster.client(follower))) {
                long lease = ok(c.call(grant(2))).getLeaseGrantResponse().getID();
                ok(c.call(put("held", "by me", lease)));
                AtomicInteger keptAlive = new AtomicInteger();
                long stream = c.send(keepAlive(lease));
                ok(c.next(stream));
                keeper.scheduleAtFixedRate(() -> {
                    c.send(keepAlive(lease).setCallId(stream));
                    keptAlive.incrementAndGet();
                }, 300, 300, TimeUnit.MILLISECONDS);

                cluster.stop(leader);
                int before = keptAlive.get();
                // Three TTLs after the failover, with a new leader timing the lease, the key is still there.
                Await.until(Duration.ofSeconds(30), () -> {
                    assertEquals(1, ok(c.call(get("held"))).getRangeResponse().getCount(), "the lease expired early");
                    return keptAlive.get() - before >= 20;
                }, "six seconds of keep-alives across the failover");
                int newLeader = cluster.awaitLeader();
                assertTrue(newLeader != leader);

                keeper.shutdownNow();
                long stoppedAt = System.nanoTime();
                Await.until(Duration.ofSeconds(15), () -> ok(c.call(get("held"))).getRangeResponse().getCount() == 0,
                        "the lease to expire once keep-alives stopped");
                long ms = (System.nanoTime() - stoppedAt) / 1_000_000;
                assertTrue(ms <= 2_000 + 2 * 500 + 1_000, "expired after " + ms + " ms");
                drain(c, stream);
            }
        } finally {
            keeper.shutdownNow();
        }
    }

    /** Every keep-alive got its own answer on the stream (LeaseKeepAlive is a stream: one answer each). */
    private static void drain(FrameClient c, long stream) {
        Frame f;
        try {
            while ((f = c.poll(stream, Duration.ofMillis(200))) != null) {
                ok(f);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
