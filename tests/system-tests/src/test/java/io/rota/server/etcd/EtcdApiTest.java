package io.rota.server.etcd;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.rota.etcd.api.AlarmRequest;
import io.rota.etcd.api.AlarmResponse;
import io.rota.etcd.api.AlarmType;
import io.rota.etcd.api.CampaignRequest;
import io.rota.etcd.api.CampaignResponse;
import io.rota.etcd.api.CompactionRequest;
import io.rota.etcd.api.ElectionGrpc;
import io.rota.etcd.api.LeaderKey;
import io.rota.etcd.api.LeaderRequest;
import io.rota.etcd.api.LeaderResponse;
import io.rota.etcd.api.MemberAddRequest;
import io.rota.etcd.api.MemberAddResponse;
import io.rota.etcd.api.MemberPromoteRequest;
import io.rota.etcd.api.MemberRemoveRequest;
import io.rota.etcd.api.MemberRemoveResponse;
import io.rota.etcd.api.MemberUpdateRequest;
import io.rota.etcd.api.MemberUpdateResponse;
import io.rota.etcd.api.ProclaimRequest;
import io.rota.etcd.api.ResignRequest;
import io.rota.etcd.api.SnapshotRequest;
import io.rota.etcd.api.SnapshotResponse;
import io.rota.etcd.api.ClusterGrpc;
import io.rota.etcd.api.Compare;
import io.rota.etcd.api.DeleteRangeRequest;
import io.rota.etcd.api.DeleteRangeResponse;
import io.rota.etcd.api.Event;
import io.rota.etcd.api.KVGrpc;
import io.rota.etcd.api.LeaseGrantRequest;
import io.rota.etcd.api.LeaseGrantResponse;
import io.rota.etcd.api.LeaseGrpc;
import io.rota.etcd.api.LeaseKeepAliveRequest;
import io.rota.etcd.api.LeaseKeepAliveResponse;
import io.rota.etcd.api.LeaseLeasesRequest;
import io.rota.etcd.api.LeaseRevokeRequest;
import io.rota.etcd.api.LeaseTimeToLiveRequest;
import io.rota.etcd.api.LeaseTimeToLiveResponse;
import io.rota.etcd.api.LockGrpc;
import io.rota.etcd.api.LockRequest;
import io.rota.etcd.api.LockResponse;
import io.rota.etcd.api.UnlockRequest;
import io.rota.etcd.api.MaintenanceGrpc;
import io.rota.etcd.api.MemberListRequest;
import io.rota.etcd.api.MemberListResponse;
import io.rota.etcd.api.PutRequest;
import io.rota.etcd.api.PutResponse;
import io.rota.etcd.api.RangeRequest;
import io.rota.etcd.api.RangeResponse;
import io.rota.etcd.api.RequestOp;
import io.rota.etcd.api.StatusRequest;
import io.rota.etcd.api.StatusResponse;
import io.rota.etcd.api.TxnRequest;
import io.rota.etcd.api.TxnResponse;
import io.rota.etcd.api.WatchCreateRequest;
import io.rota.etcd.api.WatchGrpc;
import io.rota.etcd.api.WatchRequest;
import io.rota.etcd.api.WatchResponse;
import io.rota.server.RotaServer;
import io.rota.server.ServerConfig;
import io.rota.testkit.Await;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static io.rota.testkit.Ports.freePort;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * etcd's API on a one-member Rota, through stubs generated from the etcd-api module's definitions: each
 * RPC's options, the header, and the error statuses etcd clients parse. (etcd's own clients against Rota:
 * EtcdctlProcessTest; wire compatibility of the recoded messages: EtcdWireTest.)
 */
@Tag("cluster")
class EtcdApiTest {

    @TempDir
    static Path dir;
    private static RotaServer server;
    private static ManagedChannel channel;
    private static KVGrpc.KVBlockingStub kvStub;
    private static LeaseGrpc.LeaseBlockingStub leaseStub;

    @BeforeAll
    static void start() {
        server = singleMember(dir, "etcd-api-test");
        channel = NettyChannelBuilder.forAddress(server.etcdAddress()).usePlaintext().build();
        kvStub = KVGrpc.newBlockingStub(channel);
        leaseStub = LeaseGrpc.newBlockingStub(channel);
        Await.until(Duration.ofSeconds(10), () -> server.view().isLeader(), "the single member to lead");
    }

