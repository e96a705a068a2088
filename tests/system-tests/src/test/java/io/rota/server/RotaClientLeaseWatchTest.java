package io.rota.server;

import io.rota.client.KeepAlive;
import io.rota.client.Lease;
import io.rota.client.LeaseTimeToLive;
import io.rota.client.RotaClient;
import io.rota.client.RotaException;
import io.rota.client.Watch;
import io.rota.client.WatchEvent;
import io.rota.client.WatchListener;
import io.rota.testkit.Await;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The SDK's leases (keep-alive, revoke, time-to-live) and watches against three in-JVM servers. */
@Tag("cluster")
class RotaClientLeaseWatchTest {

    @RegisterExtension
    static final SharedCluster CLUSTER = new SharedCluster(Duration.ofSeconds(10));

    static String all() {
        StringBuilder b = new StringBuilder();
        for (int m = 0; m < 3; m++) {
            InetSocketAddress a = CLUSTER.get().client(m);
            b.append(m == 0 ? "" : ",").append(a.getHostString()).append(':').append(a.getPort());
        }
        return b.toString();
    }

    /** Collects a watch's events and its error. */
    static final class Collector implements WatchListener {
        final List<WatchEvent> events = new ArrayList<>();
        final CompletableFuture<RotaException> error = new CompletableFuture<>();

        @Override
        public synchronized void onEvent(WatchEvent event) {
            events.add(event);
        }

        @Override
        public void onError(RotaException e) {
            error.complete(e);
        }

        synchronized List<Long> revisions() {
            return events.stream().map(WatchEvent::revision).toList();
        }

        synchronized int size() {
            return events.size();
        }
    }

    @Test
    @DisplayName("a kept-alive lease holds its key past 2 x TTL; closed, the key goes; a keep-alive of the expired lease reports it lost")
    void keepAliveHoldsTheKeyThenItExpires() throws Exception {
        try (RotaClient rota = RotaClient.connect(all())) {
            Lease lease = rota.leases().grant(Duration.ofSeconds(1));
            long ttlMs = lease.ttl().toMillis();
            assertTrue(ttlMs >= 1000, "granted " + lease.ttl());
            rota.kv().put("lease/held", "v", lease.id());
            CompletableFuture<RotaException> lostWhileHeld = new CompletableFuture<>();
            KeepAlive ka = rota.leases().keepAlive(lease.id(), (id, why) -> lostWhileHeld.complete(why));
            long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(2 * ttlMs + 1000);
            while (System.nanoTime() < until) {   // polls with reads, not sleeps
                assertTrue(rota.kv().get("lease/held").first().isPresent(), "key held by the keep-alive");
            }
            assertTrue(ka.isActive());
            ka.close();
            assertFalse(ka.isActive());
            Await.until(Duration.ofSeconds(20), () -> rota.kv().get("lease/held").kvs().isEmpty(),
                    "the key expires once keep-alives stop");
            assertFalse(lostWhileHeld.isDone(), "a closed keep-alive does not report");

            CompletableFuture<RotaException> lost = new CompletableFuture<>();
            KeepAlive late = rota.leases().keepAlive(lease.id(), (id, why) -> {
                assertEquals(lease.id(), id);
                lost.complete(why);
            });
            assertEquals(RotaException.Code.LEASE_NOT_FOUND, lost.get(20, TimeUnit.SECONDS).code());
            assertFalse(late.isActive());
        }
    }

    @Test
    @DisplayName("timeToLive lists the keys; revoke deletes them, and the running keep-alive reports the lease lost")
    void revokeDeletesKeysAndTimeToLiveShowsThem() throws Exception {
        try (RotaClient rota = RotaClient.connect(all())) {
            Lease lease = rota.leases().grant(Duration.ofSeconds(3));
            rota.kv().put("revoke/a", "1", lease.id());
            rota.kv().put("revoke/b", "2", lease.id());
            rota.kv().put("revoke/c", "no lease");
            CompletableFuture<RotaException> lost = new CompletableFuture<>();
            try (KeepAlive ka = rota.leases().keepAlive(lease.id(), (id, why) -> lost.complete(why))) {
                LeaseTimeToLive ttl = rota.leases().timeToLive(lease.id(), true);
                assertEquals(lease.id(), ttl.id());
                assertEquals(lease.ttl(), ttl.grantedTtl());
                assertTrue(!ttl.remaining().isNegative() && ttl.remaining().compareTo(lease.ttl()) <= 0, ttl.toString());
                assertEquals(List.of("revoke/a", "revoke/b"), ttl.keys().stream().sorted().toList());
                assertTrue(rota.leases().timeToLive(lease.id(), false).keys().isEmpty());

                rota.leases().revoke(lease.id());
                assertEquals(List.of("revoke/c"), rota.kv().getPrefix("revoke/").kvs().stream()
                        .map(kv -> kv.keyString()).toList());
                assertEquals(RotaException.Code.LEASE_NOT_FOUND,
                        assertThrows(RotaException.class, () -> rota.leases().timeToLive(lease.id(), true)).code());
                assertEquals(RotaException.Code.LEASE_NOT_FOUND, lost.get(20, TimeUnit.SECONDS).code());
                assertFalse(ka.isActive());
            }
        }
    }

    @Test
    @DisplayName("a prefix watch from revision r gets every write of the prefix from r on, in order, once, and nothing else")
    void prefixWatchFromARevision() {
        try (RotaClient rota = RotaClient.connect(all())) {
            List<Long> expected = new ArrayList<>();
            rota.kv().put("wp/before", "x");
            long r = rota.kv().put("wp/0", "v0").revision();
            expected.add(r);
            for (int i = 1; i <= 10; i++) {
                expected.add(rota.kv().put("wp/" + i, "v" + i).revision());
                rota.kv().put("wpx/" + i, "outside");
            }
            Collector c = new Collector();
            try (Watch w = rota.watches().watchPrefix("wp/", r, c)) {
                for (int i = 11; i <= 20; i++) {
                    expected.add(rota.kv().put("wp/" + i, "v" + i).revision());
                }
                expected.add(rota.kv().delete("wp/3").revision());
                Await.until(Duration.ofSeconds(20), () -> c.size() >= expected.size(), "every event delivered");
                assertEquals(expected, c.revisions());
                synchronized (c) {
                    assertEquals("v0", c.events.get(0).kv().valueString());
                    assertEquals(WatchEvent.Type.DELETE, c.events.get(c.events.size() - 1).type());
                    assertEquals("wp/3", c.events.get(c.events.size() - 1).kv().keyString());
                }
                assertEquals(expected.get(expected.size() - 1) + 1, w.nextRevision());
                assertFalse(c.error.isDone());
            }
        }
    }

    @Test
    @DisplayName("a watch from a revision older than the history ends with a typed COMPACTED naming the compact revision")
    void watchOlderThanTheHistoryIsCompacted() throws Exception {
        try (RotaClient rota = RotaClient.connect(all())) {
            long first = rota.kv().put("wc/first", "v").revision();
            TestCluster.outgrowTheHistory(rota, "wc/");
            Collector c = new Collector();
            try (Watch w = rota.watches().watchPrefix("wc/", first, c)) {
                RotaException e = c.error.get(20, TimeUnit.SECONDS);
                assertEquals(RotaException.Code.COMPACTED, e.code());
                assertTrue(e.compactRevision() >= first, "compact revision " + e.compactRevision());
                assertEquals(0, c.size());
                assertFalse(w.isActive());
            }
        }
    }
}
