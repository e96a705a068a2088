package io.rota.server;

import com.google.protobuf.ByteString;
import io.rota.proto.Event;
import io.rota.proto.Frame;
import io.rota.proto.PutRequest;
import io.rota.proto.RequestOp;
import io.rota.proto.TxnRequest;
import io.rota.proto.WatchResponse;
import io.rota.testkit.Await;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static io.rota.server.Requests.bytes;
import static io.rota.server.Requests.ok;
import static io.rota.server.Requests.put;
import static io.rota.server.Requests.watchPrefix;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Watches end to end under concurrent writes: resume on another member, and a slow watcher's cancel. */
@Tag("cluster")
class WatchEndToEndTest {


    @RegisterExtension
    static final SharedCluster CLUSTER = new SharedCluster(Duration.ofSeconds(10));

    @Test
    @DisplayName("etcd watch resume: watch from r on member A, disconnect, watch from last_seen + 1 on member B; "
            + "under concurrent writes the union is every revision of the prefix, in order, no gap, no duplicate")
    void aWatchResumedOnAnotherMemberMissesNothingAndRepeatsNothing() throws Exception {
        int a = CLUSTER.get().follower();
        int b = CLUSTER.get().awaitLeader();
        List<Long> expected = new CopyOnWriteArrayList<>();
        AtomicBoolean writerDone = new AtomicBoolean();
        try (FrameClient writer = new FrameClient(CLUSTER.get().client(3 - a - b))) {
            long r = ok(writer.call(put("resume/start", "0"))).getPutResponse().getHeader().getRevision();
            expected.add(r);
            CompletableFuture<Void> writes = CompletableFuture.runAsync(() -> {
                for (int i = 0; i < 300; i++) {
                    expected.add(ok(writer.call(put("resume/k" + (i % 17), "v" + i))).getPutResponse()
                            .getHeader().getRevision());
                    if (i % 4 == 0) {
                        ok(writer.call(put("noise/k", "n" + i))); // revisions the watch must not see
                    }
                }
                writerDone.set(true);
            });
            List<Long> seen = new ArrayList<>();
            try (FrameClient first = new FrameClient(CLUSTER.get().client(a))) {
                long watch = first.send(watchPrefix("resume/", r));
                assertTrue(first.next(watch).getWatchResponse().getCreated());
                while (seen.size() < 60) {
                    collect(first.next(watch).getWatchResponse(), seen);
                }
            }
            long lastSeen = seen.get(seen.size() - 1);
            try (FrameClient second = new FrameClient(CLUSTER.get().client(b))) {
                long watch = second.send(watchPrefix("resume/", lastSeen + 1));
                assertTrue(second.next(watch).getWatchResponse().getCreated());
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (true) {
                    boolean done = writerDone.get(); // read before the target: then the target is final
                    if (done && seen.get(seen.size() - 1) >= expected.get(expected.size() - 1)) {
                        break;
                    }
                    assertTrue(System.nanoTime() < deadline, "the resumed watch caught up within 60 s");
                    Frame f = second.poll(watch, Duration.ofMillis(100));
                    if (f != null) {
                        collect(f.getWatchResponse(), seen);
                    }
                }
            }
            writes.get(60, TimeUnit.SECONDS);
            assertTrue(writerDone.get());
            assertEquals(expected, seen, "every revision of resume/ from r exactly once, in order");
        }
    }

    @Test
    @DisplayName("etcd semantics: a watch from a revision ahead of the store sees nothing before that revision")
    void aWatchFromAFutureRevisionStartsThere() throws Exception {
        try (FrameClient c = new FrameClient(CLUSTER.get().client(CLUSTER.get().awaitLeader()))) {
            long now = ok(c.call(put("future/0", "x"))).getPutResponse().getHeader().getRevision();
            long start = now + 3;
            long watch = c.send(watchPrefix("future/", start));
            assertTrue(c.next(watch).getWatchResponse().getCreated());
            List<Long> expected = new ArrayList<>();
            for (int i = 1; i <= 5; i++) {
                long r = ok(c.call(put("future/" + i, "v" + i))).getPutResponse().getHeader().getRevision();
                if (r >= start) {
                    expected.add(r);
                }
            }
            assertFalse(expected.isEmpty(), "the writes reached the start revision");
            List<Long> seen = new ArrayList<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (seen.size() < expected.size() && System.nanoTime() < deadline) {
                Frame f = c.poll(watch, Duration.ofMillis(100));
                if (f != null) {
                    for (Event e : f.getWatchResponse().getEventsList()) {
                        seen.add(e.getKv().getModRevision());
                    }
                }
            }
            assertEquals(expected, seen, "only revisions from " + start + " on, each once, in order");
        }
    }