    @AfterAll
    static void stop() throws InterruptedException {
        if (channel != null) {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        if (server != null) {
            server.close();
        }
    }

    /** A deadline per call (a stub's deadline is absolute: it would run out for every later call). */
    private static KVGrpc.KVBlockingStub kv() {
        return kvStub.withDeadlineAfter(10, TimeUnit.SECONDS);
    }

    private static LeaseGrpc.LeaseBlockingStub lease() {
        return leaseStub.withDeadlineAfter(10, TimeUnit.SECONDS);
    }

    private static ByteString b(String s) {
        return ByteString.copyFromUtf8(s);
    }

    private static PutResponse put(String key, String value) {
        return kv().put(PutRequest.newBuilder().setKey(b(key)).setValue(b(value)).build());
    }

    /** etcd's prefix range end: the prefix with its last byte plus one. */
    private static ByteString prefixEnd(String prefix) {
        byte[] end = prefix.getBytes();
        end[end.length - 1]++;
        return ByteString.copyFrom(end);
    }

    @Test
    @org.junit.jupiter.api.DisplayName("issue 30 (fuzz seed 7): an error that echoes a huge argument is a typed status,"
            + " its message cut short, not an HTTP/2 failure of the call")
    void anErrorEchoingAHugeArgumentIsStillTyped() {
        io.grpc.StatusRuntimeException e = org.junit.jupiter.api.Assertions.assertThrows(
                io.grpc.StatusRuntimeException.class, () -> io.rota.etcd.api.ClusterGrpc.newBlockingStub(channel)
                        .withDeadlineAfter(10, TimeUnit.SECONDS).memberAdd(io.rota.etcd.api.MemberAddRequest.newBuilder()
                                .addPeerURLs("http://" + "h".repeat(20_000) + ":2380").setIsLearner(true).build()));
        assertEquals(io.grpc.Status.Code.INVALID_ARGUMENT, e.getStatus().getCode(), e.toString());
        assertTrue(e.getStatus().getDescription().length() < 700, e.getStatus().getDescription());
        assertTrue(e.getStatus().getDescription().contains("more characters"), e.getStatus().getDescription());
    }

    @Test
    void putThenGetCarriesEtcdsHeaderAndRecord() {
        PutResponse first = put("hdr/a", "1");
        PutResponse second = kv().put(PutRequest.newBuilder().setKey(b("hdr/a")).setValue(b("2")).setPrevKv(true).build());
        assertEquals("1", second.getPrevKv().getValue().toStringUtf8());
        assertEquals(first.getHeader().getRevision() + 1, second.getHeader().getRevision());
        assertEquals(EtcdCodec.clusterId("etcd-api-test"), second.getHeader().getClusterId());
        assertEquals(1, second.getHeader().getMemberId());
        assertTrue(second.getHeader().getRaftTerm() >= 1);

        RangeResponse got = kv().range(RangeRequest.newBuilder().setKey(b("hdr/a")).build());
        assertEquals(1, got.getCount());
        assertEquals("2", got.getKvs(0).getValue().toStringUtf8());
        assertEquals(2, got.getKvs(0).getVersion());
        assertEquals(first.getHeader().getRevision(), got.getKvs(0).getCreateRevision());
        assertEquals(second.getHeader().getRevision(), got.getKvs(0).getModRevision());
        assertEquals(second.getHeader().getRevision(), got.getHeader().getRevision());
    }

    @Test
    void rangeOptions() {
        put("opt/a", "3");
        long revB = put("opt/b", "1").getHeader().getRevision();
        put("opt/c", "2");
        put("opt/a", "4");   // a: created first, modified last
        RangeRequest all = RangeRequest.newBuilder().setKey(b("opt/")).setRangeEnd(prefixEnd("opt/")).build();

        RangeResponse limited = kv().range(all.toBuilder().setLimit(2).build());
        assertEquals(List.of("opt/a", "opt/b"), keys(limited));
        assertTrue(limited.getMore());
        assertEquals(3, limited.getCount());

        assertEquals(List.of("opt/c", "opt/b", "opt/a"), keys(kv().range(all.toBuilder()
                .setSortOrder(RangeRequest.SortOrder.DESCEND).build())));
        assertEquals(List.of("opt/b", "opt/c", "opt/a"), keys(kv().range(all.toBuilder()
                .setSortOrder(RangeRequest.SortOrder.ASCEND).setSortTarget(RangeRequest.SortTarget.VALUE).build())));
        assertEquals(List.of("opt/b", "opt/c", "opt/a"), keys(kv().range(all.toBuilder()
                .setSortTarget(RangeRequest.SortTarget.MOD).setSortOrder(RangeRequest.SortOrder.ASCEND).build())));

        RangeResponse keysOnly = kv().range(all.toBuilder().setKeysOnly(true).build());
        assertTrue(keysOnly.getKvsList().stream().allMatch(kv -> kv.getValue().isEmpty()));
        RangeResponse countOnly = kv().range(all.toBuilder().setCountOnly(true).build());
        assertEquals(0, countOnly.getKvsCount());
        assertEquals(3, countOnly.getCount());

        // As of revision revB, only a and b existed, and a had its first value.
        RangeResponse past = kv().range(all.toBuilder().setRevision(revB).build());
        assertEquals(List.of("opt/a", "opt/b"), keys(past));
        assertEquals("3", past.getKvs(0).getValue().toStringUtf8());

        // Revision filters: created at or after b's revision; modified at or before it.
        assertEquals(List.of("opt/b", "opt/c"), keys(kv().range(all.toBuilder().setMinCreateRevision(revB).build())));
        RangeResponse filtered = kv().range(all.toBuilder().setMaxModRevision(revB).setLimit(1).build());
        assertEquals(List.of("opt/b"), keys(filtered));
        assertFalse(filtered.getMore());
        assertEquals(3, filtered.getCount());
        // A range in a txn is filtered the same way: etcd's applier filters every range (design Y44).
        TxnResponse inTxn = kv().txn(TxnRequest.newBuilder().addSuccess(RequestOp.newBuilder()
                .setRequestRange(all.toBuilder().setMinCreateRevision(revB))).build());
        assertEquals(List.of("opt/b", "opt/c"), keys(inTxn.getResponses(0).getResponseRange()));

        assertEquals(List.of("opt/a", "opt/b", "opt/c"), keys(kv().range(all.toBuilder().setSerializable(true).build())));
    }

    private static List<String> keys(RangeResponse r) {
        return r.getKvsList().stream().map(kv -> kv.getKey().toStringUtf8()).toList();
    }

    @Test
    void deleteRangeWithPrevKvs() {
        put("del/a", "1");
        put("del/b", "2");
        DeleteRangeResponse d = kv().deleteRange(DeleteRangeRequest.newBuilder().setKey(b("del/"))
                .setRangeEnd(prefixEnd("del/")).setPrevKv(true).build());
        assertEquals(2, d.getDeleted());
        assertEquals(List.of("1", "2"), d.getPrevKvsList().stream().map(kv -> kv.getValue().toStringUtf8()).toList());
        assertEquals(0, kv().range(RangeRequest.newBuilder().setKey(b("del/")).setRangeEnd(prefixEnd("del/"))
                .build()).getCount());
    }

    @Test
    void txnTakesTheBranchItsComparesChoose() {
        long created = put("txn/k", "v1").getHeader().getRevision();
        TxnRequest cas = TxnRequest.newBuilder()
                .addCompare(Compare.newBuilder().setKey(b("txn/k")).setTarget(Compare.CompareTarget.MOD)
                        .setResult(Compare.CompareResult.EQUAL).setModRevision(created))
                .addSuccess(RequestOp.newBuilder().setRequestPut(PutRequest.newBuilder().setKey(b("txn/k"))
                        .setValue(b("v2"))))
                .addSuccess(RequestOp.newBuilder().setRequestRange(RangeRequest.newBuilder().setKey(b("txn/k"))))
                .addFailure(RequestOp.newBuilder().setRequestRange(RangeRequest.newBuilder().setKey(b("txn/k"))))
                .build();
        TxnResponse won = kv().txn(cas);
        assertTrue(won.getSucceeded());
        assertEquals(2, won.getResponsesCount());
        assertEquals("v2", won.getResponses(1).getResponseRange().getKvs(0).getValue().toStringUtf8());
        assertEquals(EtcdCodec.clusterId("etcd-api-test"), won.getResponses(0).getResponsePut().getHeader().getClusterId());

        TxnResponse lost = kv().txn(cas);   // the mod revision moved on
        assertFalse(lost.getSucceeded());
        assertEquals("v2", lost.getResponses(0).getResponseRange().getKvs(0).getValue().toStringUtf8());
    }

    /**
     * etcd 3.3's nested txn (design Y40-Y42): the whole tree at one revision, its compares on the state before
     * the outer txn's writes, response_txn answers, one watch response with every event; a key put twice
     * across levels is etcd's duplicate-key error; deeper than the limit is refused naming it.
     */
    @Test
    void nestedTxnAppliesAtOneRevisionAndWatchersSeeItsEvents() throws InterruptedException {
        put("ntx/old", "x");
        BlockingQueue<WatchResponse> got = new LinkedBlockingQueue<>();
        StreamObserver<WatchRequest> watch = WatchGrpc.newStub(channel).watch(collect(got));
        watch.onNext(WatchRequest.newBuilder().setCreateRequest(WatchCreateRequest.newBuilder().setKey(b("ntx/"))
                .setRangeEnd(prefixEnd("ntx/"))).build());
        assertTrue(next(got).getCreated());

        Compare oldMissing = Compare.newBuilder().setKey(b("ntx/old")).setTarget(Compare.CompareTarget.VERSION)
                .setResult(Compare.CompareResult.EQUAL).setVersion(0).build();
        TxnRequest inner = TxnRequest.newBuilder().addCompare(oldMissing)
                .addSuccess(RequestOp.newBuilder().setRequestPut(PutRequest.newBuilder().setKey(b("ntx/then"))))
                .addFailure(RequestOp.newBuilder().setRequestPut(PutRequest.newBuilder().setKey(b("ntx/else"))
                        .setValue(b("e"))))
                .addFailure(RequestOp.newBuilder().setRequestRange(RangeRequest.newBuilder().setKey(b("ntx/a"))))
                .build();
        TxnResponse r = kv().txn(TxnRequest.newBuilder()
                .addSuccess(RequestOp.newBuilder().setRequestPut(PutRequest.newBuilder().setKey(b("ntx/a"))
                        .setValue(b("1"))))
                .addSuccess(RequestOp.newBuilder().setRequestDeleteRange(DeleteRangeRequest.newBuilder()
                        .setKey(b("ntx/old"))))
                .addSuccess(RequestOp.newBuilder().setRequestTxn(inner)).build());
        assertTrue(r.getSucceeded());
        TxnResponse nested = r.getResponses(2).getResponseTxn();
        assertFalse(nested.getSucceeded(), "its compare saw ntx/old before the outer delete");
        assertEquals("1", nested.getResponses(1).getResponseRange().getKvs(0).getValue().toStringUtf8());
        long revision = r.getHeader().getRevision();
        assertEquals(revision, nested.getResponses(0).getResponsePut().getHeader().getRevision());
        assertEquals(EtcdCodec.clusterId("etcd-api-test"), nested.getHeader().getClusterId());

        WatchResponse events = next(got);
        assertEquals(List.of("ntx/a", "ntx/old", "ntx/else"), events.getEventsList().stream()
                .map(e -> e.getKv().getKey().toStringUtf8()).toList());
        assertTrue(events.getEventsList().stream().allMatch(e -> e.getKv().getModRevision() == revision));
        watch.onCompleted();

        StatusRuntimeException duplicate = assertThrows(StatusRuntimeException.class, () -> kv().txn(TxnRequest
                .newBuilder().addSuccess(RequestOp.newBuilder().setRequestPut(PutRequest.newBuilder()
                        .setKey(b("ntx/else")))).addSuccess(RequestOp.newBuilder().setRequestTxn(inner)).build()));
        assertEquals(Status.Code.INVALID_ARGUMENT, duplicate.getStatus().getCode());
        assertEquals(EtcdErrors.DUPLICATE_KEY, duplicate.getStatus().getDescription());

        TxnRequest deep = TxnRequest.getDefaultInstance();
        for (int i = 0; i < io.rota.server.kv.Limits.MAX_TXN_DEPTH; i++) {
            deep = TxnRequest.newBuilder().addSuccess(RequestOp.newBuilder().setRequestTxn(deep)).build();
        }
        TxnRequest tooDeep = deep;
        StatusRuntimeException refused = assertThrows(StatusRuntimeException.class, () -> kv().txn(tooDeep));
        assertEquals(Status.Code.INVALID_ARGUMENT, refused.getStatus().getCode());
        assertTrue(refused.getStatus().getDescription().contains("deeper than 32 levels"), refused::toString);
    }

    /** etcd's checkIntervals at the door (design Y43): a put that a delete of the same txn covers is a duplicate. */
    @Test
    void txnPutUnderADeleteOfTheSameTxnIsADuplicateAsInEtcd() {
        RequestOp putK = RequestOp.newBuilder().setRequestPut(PutRequest.newBuilder().setKey(b("dup/k"))).build();
        RequestOp deletePrefix = RequestOp.newBuilder().setRequestDeleteRange(DeleteRangeRequest.newBuilder()
                .setKey(b("dup/")).setRangeEnd(prefixEnd("dup/"))).build();
        for (TxnRequest refused : List.of(
                TxnRequest.newBuilder().addSuccess(deletePrefix).addSuccess(putK).build(),
                TxnRequest.newBuilder().addFailure(putK).addFailure(deletePrefix).build(),
                TxnRequest.newBuilder().addSuccess(deletePrefix).addSuccess(RequestOp.newBuilder().setRequestTxn(
                        TxnRequest.newBuilder().addFailure(putK))).build())) {
            StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> kv().txn(refused));
            assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode());
            assertEquals(EtcdErrors.DUPLICATE_KEY, e.getStatus().getDescription());
        }
        // etcd's check reads range_end "\0" literally, so a delete "from key" covers no put: it passes, as there.
        // ("~" sorts after every other test's keys, so the delete from it reaches none of theirs.)
        TxnResponse fromKey = kv().txn(TxnRequest.newBuilder().addSuccess(RequestOp.newBuilder()
                .setRequestDeleteRange(DeleteRangeRequest.newBuilder().setKey(b("~dup/")).setRangeEnd(b("\0"))))
                .addSuccess(RequestOp.newBuilder().setRequestPut(PutRequest.newBuilder().setKey(b("~dup/k"))))
                .build());
        assertTrue(fromKey.getSucceeded());
    }

    @Test
    void errorsAreEtcdsStatusesAndMessages() {
        StatusRuntimeException empty = assertThrows(StatusRuntimeException.class, () -> put("", "x"));
        assertEquals(Status.Code.INVALID_ARGUMENT, empty.getStatus().getCode());
        assertEquals("etcdserver: key is not provided", empty.getStatus().getDescription());

        StatusRuntimeException missing = assertThrows(StatusRuntimeException.class, () -> kv().put(PutRequest.newBuilder()
                .setKey(b("err/none")).setIgnoreValue(true).build()));
        assertEquals("etcdserver: key not found", missing.getStatus().getDescription());

        long now = put("err/k", "v").getHeader().getRevision();
        StatusRuntimeException future = assertThrows(StatusRuntimeException.class, () -> kv().range(RangeRequest
                .newBuilder().setKey(b("err/k")).setRevision(now + 1000).build()));
        assertEquals(Status.Code.OUT_OF_RANGE, future.getStatus().getCode());
        assertEquals("etcdserver: mvcc: required revision is a future revision", future.getStatus().getDescription());

        StatusRuntimeException noLease = assertThrows(StatusRuntimeException.class, () -> kv().put(PutRequest.newBuilder()
                .setKey(b("err/l")).setValue(b("v")).setLease(424242).build()));
        assertEquals(Status.Code.NOT_FOUND, noLease.getStatus().getCode());
        assertEquals("etcdserver: requested lease not found", noLease.getStatus().getDescription());

        StatusRuntimeException revoke = assertThrows(StatusRuntimeException.class, () -> lease().leaseRevoke(
                LeaseRevokeRequest.newBuilder().setID(424242).build()));
        assertEquals("etcdserver: requested lease not found", revoke.getStatus().getDescription());

        StatusRuntimeException compact = assertThrows(StatusRuntimeException.class, () -> kv().compact(
                CompactionRequest.newBuilder().setRevision(1_000_000).build()));
        assertEquals(Status.Code.OUT_OF_RANGE, compact.getStatus().getCode());
        assertEquals("etcdserver: mvcc: required revision is a future revision", compact.getStatus().getDescription());
    }

    @Test
    @DisplayName("Compact drops the history at and below the revision: a read below it, or compacting there again, is etcd's compacted error")
    void compactThenReadBelowIsCompacted() {
        long before = put("compact/k", "1").getHeader().getRevision();
        long at = put("compact/k", "2").getHeader().getRevision();
        kv().compact(CompactionRequest.newBuilder().setRevision(at).setPhysical(true).build());
        assertEquals("2", kv().range(RangeRequest.newBuilder().setKey(b("compact/k")).setRevision(at).build())
                .getKvs(0).getValue().toStringUtf8(), "the compact revision itself is still readable");
        StatusRuntimeException below = assertThrows(StatusRuntimeException.class, () -> kv().range(
                RangeRequest.newBuilder().setKey(b("compact/k")).setRevision(before).build()));
        assertEquals(Status.Code.OUT_OF_RANGE, below.getStatus().getCode());
        assertEquals(EtcdErrors.COMPACTED, below.getStatus().getDescription());
        StatusRuntimeException again = assertThrows(StatusRuntimeException.class, () -> kv().compact(
                CompactionRequest.newBuilder().setRevision(at).build()));
        assertEquals(EtcdErrors.COMPACTED, again.getStatus().getDescription());
    }

    private static MaintenanceGrpc.MaintenanceBlockingStub maintenance() {
        return MaintenanceGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
    }

    @Test
    @DisplayName("Alarm GET lists the replicated alarms, DEACTIVATE disarms, ACTIVATE is refused; Status reports the accounted size")
    void alarmsAndStatusSize() {
        assertEquals(0, maintenance().alarm(AlarmRequest.newBuilder().setAction(AlarmRequest.AlarmAction.GET).build())
                .getAlarmsCount());
        AlarmResponse disarmed = maintenance().alarm(AlarmRequest.newBuilder()
                .setAction(AlarmRequest.AlarmAction.DEACTIVATE).setAlarm(AlarmType.NOSPACE).build());
        assertEquals(0, disarmed.getAlarmsCount());
        assertEquals(EtcdCodec.clusterId("etcd-api-test"), disarmed.getHeader().getClusterId());
        StatusRuntimeException activate = assertThrows(StatusRuntimeException.class, () -> maintenance().alarm(
                AlarmRequest.newBuilder().setAction(AlarmRequest.AlarmAction.ACTIVATE).setAlarm(AlarmType.NOSPACE)
                        .build()));
        assertEquals(Status.Code.INVALID_ARGUMENT, activate.getStatus().getCode());

        put("size/k", "x".repeat(1000));
        StatusResponse status = maintenance().status(StatusRequest.getDefaultInstance());
        assertTrue(status.getDbSize() >= 1000, "dbSize is the accounted size: " + status.getDbSize());
        assertTrue(status.getRaftAppliedIndex() >= 1 && status.getErrorsCount() == 0, status.toString());
    }

    @Test
    @DisplayName("Snapshot streams the member's image as a Rota backup file: remaining_bytes counts down to 0 and the saved bytes pass the backup checks")
    void snapshotIsARotaBackupFile() throws Exception {
        put("snap/k", "v");
        java.io.ByteArrayOutputStream saved = new java.io.ByteArrayOutputStream();
        java.util.Iterator<SnapshotResponse> stream = MaintenanceGrpc.newBlockingStub(channel)
                .withDeadlineAfter(20, TimeUnit.SECONDS).snapshot(SnapshotRequest.getDefaultInstance());
        long remaining = -1;
        while (stream.hasNext()) {
            SnapshotResponse r = stream.next();
            r.getBlob().writeTo(saved);
            assertTrue(remaining < 0 || r.getRemainingBytes() < remaining, "remaining_bytes counts down");
            remaining = r.getRemainingBytes();
        }
        assertEquals(0, remaining);
        byte[] bytes = saved.toByteArray();
        // etcd's convention, which etcdctl checks: 32 bytes past a multiple of 512, ending in the SHA-256 of the rest.
        assertEquals(32, bytes.length % 512);
        assertEquals(ByteString.copyFrom(java.security.MessageDigest.getInstance("SHA-256")
                .digest(java.util.Arrays.copyOf(bytes, bytes.length - 32))), ByteString.copyFrom(bytes, bytes.length - 32, 32));
        Path file = dir.resolve("etcd-snapshot.db");
        java.nio.file.Files.write(file, saved.toByteArray());
        io.rota.server.backup.BackupFile backup = io.rota.server.backup.BackupFile.read(file);
        assertTrue(backup.image().getKvsList().stream().anyMatch(kv -> kv.getKey().equals(b("snap/k"))),
                "the image holds the key written before the snapshot");
        assertEquals(maintenance().hashKV(io.rota.etcd.api.HashKVRequest.newBuilder()
                        .setRevision(backup.info().getRevision()).build()).getHashRevision(), backup.info().getRevision());
    }

    @Test
    void snapshotTrailerAlignsEveryFileSizeAsEtcdDoes() {
        for (long size = 0; size < 3 * MaintenanceService.ETCD_ALIGNMENT; size++) {
            long file = size + MaintenanceService.trailer(size).size() + MaintenanceService.SHA256_BYTES;
            assertEquals(MaintenanceService.SHA256_BYTES, file % MaintenanceService.ETCD_ALIGNMENT, "after " + size);
        }
    }

    @Test
    void hashIsTheCurrentRevisionsHashKv() {
        put("hash/k", "v");
        assertEquals(maintenance().hashKV(io.rota.etcd.api.HashKVRequest.getDefaultInstance()).getHash(),
                maintenance().hash(io.rota.etcd.api.HashRequest.getDefaultInstance()).getHash());
    }

    private static ClusterGrpc.ClusterBlockingStub cluster() {
        return ClusterGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
    }

    @Test
    @DisplayName("MemberAdd/Promote/Update/Remove are Rota's membership changes, strict, refused with etcd's membership errors")
    void memberAddPromoteRemove() {
        MemberAddResponse added = cluster().memberAdd(MemberAddRequest.newBuilder()
                .addPeerURLs("http://127.0.0.1:" + freePort()).setIsLearner(true).build());
        long id = added.getMember().getID();
        assertTrue(added.getMember().getIsLearner());
        assertEquals(2, added.getMembersCount());
        assertEquals(2, cluster().memberList(MemberListRequest.getDefaultInstance()).getMembersCount());

        StatusRuntimeException behind = assertThrows(StatusRuntimeException.class, () -> cluster().memberPromote(
                MemberPromoteRequest.newBuilder().setID(id).build()));
        assertEquals(Status.Code.FAILED_PRECONDITION, behind.getStatus().getCode());
        assertEquals(EtcdErrors.LEARNER_NOT_READY, behind.getStatus().getDescription());
        String moved = "http://127.0.0.1:" + freePort();
        MemberUpdateResponse update = cluster().memberUpdate(MemberUpdateRequest.newBuilder().setID(id)
                .addPeerURLs(moved).build());
        assertEquals(List.of(moved), update.getMembersList().stream().filter(m -> m.getID() == id)
                .findFirst().orElseThrow().getPeerURLsList(), update.toString());

        MemberRemoveResponse removed = cluster().memberRemove(MemberRemoveRequest.newBuilder().setID(id).build());
        assertEquals(1, removed.getMembersCount(), removed.toString());
        StatusRuntimeException gone = assertThrows(StatusRuntimeException.class, () -> cluster().memberRemove(
                MemberRemoveRequest.newBuilder().setID(id).build()));
        assertEquals(Status.Code.NOT_FOUND, gone.getStatus().getCode());
        assertEquals(EtcdErrors.MEMBER_NOT_FOUND, gone.getStatus().getDescription());
        // Strict, as etcd with --strict-reconfig-check (design MF2): a second voter that has not started would
        // make a quorum of 2 with 1 member answering.
        StatusRuntimeException notStarted = assertThrows(StatusRuntimeException.class, () -> cluster().memberAdd(
                MemberAddRequest.newBuilder().addPeerURLs("http://127.0.0.1:" + freePort()).build()));
        assertEquals(Status.Code.FAILED_PRECONDITION, notStarted.getStatus().getCode());
        assertEquals(EtcdErrors.NOT_ENOUGH_STARTED_MEMBERS, notStarted.getStatus().getDescription());
        assertEquals(1, cluster().memberList(MemberListRequest.getDefaultInstance()).getMembersCount());
        StatusRuntimeException bad = assertThrows(StatusRuntimeException.class, () -> cluster().memberAdd(
                MemberAddRequest.newBuilder().addPeerURLs("not a url").build()));
        assertEquals(Status.Code.INVALID_ARGUMENT, bad.getStatus().getCode());
        assertTrue(bad.getStatus().getDescription().startsWith(EtcdErrors.BAD_MEMBER_URLS));
    }

    @Test
    @DisplayName("MemberUpdate changes a member's one peer URL; an unknown id is etcd's 'member not found'")
    void memberUpdate() {
        MemberListResponse before = cluster().memberList(MemberListRequest.getDefaultInstance());
        io.rota.etcd.api.Member self = before.getMembers(0);
        MemberUpdateResponse same = cluster().memberUpdate(MemberUpdateRequest.newBuilder().setID(self.getID())
                .addAllPeerURLs(self.getPeerURLsList()).build());
        assertEquals(before.getHeader().getClusterId(), same.getHeader().getClusterId());
        assertEquals(before.getMembersList(), same.getMembersList(), "the same address again changes nothing");

        StatusRuntimeException unknown = assertThrows(StatusRuntimeException.class, () -> cluster().memberUpdate(
                MemberUpdateRequest.newBuilder().setID(0xbadcafeL).addPeerURLs("http://127.0.0.1:1").build()));
        assertEquals(Status.Code.NOT_FOUND, unknown.getStatus().getCode());
        assertEquals(EtcdErrors.MEMBER_NOT_FOUND, unknown.getStatus().getDescription());
        StatusRuntimeException two = assertThrows(StatusRuntimeException.class, () -> cluster().memberUpdate(
                MemberUpdateRequest.newBuilder().setID(self.getID()).addPeerURLs("http://127.0.0.1:1")
                        .addPeerURLs("http://127.0.0.1:2").build()));
        assertEquals(Status.Code.INVALID_ARGUMENT, two.getStatus().getCode());
        assertTrue(two.getStatus().getDescription().startsWith(EtcdErrors.BAD_MEMBER_URLS),
                two.getStatus().getDescription());
    }

    @Test
    @DisplayName("v3election: the oldest candidate leads, Proclaim needs the leadership, Observe follows values and leaders, Resign hands over")
    void electionCampaignProclaimObserveResign() throws Exception {
        ElectionGrpc.ElectionBlockingStub election = ElectionGrpc.newBlockingStub(channel);
        StatusRuntimeException none = assertThrows(StatusRuntimeException.class, () -> election
                .withDeadlineAfter(10, TimeUnit.SECONDS).leader(LeaderRequest.newBuilder().setName(b("elect")).build()));
        assertEquals("election: no leader", none.getStatus().getDescription());

        long first = lease().leaseGrant(LeaseGrantRequest.newBuilder().setTTL(30).build()).getID();
        long second = lease().leaseGrant(LeaseGrantRequest.newBuilder().setTTL(30).build()).getID();
        LeaderKey alice = election.withDeadlineAfter(10, TimeUnit.SECONDS).campaign(CampaignRequest.newBuilder()
                .setName(b("elect")).setLease(first).setValue(b("alice")).build()).getLeader();
        assertEquals("elect/" + Long.toHexString(first), alice.getKey().toStringUtf8());
        assertEquals(first, alice.getLease());

        BlockingQueue<LeaderResponse> observed = new LinkedBlockingQueue<>();
        ElectionGrpc.newStub(channel).observe(LeaderRequest.newBuilder().setName(b("elect")).build(), collect(observed));
        assertEquals("alice", nextLeader(observed).getKv().getValue().toStringUtf8());

        com.google.common.util.concurrent.ListenableFuture<CampaignResponse> bob = ElectionGrpc.newFutureStub(channel)
                .withDeadlineAfter(20, TimeUnit.SECONDS).campaign(CampaignRequest.newBuilder().setName(b("elect"))
                        .setLease(second).setValue(b("bob")).build());
        Await.until(Duration.ofSeconds(10), () -> kv().range(RangeRequest.newBuilder().setKey(b("elect/"))
                .setRangeEnd(prefixEnd("elect/")).build()).getCount() == 2, "bob to queue his key");
        assertFalse(bob.isDone(), "bob was elected while alice led");

        election.withDeadlineAfter(10, TimeUnit.SECONDS).proclaim(ProclaimRequest.newBuilder().setLeader(alice)
                .setValue(b("alice-2")).build());
        assertEquals("alice-2", nextLeader(observed).getKv().getValue().toStringUtf8());
        assertEquals("alice-2", election.withDeadlineAfter(10, TimeUnit.SECONDS).leader(LeaderRequest.newBuilder()
                .setName(b("elect")).build()).getKv().getValue().toStringUtf8());
        LeaderKey notLeader = alice.toBuilder().setKey(b("elect/" + Long.toHexString(second))).build();
        StatusRuntimeException refused = assertThrows(StatusRuntimeException.class, () -> election
                .withDeadlineAfter(10, TimeUnit.SECONDS).proclaim(ProclaimRequest.newBuilder().setLeader(notLeader)
                        .setValue(b("usurper")).build()));
        assertEquals("election: not leader", refused.getStatus().getDescription());

        election.withDeadlineAfter(10, TimeUnit.SECONDS).resign(ResignRequest.newBuilder().setLeader(alice).build());
        LeaderKey bobKey = bob.get(10, TimeUnit.SECONDS).getLeader();
        assertEquals("elect/" + Long.toHexString(second), bobKey.getKey().toStringUtf8());
        assertEquals("bob", nextLeader(observed).getKv().getValue().toStringUtf8());
    }

    private static LeaderResponse nextLeader(BlockingQueue<LeaderResponse> q) throws InterruptedException {
        LeaderResponse r = q.poll(10, TimeUnit.SECONDS);
        assertNotNull(r, "no Observe response within 10 s");
        return r;
    }

    @Test
    void leaseGrantTimeToLiveKeepAliveRevoke() throws InterruptedException {
        LeaseGrantResponse granted = lease().leaseGrant(LeaseGrantRequest.newBuilder().setTTL(30).build());
        long id = granted.getID();
        assertNotEquals(0, id);
        assertEquals(30, granted.getTTL());
        kv().put(PutRequest.newBuilder().setKey(b("lease/k")).setValue(b("v")).setLease(id).build());

        LeaseTimeToLiveResponse ttl = lease().leaseTimeToLive(LeaseTimeToLiveRequest.newBuilder().setID(id)
                .setKeys(true).build());
        assertEquals(30, ttl.getGrantedTTL());
        assertTrue(ttl.getTTL() > 0 && ttl.getTTL() <= 30, "TTL " + ttl.getTTL());
        assertEquals(List.of(b("lease/k")), ttl.getKeysList());
        assertTrue(lease().leaseLeases(LeaseLeasesRequest.getDefaultInstance()).getLeasesList().stream()
                .anyMatch(l -> l.getID() == id));

        BlockingQueue<LeaseKeepAliveResponse> answers = new LinkedBlockingQueue<>();
        StreamObserver<LeaseKeepAliveRequest> keepAlive = LeaseGrpc.newStub(channel).leaseKeepAlive(collect(answers));
        keepAlive.onNext(LeaseKeepAliveRequest.newBuilder().setID(id).build());
        LeaseKeepAliveResponse renewed = answers.poll(10, TimeUnit.SECONDS);
        assertNotNull(renewed, "no keep-alive answer");
        assertEquals(id, renewed.getID());
        assertEquals(30, renewed.getTTL());

        lease().leaseRevoke(LeaseRevokeRequest.newBuilder().setID(id).build());
        assertEquals(0, kv().range(RangeRequest.newBuilder().setKey(b("lease/k")).build()).getCount());
        assertEquals(-1, lease().leaseTimeToLive(LeaseTimeToLiveRequest.newBuilder().setID(id).build()).getTTL());
        keepAlive.onNext(LeaseKeepAliveRequest.newBuilder().setID(id).build());
        LeaseKeepAliveResponse gone = answers.poll(10, TimeUnit.SECONDS);
        assertNotNull(gone, "no keep-alive answer for the revoked lease");
        assertEquals(0, gone.getTTL());
        keepAlive.onCompleted();
    }

    @Test
    void watchFromARevisionWithPrevKvFiltersAndCancel() throws InterruptedException {
        long first = put("w/a", "1").getHeader().getRevision();
        put("w/a", "2");
        kv().deleteRange(DeleteRangeRequest.newBuilder().setKey(b("w/a")).build());

        BlockingQueue<WatchResponse> got = new LinkedBlockingQueue<>();
        StreamObserver<WatchRequest> watch = WatchGrpc.newStub(channel).watch(collect(got));
        watch.onNext(WatchRequest.newBuilder().setCreateRequest(WatchCreateRequest.newBuilder().setKey(b("w/"))
                .setRangeEnd(prefixEnd("w/")).setStartRevision(first).setPrevKv(true)
                .addFilters(WatchCreateRequest.FilterType.NODELETE)).build());
        WatchResponse created = next(got);
        assertTrue(created.getCreated());
        long watchId = created.getWatchId();
        WatchResponse p1 = next(got);
        assertEquals(Event.EventType.PUT, p1.getEvents(0).getType());
        assertEquals("1", p1.getEvents(0).getKv().getValue().toStringUtf8());
        WatchResponse p2 = next(got);
        assertEquals("2", p2.getEvents(0).getKv().getValue().toStringUtf8());
        assertEquals("1", p2.getEvents(0).getPrevKv().getValue().toStringUtf8());
        put("w/b", "live");   // the delete before it was filtered out
        WatchResponse live = next(got);
        assertEquals("w/b", live.getEvents(0).getKv().getKey().toStringUtf8());
        assertEquals(watchId, live.getWatchId());

        watch.onNext(WatchRequest.newBuilder().setCancelRequest(io.rota.etcd.api.WatchCancelRequest.newBuilder()
                .setWatchId(watchId)).build());
        WatchResponse canceled = next(got);
        assertTrue(canceled.getCanceled());
        assertEquals(watchId, canceled.getWatchId());

        // A refused create is answered as etcd does: created and canceled at once, with a reason.
        watch.onNext(WatchRequest.newBuilder().setCreateRequest(WatchCreateRequest.newBuilder().setKey(b("w/z"))
                .setRangeEnd(b("w/a"))).build());
        WatchResponse refused = next(got);
        assertTrue(refused.getCreated() && refused.getCanceled(), refused.toString());
        assertEquals(-1, refused.getWatchId());
        watch.onCompleted();
    }

    private static WatchResponse next(BlockingQueue<WatchResponse> q) throws InterruptedException {
        WatchResponse r = q.poll(10, TimeUnit.SECONDS);
        assertNotNull(r, "no watch response within 10 s");
        return r;
    }

    @Test
    void statusAndMemberList() {
        StatusResponse status = MaintenanceGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
                .status(StatusRequest.getDefaultInstance());
        assertEquals(1, status.getLeader());
        assertEquals(1, status.getHeader().getMemberId());
        assertTrue(status.getRaftIndex() >= 1 && status.getRaftTerm() >= 1);
        assertEquals(MaintenanceService.ETCD_API_VERSION, status.getVersion());

        MemberListResponse members = ClusterGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
                .memberList(MemberListRequest.getDefaultInstance());
        assertEquals(1, members.getMembersCount());
        assertEquals("n1", members.getMembers(0).getName());
        assertEquals(List.of("http://127.0.0.1:" + server.etcdAddress().getPort()), members.getMembers(0)
                .getClientURLsList());
    }

    @Test
    void v3lockHandsTheLockOverInCreateOrder() throws Exception {
        long first = lease().leaseGrant(LeaseGrantRequest.newBuilder().setTTL(30).build()).getID();
        long second = lease().leaseGrant(LeaseGrantRequest.newBuilder().setTTL(30).build()).getID();
        LockGrpc.LockBlockingStub locks = LockGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
        LockResponse held = locks.lock(LockRequest.newBuilder().setName(b("vlock")).setLease(first).build());
        assertEquals("vlock/" + Long.toHexString(first), held.getKey().toStringUtf8());

        com.google.common.util.concurrent.ListenableFuture<LockResponse> waiting = LockGrpc.newFutureStub(channel)
                .withDeadlineAfter(20, TimeUnit.SECONDS).lock(LockRequest.newBuilder().setName(b("vlock"))
                        .setLease(second).build());
        Await.until(Duration.ofSeconds(10), () -> kv().range(RangeRequest.newBuilder().setKey(b("vlock/"))
                .setRangeEnd(prefixEnd("vlock/")).build()).getCount() == 2, "the second caller to queue its key");
        assertFalse(waiting.isDone(), "the second caller got the lock while the first held it");
        locks.unlock(UnlockRequest.newBuilder().setKey(held.getKey()).build());
        assertEquals("vlock/" + Long.toHexString(second), waiting.get(10, TimeUnit.SECONDS).getKey().toStringUtf8());
    }

    /** One member, leading alone, with its etcd port on any free port of 127.0.0.1 (the etcd tests' server). */
    static RotaServer singleMember(Path dir, String clusterId) {
        InetSocketAddress peer = new InetSocketAddress("127.0.0.1", freePort());
        return RotaServer.start(ServerConfig.builder("n1").dataDir(dir.resolve("n1"))
                .listenClient(new InetSocketAddress("127.0.0.1", 0)).listenPeer(peer)
                .initialCluster(Map.of("n1", peer)).clusterId(clusterId).heartbeatMs(20).electionMs(100)
                .listenEtcd(new InetSocketAddress("127.0.0.1", 0)).build());
    }

    /** A stream observer that queues what it is sent (errors and completion are the test's to check otherwise). */
    static <T> StreamObserver<T> collect(BlockingQueue<T> into) {
        return new StreamObserver<>() {
            @Override
            public void onNext(T value) {
                into.add(value);
            }

            @Override
            public void onError(Throwable t) {
            }

            @Override
            public void onCompleted() {
            }
        };
    }

    @Test
    @DisplayName("while auth is enabled a call without a token is refused with etcd's 'user name is empty': the etcd port never bypasses auth")
    void refusesUnauthenticatedCallsWhileAuthIsEnabled() {
        String endpoint = "127.0.0.1:" + server.clientAddress().getPort();
        try (io.rota.client.RotaClient admin = io.rota.client.RotaClient.builder().endpoints(endpoint).build()) {
            admin.auth().addUser("root", "root-pw".toCharArray());
            admin.auth().grantRole("root", "root");
            admin.auth().enable();
        }
        try (io.rota.client.RotaClient root = io.rota.client.RotaClient.builder().endpoints(endpoint)
                .credentials("root", "root-pw".toCharArray()).build()) {
            try {
                StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> kv().range(
                        RangeRequest.newBuilder().setKey(ByteString.copyFromUtf8("any")).build()));
                assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode());
                assertEquals("etcdserver: user name is empty", e.getStatus().getDescription());
                StatusRuntimeException lock = assertThrows(StatusRuntimeException.class, () -> LockGrpc
                        .newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS).lock(LockRequest.newBuilder()
                                .setName(ByteString.copyFromUtf8("any-lock")).build()));
                assertEquals(Status.Code.INVALID_ARGUMENT, lock.getStatus().getCode(), "every service, not only KV");
            } finally {
                root.auth().disable();
                root.auth().deleteUser("root");
            }
        }
        assertEquals(0, kv().range(RangeRequest.newBuilder().setKey(ByteString.copyFromUtf8("after-auth")).build())
                .getCount(), "served again once auth is disabled");
    }
}
