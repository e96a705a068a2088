package io.rota.server;

import com.google.protobuf.ByteString;
import io.rota.proto.Compare;
import io.rota.proto.Error;
import io.rota.proto.Event;
import io.rota.proto.Frame;
import io.rota.proto.LeaseLeasesRequest;
import io.rota.proto.LeaseTimeToLiveRequest;
import io.rota.proto.LeaseTimeToLiveResponse;
import io.rota.proto.PutRequest;
import io.rota.proto.RegisterSessionRequest;
import io.rota.proto.RegisterSessionResponse;
import io.rota.proto.RequestOp;
import io.rota.proto.StatusRequest;
import io.rota.proto.TxnRequest;
import io.rota.proto.WatchCancelRequest;
import io.rota.proto.WatchRequest;
import io.rota.proto.WatchResponse;
import io.rota.testkit.Await;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static io.rota.server.Requests.bytes;
import static io.rota.server.Requests.get;
import static io.rota.server.Requests.grant;
import static io.rota.server.Requests.inSession;
import static io.rota.server.Requests.ok;
import static io.rota.server.Requests.put;
import static io.rota.server.Requests.watchPrefix;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Three in-JVM servers over the real client protocol (the tiny {@link FrameClient}). */
@Tag("cluster")
class ServerClusterTest {

    @RegisterExtension
    static final SharedCluster CLUSTER = new SharedCluster(Duration.ofMillis(300));

    @Test
    void writeThroughAFollowerIsForwardedAndALinearizableReadOnTheOtherFollowerSeesIt() {
        int leader = CLUSTER.get().awaitLeader();
        int follower = CLUSTER.get().follower();
        int other = 3 - leader - follower;
        try (FrameClient a = new FrameClient(CLUSTER.get().client(follower));
             FrameClient b = new FrameClient(CLUSTER.get().client(other))) {
            Frame put = ok(a.call(put("fwd/k", "v1")));
            long revision = put.getPutResponse().getHeader().getRevision();
            assertTrue(revision > 0);
            // Like etcd: the header names the member the client asked, even when the leader applied the write.
            assertEquals(follower + 1, put.getPutResponse().getHeader().getMemberId());
            Frame read = ok(b.call(get("fwd/k")));
            assertEquals("v1", read.getRangeResponse().getKvs(0).getValue().toStringUtf8());
            assertTrue(read.getRangeResponse().getHeader().getRevision() >= revision);
            assertEquals(other + 1, read.getRangeResponse().getHeader().getMemberId());
            assertTrue(read.getRangeResponse().getHeader().getRaftTerm() > 0);
        }
    }

    @Test
    void everyMemberAcceptsWritesWithoutNotLeader() {
        for (int i = 0; i < 3; i++) {
            try (FrameClient c = new FrameClient(CLUSTER.get().client(i))) {
                List<Long> calls = new ArrayList<>();
                for (int k = 0; k < 50; k++) {
                    calls.add(c.send(put("all/" + i + "/" + k, "x")));
                }
                for (long call : calls) {
                    ok(c.next(call));
                }
            }
        }
    }

    @Test
    void txnComparesAndAppliesAtomically() {
        try (FrameClient c = new FrameClient(CLUSTER.get().client(CLUSTER.get().follower()))) {
            Frame.Builder txn = Frame.newBuilder().setTxnRequest(TxnRequest.newBuilder()
                    .addCompare(Compare.newBuilder().setKey(bytes("txn/owner")).setTarget(Compare.Target.VERSION)
                            .setResult(Compare.Result.EQUAL).setVersion(0))
                    .addSuccess(RequestOp.newBuilder().setRequestPut(PutRequest.newBuilder()
                            .setKey(bytes("txn/owner")).setValue(bytes("app-1")))));
            assertTrue(ok(c.call(txn.clone())).getTxnResponse().getSucceeded());
            assertFalse(ok(c.call(txn.clone())).getTxnResponse().getSucceeded(), "the key exists now");
        }
    }

    @Test
    void aRetriedSequenceIsAppliedOnce() {
        try (FrameClient a = new FrameClient(CLUSTER.get().client(0)); FrameClient b = new FrameClient(CLUSTER.get().client(1))) {
            RegisterSessionResponse session = ok(a.call(Frame.newBuilder().setRegisterSessionRequest(RegisterSessionRequest.getDefaultInstance())))
                    .getRegisterSessionResponse();
            Frame first = ok(a.call(inSession(put("once/k", "v"), session, 1)));
            Frame retry = ok(b.call(inSession(put("once/k", "v"), session, 1)));
            assertEquals(first.getPutResponse().getHeader().getRevision(), retry.getPutResponse().getHeader().getRevision());
            Frame read = ok(b.call(get("once/k")));
            assertEquals(1, read.getRangeResponse().getKvs(0).getVersion(), "applied once");
        }
    }

