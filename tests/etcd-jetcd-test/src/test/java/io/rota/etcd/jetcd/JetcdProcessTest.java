package io.rota.etcd.jetcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Txn;
import io.etcd.jetcd.Election;
import io.etcd.jetcd.auth.Permission;
import io.etcd.jetcd.election.CampaignResponse;
import io.etcd.jetcd.election.LeaderResponse;
import io.etcd.jetcd.election.NotLeaderException;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.lease.LeaseTimeToLiveResponse;
import io.etcd.jetcd.lock.LockResponse;
import io.etcd.jetcd.lock.UnlockResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.LeaseOption;
import io.etcd.jetcd.options.PutOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.rota.testkit.Await;
import io.rota.testkit.Ports;
import io.rota.testkit.ProcessCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * etcd's Java client, jetcd, unchanged, against three real Rota processes ({@code rota-server.jar server
 * --listen-etcd}): KV (put, get, prefix range, delete, txn), Lease (grant, keep-alive, time-to-live with keys,
 * revoke deleting its keys), Watch (from a revision with prev_kv, and a watch that resumes across a kill -9 of
 * the Rota leader without losing or repeating an event), Lock (etcd's v3lock: two clients serialised), Election
 * (etcd's v3election: campaign, leader, proclaim, observe, resign and hand-over, a stale leader's proclaim
 * refused as jetcd expects), and Auth (jetcd's {@code .user()/.password()} against an auth-enabled cluster,
 * last: it turns auth on and off). One cluster for all, so the module costs one cluster start.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Tag("process")
class JetcdProcessTest {

    private static final long WAIT_S = 30;

    @TempDir
    static Path dir;
    private static ProcessCluster cluster;
    private static int[] etcdPorts;
    private static Client client;

    @BeforeAll
    static void start() {
        Assumptions.assumeTrue(Files.isRegularFile(ProcessCluster.jar()), "SKIPPED: " + ProcessCluster.jar()
                + " is missing: package kv-server first (./mvnw -o package -pl kv-server/server -am)");
        etcdPorts = new int[] {Ports.freePort(), Ports.freePort(), Ports.freePort()};
        cluster = ProcessCluster.prepare(dir, 3, null)
                .memberArgs(i -> List.of("--listen-etcd", "127.0.0.1:" + etcdPorts[i]));
        cluster.startAll();
        cluster.awaitLeader();
        client = Client.builder().endpoints(endpoints(0, 1, 2)).build();
    }

    @AfterAll
    static void stop() {
        if (client != null) {
            client.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    /** etcd URLs of the given members, in that order. */
    private static String[] endpoints(int... members) {
        String[] out = new String[members.length];
        for (int i = 0; i < members.length; i++) {
            out[i] = "http://127.0.0.1:" + etcdPorts[members[i]];
        }
        return out;
    }

    private static ByteSequence b(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    private static String s(ByteSequence b) {
        return b.toString(StandardCharsets.UTF_8);
    }

    private static <T> T get(CompletableFuture<T> f) throws Exception {
        return f.get(WAIT_S, TimeUnit.SECONDS);
    }

    @Test
    @Order(1)
    void kvPutGetRangeDeleteAndTxn() throws Exception {
        KV kv = client.getKVClient();
        get(kv.put(b("kv/a"), b("1")));
        get(kv.put(b("kv/b"), b("2")));
        get(kv.put(b("kv/c"), b("3")));
        assertEquals("1", s(get(kv.get(b("kv/a"))).getKvs().get(0).getValue()));
        GetResponse prefix = get(kv.get(b("kv/"), GetOption.builder().isPrefix(true).build()));
        assertEquals(List.of("kv/a", "kv/b", "kv/c"), prefix.getKvs().stream().map(k -> s(k.getKey())).toList());
        GetResponse range = get(kv.get(b("kv/a"), GetOption.builder().withRange(b("kv/c")).withLimit(1).build()));
        assertEquals(1, range.getKvs().size());
        assertTrue(range.isMore(), "a limited range says there is more");
        assertEquals(1, get(kv.delete(b("kv/b"), DeleteOption.builder().withPrevKV(true).build())).getPrevKvs().size());

        KeyValue a = get(kv.get(b("kv/a"))).getKvs().get(0);
        Txn txn = kv.txn();
        TxnResponse swapped = get(txn.If(new Cmp(b("kv/a"), Cmp.Op.EQUAL, CmpTarget.modRevision(a.getModRevision())))
                .Then(Op.put(b("kv/a"), b("swapped"), PutOption.DEFAULT))
                .Else(Op.get(b("kv/a"), GetOption.DEFAULT)).commit());
        assertTrue(swapped.isSucceeded());
        TxnResponse stale = get(kv.txn().If(new Cmp(b("kv/a"), Cmp.Op.EQUAL, CmpTarget.modRevision(a.getModRevision())))
                .Then(Op.put(b("kv/a"), b("again"), PutOption.DEFAULT))
                .Else(Op.get(b("kv/a"), GetOption.DEFAULT)).commit());
        assertFalse(stale.isSucceeded());
        assertEquals("swapped", s(stale.getGetResponses().get(0).getKvs().get(0).getValue()));
    }

    @Test
    @Order(2)
    void leaseGrantKeepAliveTimeToLiveRevoke() throws Exception {
        long lease = get(client.getLeaseClient().grant(30)).getID();
        get(client.getKVClient().put(b("lease/k"), b("v"), PutOption.builder().withLeaseId(lease).build()));
        LeaseKeepAliveResponse renewed = get(client.getLeaseClient().keepAliveOnce(lease));
        assertTrue(renewed.getTTL() > 0, "renewed: " + renewed.getTTL());
        LeaseTimeToLiveResponse ttl = get(client.getLeaseClient().timeToLive(lease,
                LeaseOption.builder().withAttachedKeys().build()));
        assertTrue(ttl.getTTL() > 0 && ttl.getTTL() <= 30, "ttl " + ttl.getTTL());
        assertEquals(List.of("lease/k"), ttl.getKeys().stream().map(JetcdProcessTest::s).toList());
        get(client.getLeaseClient().revoke(lease));
        assertEquals(0, get(client.getKVClient().get(b("lease/k"))).getCount(), "revoking deletes the lease's keys");
    }

    @Test
    @Order(3)
    void lockSerialisesTwoClients() throws Exception {
        try (Client one = Client.builder().endpoints(endpoints(0, 1, 2)).build();
             Client two = Client.builder().endpoints(endpoints(2, 1, 0)).build()) {
            long leaseOne = get(one.getLeaseClient().grant(30)).getID();
            long leaseTwo = get(two.getLeaseClient().grant(30)).getID();
            LockResponse first = get(one.getLockClient().lock(b("jobs"), leaseOne));
            CompletableFuture<LockResponse> second = two.getLockClient().lock(b("jobs"), leaseTwo);
            // The second waits behind the first: it gets the lock only after the first releases it.
            get(one.getKVClient().put(b("jobs-owner"), b("one")));
            assertFalse(second.isDone(), "the second client holds the lock while the first does");
            UnlockResponse released = get(one.getLockClient().unlock(first.getKey()));
            LockResponse then = get(second);
            assertTrue(then.getHeader().getRevision() >= released.getHeader().getRevision(),
                    "the second lock (revision " + then.getHeader().getRevision() + ") follows the release (revision "
                            + released.getHeader().getRevision() + ")");
            assertTrue(s(then.getKey()).startsWith("jobs/"), s(then.getKey()));
            get(two.getLockClient().unlock(then.getKey()));
            get(one.getLeaseClient().revoke(leaseOne));
            get(two.getLeaseClient().revoke(leaseTwo));
        }
    }

    @Test
    @Order(3)
    void electionCampaignProclaimObserveResign() throws Exception {
        try (Client one = Client.builder().endpoints(endpoints(0, 1, 2)).build();
             Client two = Client.builder().endpoints(endpoints(1, 2, 0)).build()) {
            Election e1 = one.getElectionClient();
            Election e2 = two.getElectionClient();
            long leaseOne = get(one.getLeaseClient().grant(30)).getID();
            long leaseTwo = get(two.getLeaseClient().grant(30)).getID();
            CampaignResponse won = get(e1.campaign(b("sched"), leaseOne, b("one")));
            assertTrue(s(won.getLeader().getKey()).startsWith("sched/"), s(won.getLeader().getKey()));
            CompletableFuture<CampaignResponse> waiting = e2.campaign(b("sched"), leaseTwo, b("two"));
            assertEquals("one", s(get(e2.leader(b("sched"))).getKv().getValue()));

            // An observer sees the leader's value, every value it proclaims, and the next leader.
            List<String> seen = new CopyOnWriteArrayList<>();
            e2.observe(b("sched"), new Election.Listener() {
                @Override
                public void onNext(LeaderResponse r) {
                    seen.add(s(r.getKv().getValue()));
                }

                @Override
                public void onError(Throwable t) {
                    seen.add("error: " + t);
                }

                @Override
                public void onCompleted() {
                }
            });
            Await.until(Duration.ofSeconds(WAIT_S), () -> seen.contains("one"), "the observer sees the leader");
            get(e1.proclaim(won.getLeader(), b("one-again")));
            assertEquals("one-again", s(get(e1.leader(b("sched"))).getKv().getValue()));
            assertFalse(waiting.isDone(), "the second candidate waits while the first leads");

            get(e1.resign(won.getLeader()));
            CampaignResponse second = get(waiting);
            assertTrue(second.getLeader().getRevision() > won.getLeader().getRevision(),
                    "the new leader's key is newer than the old one's");
            assertEquals("two", s(get(e1.leader(b("sched"))).getKv().getValue()));
            Await.until(Duration.ofSeconds(WAIT_S), () -> seen.contains("two"), "the observer sees the hand-over");
            assertEquals(List.of("one", "one-again", "two"), seen, "in order, each once");

            // The old leader's key no longer leads: jetcd turns etcd's "election: not leader" into its exception.
            ExecutionException stale = assertThrows(ExecutionException.class,
                    () -> get(e1.proclaim(won.getLeader(), b("stale"))));
            assertTrue(stale.getCause() instanceof NotLeaderException, String.valueOf(stale.getCause()));
            get(e2.resign(second.getLeader()));
            get(one.getLeaseClient().revoke(leaseOne));
            get(two.getLeaseClient().revoke(leaseTwo));
        }
    }

    @Test
    @Order(4)
    void watchFromARevisionWithPrevKv() throws Exception {
        long from = get(client.getKVClient().put(b("w1/x"), b("1"))).getHeader().getRevision();
        get(client.getKVClient().put(b("w1/x"), b("2")));
        List<WatchEvent> events = new CopyOnWriteArrayList<>();
        try (var watcher = client.getWatchClient().watch(b("w1/"), WatchOption.builder().isPrefix(true)
                .withRevision(from).withPrevKV(true).build(), r -> events.addAll(r.getEvents()))) {
            Await.until(Duration.ofSeconds(WAIT_S), () -> events.size() >= 2, "both past changes, replayed");
            assertEquals(from, events.get(0).getKeyValue().getModRevision());
            assertEquals("1", s(events.get(1).getPrevKV().getValue()), "prev_kv of the second change");
        }
    }

    /**
     * A watch resumes across a kill -9 of the leader: the watching client dials the leader first (pick_first),
     * so its stream breaks with the leader's process; jetcd re-creates the watch on another member from the
     * revision after the last it received. Meanwhile a writer keeps writing (retrying what failed). Every
     * change must arrive once, in revision order: per key as many events as its final version.
     */
    @Test
    @Order(5)
    void watchResumesAcrossALeaderKill() throws Exception {
        int leader = cluster.awaitLeader();
        int[] order = {leader, (leader + 1) % 3, (leader + 2) % 3};
        long start = get(client.getKVClient().get(b("w2/none"))).getHeader().getRevision() + 1;
        List<WatchEvent> events = new CopyOnWriteArrayList<>();
        try (Client watching = Client.builder().endpoints(endpoints(order)).loadBalancerPolicy("pick_first").build();
             Client writing = Client.builder().endpoints(endpoints(order[1], order[2])).build();
             var watcher = watching.getWatchClient().watch(b("w2/"), WatchOption.builder().isPrefix(true)
                     .withRevision(start).build(), r -> events.addAll(r.getEvents()))) {
            int keys = 40;
            for (int i = 0; i < keys; i++) {
                if (i == keys / 2) {
                    Await.until(Duration.ofSeconds(WAIT_S), () -> events.size() >= keys / 2, "the first half watched");
                    cluster.kill(leader);
                }
                putRetrying(writing.getKVClient(), "w2/" + i, "v" + i);
            }
            GetResponse all = get(writing.getKVClient().get(b("w2/"), GetOption.builder().isPrefix(true).build()));
            long expected = all.getKvs().stream().mapToLong(KeyValue::getVersion).sum();
            Await.until(Duration.ofSeconds(WAIT_S), () -> events.size() >= expected,
                    "every change watched (" + expected + " events)");
            Map<String, Long> perKey = new HashMap<>();
            long last = 0;
            for (WatchEvent e : events) {
                long rev = e.getKeyValue().getModRevision();
                assertTrue(rev > last, "revisions strictly increase (no repeat, no reorder): " + rev + " after " + last);
                last = rev;
                perKey.merge(s(e.getKeyValue().getKey()), 1L, Long::sum);
            }
            for (KeyValue kv : all.getKvs()) {
                assertEquals(kv.getVersion(), perKey.getOrDefault(s(kv.getKey()), 0L), "events of " + s(kv.getKey()));
            }
            assertEquals(expected, events.size(), "no event twice");
        } finally {
            cluster.startMember(leader);   // back to three members for the tests after this one
        }
    }

    /** A put retried until it is acknowledged (one sent around the kill may be applied twice: a new version). */
    private static void putRetrying(KV kv, String key, String value) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_S);
        while (true) {
            try {
                get(kv.put(b(key), b(value)));
                return;
            } catch (ExecutionException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
            }
        }
    }

    /**
     * jetcd's {@code .user()/.password()} against an auth-enabled cluster: allowed inside the user's prefix,
     * refused outside it with etcd's message; a client without credentials is refused. Auth is disabled again
     * at the end.
     */
    @Test
    @Order(6)
    void authWithUserAndPassword() throws Exception {
        var admin = client.getAuthClient();
        get(admin.userAdd(b("root"), b("root-pw")));
        get(admin.userGrantRole(b("root"), b("root")));
        get(admin.roleAdd(b("app-a")));
        get(admin.roleGrantPermission(b("app-a"), b("app-a/"), b("app-a0"), Permission.Type.READWRITE));
        get(admin.userAdd(b("ann"), b("ann-pw")));
        get(admin.userGrantRole(b("ann"), b("app-a")));
        get(admin.authEnable());
        try (Client root = Client.builder().endpoints(endpoints(0, 1, 2)).user(b("root")).password(b("root-pw")).build()) {
            try (Client ann = Client.builder().endpoints(endpoints(1, 2, 0)).user(b("ann")).password(b("ann-pw")).build();
                 Client nobody = Client.builder().endpoints(endpoints(2)).build()) {
                get(ann.getKVClient().put(b("app-a/x"), b("1")));
                assertEquals("1", s(get(ann.getKVClient().get(b("app-a/x"))).getKvs().get(0).getValue()));
                ExecutionException refused = assertThrows(ExecutionException.class,
                        () -> get(ann.getKVClient().put(b("app-b/x"), b("1"))));
                assertTrue(String.valueOf(refused.getCause().getMessage()).contains("etcdserver: permission denied"),
                        refused.getCause().toString());
                ExecutionException anonymous = assertThrows(ExecutionException.class,
                        () -> get(nobody.getKVClient().get(b("app-a/x"))));
                assertTrue(String.valueOf(anonymous.getCause().getMessage()).contains("user name is empty"),
                        anonymous.getCause().toString());
            } finally {
                get(root.getAuthClient().authDisable());
            }
        }
        List<String> users = new ArrayList<>();
        get(admin.userList()).getUsers().forEach(users::add);
        assertTrue(users.contains("ann"), users.toString());
    }
}