    private static Frame pollQuietly(FrameClient c, long callId) {
        try {
            return c.poll(callId, Duration.ofMillis(100));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    private static void collect(WatchResponse r, List<Long> seen) {
        assertFalse(r.getCanceled(), r::toString);
        for (Event e : r.getEventsList()) {
            assertTrue(e.getKv().getKey().toStringUtf8().startsWith("resume/"), e::toString);
            seen.add(e.getKv().getModRevision());
        }
    }

    @Test
    @DisplayName("etcd slow watchers: a client that stops reading is canceled with a reason naming where to "
            + "resume; other watchers get every event and writes stay fast (the apply path never waits)")
    void aWatcherThatNeverReadsIsCanceledWhileOthersAndWritesCarryOn() throws Exception {
        int leader = CLUSTER.get().awaitLeader();
        int follower = CLUSTER.get().follower();
        int maxTxns = 1_500; // 75 MB: far beyond any socket buffers plus the watcher's bound
        int putsPerTxn = 100;
        ByteString value = ByteString.copyFrom(new byte[500]);
        try (FrameClient writer = new FrameClient(CLUSTER.get().client(leader));
             FrameClient probe = new FrameClient(CLUSTER.get().client(follower));
             FrameClient good = new FrameClient(CLUSTER.get().client(follower));
             // A 4 KiB receive window and no reader: the server's socket, then its channel, then the watcher fill up.
             FrameClient slow = new FrameClient(CLUSTER.get().client(follower), 4096, false)) {
            long r0 = ok(writer.call(put("flood/start", "0"))).getPutResponse().getHeader().getRevision();
            long slowWatch = slow.send(watchPrefix("flood/", r0));
            long goodWatch = good.send(watchPrefix("flood/", r0));
            assertTrue(good.next(goodWatch).getWatchResponse().getCreated());
            Await.until(TestCluster.TIMEOUT, () -> CLUSTER.get().liveWatches(follower) == 2, "both watches registered");
            AtomicLong goodEvents = new AtomicLong();
            AtomicLong goodLast = new AtomicLong();
            AtomicLong want = new AtomicLong(Long.MAX_VALUE);
            long readerDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            CompletableFuture<Void> reader = CompletableFuture.runAsync(() -> {
                while (goodEvents.get() < want.get() && System.nanoTime() < readerDeadline) {
                    Frame f = pollQuietly(good, goodWatch);
                    if (f == null) {
                        continue;
                    }
                    WatchResponse w = f.getWatchResponse();
                    assertFalse(w.getCanceled(), w::toString);
                    for (Event e : w.getEventsList()) {
                        assertTrue(e.getKv().getModRevision() >= goodLast.get(), "in order");
                        goodLast.set(e.getKv().getModRevision());
                        goodEvents.incrementAndGet();
                    }
                }
            });

            long slowestProbeNanos = 0;
            ArrayDeque<Long> inFlight = new ArrayDeque<>();
            int txns = 0;
            // Flood until the hub drops the stuck watcher (checked every 20 txns), at most maxTxns.
            while (txns < maxTxns && (txns % 20 != 0 || txns == 0 || CLUSTER.get().liveWatches(follower) == 2)) {
                TxnRequest.Builder txn = TxnRequest.newBuilder();
                for (int k = 0; k < putsPerTxn; k++) {
                    txn.addSuccess(RequestOp.newBuilder().setRequestPut(PutRequest.newBuilder()
                            .setKey(bytes("flood/" + txns + "/" + k)).setValue(value)));
                }
                inFlight.add(writer.send(Frame.newBuilder().setTxnRequest(txn)));
                if (inFlight.size() >= 8) {
                    ok(writer.next(inFlight.poll()));
                }
                if (txns % 40 == 0) {
                    long begin = System.nanoTime();
                    ok(probe.call(put("probe/k", "p" + txns)));
                    slowestProbeNanos = Math.max(slowestProbeNanos, System.nanoTime() - begin);
                }
                txns++;
            }
            while (!inFlight.isEmpty()) {
                ok(writer.next(inFlight.poll()));
            }
            Await.until(TestCluster.TIMEOUT, () -> CLUSTER.get().liveWatches(follower) == 1, "the stuck watcher is dropped");
            want.set(1 + (long) txns * putsPerTxn);
            reader.get(60, TimeUnit.SECONDS);
            assertEquals(want.get(), goodEvents.get(), "the reading watcher got every event");
            assertTrue(slowestProbeNanos < TimeUnit.SECONDS.toNanos(3),
                    "a write took " + slowestProbeNanos / 1_000_000 + " ms while a watcher was stuck");

            slow.startReading();
            assertTrue(slow.next(slowWatch).getWatchResponse().getCreated());
            WatchResponse last;
            do {
                last = slow.next(slowWatch).getWatchResponse();
            } while (!last.getCanceled());
            assertTrue(last.getCancelReason().contains("fell behind")
                    && last.getCancelReason().contains("re-watch from revision"), last.getCancelReason());
            assertEquals(WatchResponse.CancelCode.FELL_BEHIND, last.getCancelCode());
            assertTrue(last.getResumeRevision() > 0, "a typed revision to resume from");
            // The connection itself is still fine.
            ok(slow.call(Requests.get("flood/start")));
        }
    }
}