    @Test
    void aMalformedFrameClosesOnlyThatConnection() {
        try (FrameClient bad = new FrameClient(CLUSTER.get().client(0)); FrameClient good = new FrameClient(CLUSTER.get().client(0))) {
            bad.sendRaw(new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff, 0x01, 0x02});
            Await.until(Duration.ofSeconds(10), bad::isClosed, "the malformed connection to close");
            ok(good.call(put("malformed/k", "still fine")));
        }
    }

    @Test
    void aTooLargeFrameGetsRequestTooLargeThenTheConnectionCloses() {
        try (FrameClient c = new FrameClient(CLUSTER.get().client(1))) {
            c.sendLength(10 << 20);
            Frame answer = c.next(0);
            assertEquals(Error.Code.REQUEST_TOO_LARGE, answer.getError().getCode());
            Await.until(Duration.ofSeconds(10), c::isClosed, "the connection to close");
        }
    }

    @Test
    void aTypedErrorLeavesTheConnectionUsable() {
        try (FrameClient c = new FrameClient(CLUSTER.get().client(0))) {
            Frame e = c.call(put("lease/none", "v", 424242));
            assertEquals(Error.Code.LEASE_NOT_FOUND, e.getError().getCode());
            ok(c.call(put("lease/none", "v")));
        }
    }

    @Test
    void aLeaseThatIsNotKeptAliveExpiresAfterItsTtl() {
        try (FrameClient c = new FrameClient(CLUSTER.get().client(CLUSTER.get().follower()))) {
            long lease = ok(c.call(grant(1))).getLeaseGrantResponse().getID();
            ok(c.call(put("lease/expiring", "v", lease)));
            long start = System.nanoTime();
            Await.until(Duration.ofSeconds(10), () -> ok(c.call(get("lease/expiring"))).getRangeResponse().getCount() == 0,
                    "the leased key to be deleted");
            long elapsedMs = (System.nanoTime() - start) / 1_000_000;
            assertTrue(elapsedMs >= 500, "expired too early: " + elapsedMs + " ms");
        }
    }

    @Test
    void leaseReadsAndSerializableRangesAnswerOnAFollower() {
        try (FrameClient c = new FrameClient(CLUSTER.get().client(CLUSTER.get().follower()))) {
            long lease = ok(c.call(grant(30))).getLeaseGrantResponse().getID();
            ok(c.call(put("ttl/k", "v", lease)));
            LeaseTimeToLiveResponse ttl = ok(c.call(Frame.newBuilder().setLeaseTimeToLiveRequest(
                    LeaseTimeToLiveRequest.newBuilder().setID(lease).setKeys(true)))).getLeaseTimeToLiveResponse();
            assertEquals(30, ttl.getGrantedTTL());
            assertTrue(ttl.getTTL() > 0 && ttl.getTTL() <= 30);
            assertEquals("ttl/k", ttl.getKeys(0).toStringUtf8());
            assertTrue(ok(c.call(Frame.newBuilder().setLeaseLeasesRequest(LeaseLeasesRequest.getDefaultInstance())))
                    .getLeaseLeasesResponse().getLeasesList().stream().anyMatch(l -> l.getID() == lease));
            Frame.Builder serializable = get("ttl/k");
            serializable.getRangeRequestBuilder().setSerializable(true);
            Await.until(Duration.ofSeconds(10), () -> ok(c.call(serializable.clone())).getRangeResponse().getCount() == 1,
                    "the follower to apply the put (a serializable read may lag)");
        }
    }

    @Test
    void statusNamesTheLeaderAndEveryMember() {
        int leader = CLUSTER.get().awaitLeader();
        try (FrameClient c = new FrameClient(CLUSTER.get().client(0))) {
            Frame s = ok(c.call(Frame.newBuilder().setStatusRequest(StatusRequest.getDefaultInstance())));
            assertEquals(leader + 1, s.getStatusResponse().getLeader());
            assertEquals(3, s.getStatusResponse().getMembersCount());
        }
    }

    @Test
    void aWatchFromAPastRevisionReplaysThenStreams() {
        try (FrameClient c = new FrameClient(CLUSTER.get().client(CLUSTER.get().follower()))) {
            long first = ok(c.call(put("w/a", "1"))).getPutResponse().getHeader().getRevision();
            ok(c.call(put("other/x", "ignored")));
            ok(c.call(put("w/b", "2")));
            long watch = c.send(watchPrefix("w/", first));
            assertTrue(c.next(watch).getWatchResponse().getCreated());
            List<String> seen = new ArrayList<>();
            long last = 0;
            while (seen.size() < 3) {
                if (seen.size() == 2) {
                    ok(c.call(put("w/c", "3")));
                }
                WatchResponse r = c.next(watch).getWatchResponse();
                for (Event e : r.getEventsList()) {
                    assertTrue(e.getKv().getModRevision() > last, "in order, once each");
                    last = e.getKv().getModRevision();
                    seen.add(e.getKv().getKey().toStringUtf8());
                }
            }
            assertEquals(List.of("w/a", "w/b", "w/c"), seen);
        }
    }

    @Test
    void aCanceledWatchGetsItsLastResponseAndNoMoreEvents() throws InterruptedException {
        try (FrameClient c = new FrameClient(CLUSTER.get().client(1))) {
            long watch = c.send(watchPrefix("cancel/", 0));
            WatchResponse created = c.next(watch).getWatchResponse();
            ok(c.call(put("cancel/a", "1")));
            assertEquals(1, c.next(watch).getWatchResponse().getEventsCount());
            long cancel = c.send(Frame.newBuilder().setWatchRequest(WatchRequest.newBuilder().setCancelRequest(
                    WatchCancelRequest.newBuilder().setWatchId(created.getWatchId()))));
            assertTrue(c.next(cancel).getWatchResponse().getCanceled());
            assertTrue(c.next(watch).getWatchResponse().getCanceled());
            ok(c.call(put("cancel/b", "2")));
            ok(c.call(get("cancel/b")));
            assertEquals(null, c.poll(watch, Duration.ofMillis(200)), "no event after the cancel");
        }
    }

    @Test
    void watchersThatAskGetProgressNotifications() {
        try (FrameClient c = new FrameClient(CLUSTER.get().client(0))) {
            long revision = ok(c.call(put("p/k", "v"))).getPutResponse().getHeader().getRevision();
            // From the next revision: member 0 may be a follower that has not applied the put yet,
            // and a watch "from now" there would still deliver it as an event.
            Frame.Builder create = watchPrefix("p/", revision + 1);
            create.getWatchRequestBuilder().getCreateRequestBuilder().setProgressNotify(true);
            long watch = c.send(create);
            assertTrue(c.next(watch).getWatchResponse().getCreated());
            WatchResponse progress = c.next(watch).getWatchResponse();
            assertEquals(0, progress.getEventsCount());
            assertTrue(progress.getHeader().getRevision() >= revision);
        }
    }

    @Test
    void aWatchOlderThanTheHistoryIsCanceledWithCompacted() {
        try (FrameClient c = new FrameClient(CLUSTER.get().client(CLUSTER.get().awaitLeader()))) {
            long first = ok(c.call(put("c/first", "v"))).getPutResponse().getHeader().getRevision();
            // 80 transactions of 128 puts: more events than the history keeps (10,000).
            List<Long> calls = new ArrayList<>();
            for (int t = 0; t < 80; t++) {
                TxnRequest.Builder txn = TxnRequest.newBuilder();
                for (int k = 0; k < 128; k++) {
                    txn.addSuccess(RequestOp.newBuilder().setRequestPut(PutRequest.newBuilder()
                            .setKey(bytes("c/" + t + "/" + k)).setValue(ByteString.EMPTY)));
                }
                calls.add(c.send(Frame.newBuilder().setTxnRequest(txn)));
            }
            calls.forEach(call -> ok(c.next(call)));
            long watch = c.send(watchPrefix("c/", first));
            WatchResponse created = c.next(watch).getWatchResponse();
            assertTrue(created.getCreated());
            WatchResponse canceled = c.next(watch).getWatchResponse();
            assertTrue(canceled.getCanceled());
            assertTrue(canceled.getCompactRevision() >= first, "compact revision " + canceled.getCompactRevision());
            assertTrue(canceled.getCancelReason().contains("COMPACTED"), canceled.getCancelReason());
            assertEquals(WatchResponse.CancelCode.COMPACTED, canceled.getCancelCode());
        }
    }
}
