package io.rota.server;

import io.rota.client.GetOptions;
import io.rota.client.GetResult;
import io.rota.client.KeepAlive;
import io.rota.client.Lease;
import io.rota.client.LeaseListener;
import io.rota.client.Member;
import io.rota.client.MemberStatus;
import io.rota.client.RotaClient;
import io.rota.client.RotaException;
import io.rota.client.Watch;
import io.rota.client.WatchEvent;
import io.rota.client.WatchListener;
import io.rota.client.WatchOptions;
import io.rota.testkit.Await;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The SDK calls rotactl is built on, against three in-JVM servers: get with options, the lease list and
 * renewal notices, watches with previous keys, and the cluster API (status, health, members).
 */
@Tag("cluster")
class RotaClientClusterApiTest {

    @RegisterExtension
    static final SharedCluster CLUSTER = new SharedCluster(Duration.ofSeconds(10));

    private static String all() {
        return CLUSTER.get().endpoints();
    }

    @Test
    void getWithOptionsReadsPrefixesRevisionsLimitsKeysAndCounts() {
        try (RotaClient rota = RotaClient.connect(all())) {
            long first = rota.kv().put("opt/a", "1").revision();
            rota.kv().put("opt/b", "2");
            rota.kv().put("opt/a", "3");
            rota.kv().put("optx", "outside");

            GetResult limited = rota.kv().get("opt/", GetOptions.builder().prefix().limit(1).build());
            assertEquals(List.of("opt/a"), limited.kvs().stream().map(kv -> kv.keyString()).toList());
            assertTrue(limited.more());
            assertEquals(2, limited.count());

            GetResult keys = rota.kv().get("opt/", GetOptions.builder().prefix().keysOnly().build());
            assertEquals(2, keys.kvs().size());
            assertTrue(keys.kvs().stream().allMatch(kv -> kv.value().length == 0));

            GetResult count = rota.kv().get("opt/", GetOptions.builder().prefix().countOnly().build());
            assertTrue(count.kvs().isEmpty());
            assertEquals(2, count.count());

            assertEquals("1", rota.kv().get("opt/a", GetOptions.builder().revision(first).build())
                    .first().orElseThrow().valueString());
            assertEquals("3", rota.kv().get("opt/a", GetOptions.defaults()).first().orElseThrow().valueString());
            RotaException future = assertThrows(RotaException.class,
                    () -> rota.kv().get("opt/a", GetOptions.builder().revision(first + 1_000_000).build()));
            assertEquals(RotaException.Code.INVALID_ARGUMENT, future.code());
        }
        int follower = CLUSTER.get().follower();
        try (RotaClient one = RotaClient.connect(CLUSTER.get().endpoint(follower))) {
            Await.until(Duration.ofSeconds(10), () -> one.kv().get("opt/a", GetOptions.builder().serializable().build())
                    .first().map(kv -> kv.valueString().equals("3")).orElse(false), "a serializable read on a follower");
        }
        assertThrows(IllegalArgumentException.class, () -> GetOptions.builder().limit(-1));
    }

    @Test
    void leaseListAndRenewalNotices() throws Exception {
        try (RotaClient rota = RotaClient.connect(all())) {
            Lease kept = rota.leases().grant(Duration.ofSeconds(1));
            Lease revoked = rota.leases().grant(Duration.ofSeconds(30));
            rota.leases().revoke(revoked.id());
            List<Long> live = rota.leases().list();
            assertTrue(live.contains(kept.id()), live.toString());
            assertFalse(live.contains(revoked.id()), live.toString());

            AtomicInteger renewals = new AtomicInteger();
            List<Duration> ttls = new CopyOnWriteArrayList<>();
            try (KeepAlive ka = rota.leases().keepAlive(kept.id(), new LeaseListener() {
                @Override
                public void onLost(long leaseId, RotaException reason) {
                }

                @Override
                public void onRenewed(long leaseId, Duration ttl) {
                    ttls.add(ttl);
                    renewals.incrementAndGet();
                }
            })) {
                Await.until(Duration.ofSeconds(10), () -> renewals.get() >= 3, "three renewals");
                assertTrue(ka.isActive());
            }
            assertTrue(ttls.stream().allMatch(kept.ttl()::equals), ttls.toString());
        }
    }

    @Test
    void aWatchWithPrevKvCarriesTheKeyAsItWas() throws Exception {
        try (RotaClient rota = RotaClient.connect(all())) {
            long from = rota.kv().put("pw/k", "v1").revision();
            rota.kv().put("pw/k", "v2");
            rota.kv().delete("pw/k");
            List<WatchEvent> events = new CopyOnWriteArrayList<>();
            WatchListener listener = events::add;
            try (Watch w = rota.watches().watch("pw/", WatchOptions.prefix().fromRevision(from).withPrevKv(), listener)) {
                Await.until(Duration.ofSeconds(10), () -> events.size() == 3, "three events: " + events);
            }
            assertNull(events.get(0).prevKv());
            assertEquals("v1", events.get(1).prevKv().valueString());
            assertEquals(WatchEvent.Type.DELETE, events.get(2).type());
            assertEquals("v2", events.get(2).prevKv().valueString());

            List<WatchEvent> plain = new CopyOnWriteArrayList<>();
            WatchListener plainListener = plain::add;
            try (Watch w = rota.watches().watch("pw/k", WatchOptions.key().fromRevision(from), plainListener)) {
                Await.until(Duration.ofSeconds(10), () -> plain.size() == 3, "three events: " + plain);
            }
            assertTrue(plain.stream().allMatch(e -> e.prevKv() == null), plain.toString());
        }
    }

    @Test
    void clusterStatusHealthAndMembers() throws IOException {
        try (RotaClient rota = RotaClient.builder().endpoints(all()).callTimeout(Duration.ofSeconds(5)).build()) {
            int leaders = 0;
            for (int i = 0; i < 3; i++) {
                MemberStatus s = rota.cluster().status(CLUSTER.get().endpoint(i));
                assertEquals(CLUSTER.get().endpoint(i), s.endpoint());
                assertEquals(i + 1, s.memberId());
                assertEquals("n" + (i + 1), s.name());
                assertTrue(s.raftTerm() > 0 && s.raftIndex() > 0 && s.raftAppliedIndex() > 0, s.toString());
                assertTrue(s.errors().isEmpty(), s.toString());
                leaders += s.isLeader() ? 1 : 0;
                assertFalse(rota.cluster().health(CLUSTER.get().endpoint(i)).isNegative());
            }
            assertEquals(1, leaders);

            List<Member> members = rota.cluster().members();
            assertEquals(List.of(1L, 2L, 3L), members.stream().map(Member::id).toList());
            for (int i = 0; i < 3; i++) {
                assertEquals(CLUSTER.get().endpoint(i), members.get(i).clientAddress());
                assertEquals("n" + (i + 1), members.get(i).name());
            }

            int closed;
            try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                closed = s.getLocalPort();
            }
            RotaException down = assertThrows(RotaException.class, () -> rota.cluster().status("127.0.0.1:" + closed));
            assertEquals(RotaException.Code.UNAVAILABLE, down.code());
        }
    }
}
