package io.rota.server;

import io.rota.proto.DeleteRangeRequest;
import io.rota.proto.Error;
import io.rota.proto.Frame;
import io.rota.proto.LeaseGrantRequest;
import io.rota.proto.Member;
import io.rota.proto.PublishMemberRequest;
import io.rota.proto.PutRequest;
import io.rota.proto.RangeRequest;
import io.rota.proto.RequestOp;
import io.rota.proto.TxnRequest;
import io.rota.proto.WatchCreateRequest;
import io.rota.proto.WatchRequest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;

import static io.rota.server.Requests.bytes;
import static io.rota.server.Requests.ok;
import static io.rota.server.Requests.put;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Bad requests over the wire (one member: this is about the protocol, not replication): each gets a typed
 * error with a human message on its own call id, and the connection keeps working.
 */
@Tag("cluster")
class InvalidArgumentTest {

    @TempDir
    static Path dir;
    static TestCluster cluster;
    static FrameClient client;

    @BeforeAll
    static void start() {
        cluster = new TestCluster(dir, 1, Duration.ofSeconds(10));
        cluster.awaitLeader();
        client = new FrameClient(cluster.client(0));
    }

    @AfterAll
    static void stop() {
        client.close();
        cluster.close();
    }

    /** The answer must be {@code code} with a message mentioning {@code words}; then the connection still serves a put. */
    private static void refused(Error.Code code, String words, Frame.Builder request) {
        Frame answer = client.call(request);
        assertEquals(code, answer.getError().getCode(), answer::toString);
        assertTrue(answer.getError().getMessage().contains(words), answer.getError().getMessage());
        ok(client.call(put("invalid/after", "still usable")));
    }

    @Test
    @DisplayName("issue 30: a member add or a PublishMember with an address nobody can dial is refused at the door,"
            + " and the member keeps serving")
    void membersWithBadAddressesAreRefusedAtTheDoor() {
        refused(Error.Code.INVALID_ARGUMENT, "peer address 'n4:71010': port 71010 is out of range 1–65535",
                Frame.newBuilder().setMemberAddRequest(io.rota.proto.MemberAddRequest.newBuilder().setName("n4")
                        .setPeerAddress("n4:71010").setLearner(true)));
        refused(Error.Code.INVALID_ARGUMENT, "member name 'n 4'", Frame.newBuilder().setMemberAddRequest(
                io.rota.proto.MemberAddRequest.newBuilder().setName("n 4").setPeerAddress("n4:7104")));
        refused(Error.Code.INVALID_ARGUMENT, "peer address 'n1:99999'", Frame.newBuilder()
                .setMemberUpdateRequest(io.rota.proto.MemberUpdateRequest.newBuilder().setId(1)
                        .setPeerAddress("n1:99999")));
        for (Member.Builder bad : java.util.List.of(
                Member.newBuilder().setId(1).setName("n1").setClientAddress("127.0.0.1:70001"),
                Member.newBuilder().setId(1).setName("n1").setClientAddress("127.0.0.1:7001").setPeerAddress("h:"),
                Member.newBuilder().setId(1).setName("n1").setClientAddress("127.0.0.1:7001").setEtcdAddress("a b:1"))) {
            refused(Error.Code.INVALID_ARGUMENT, "address '", Frame.newBuilder()
                    .setPublishMemberRequest(PublishMemberRequest.newBuilder().setMember(bad)));
        }
    }

    @Test
    @DisplayName("issue 30: membership requests naming member id 0 are INVALID_ARGUMENT on a connection that stays up")
    void memberIdZeroIsRefused() {
        for (Frame.Builder zero : java.util.List.of(
                Frame.newBuilder().setMemberPromoteRequest(io.rota.proto.MemberPromoteRequest.newBuilder().setId(0)),
                Frame.newBuilder().setMemberRemoveRequest(io.rota.proto.MemberRemoveRequest.newBuilder().setId(0)),
                Frame.newBuilder().setMemberUpdateRequest(io.rota.proto.MemberUpdateRequest.newBuilder().setId(0)
                        .setPeerAddress("n0:7100")),
                Frame.newBuilder().setMoveLeaderRequest(io.rota.proto.MoveLeaderRequest.newBuilder().setTargetId(0)))) {
            refused(Error.Code.INVALID_ARGUMENT, "member id 0 does not exist", zero);
        }
    }

    @Test
    @DisplayName("issue 30 (fuzz seed 2872385125731): disarming an alarm type this version does not know is"
            + " answered, not a closed connection")
    void anUnknownAlarmTypeIsAnswered() {
        Frame answer = client.call(Frame.newBuilder().setAlarmRequest(io.rota.proto.AlarmRequest.newBuilder()
                .setAction(io.rota.proto.AlarmRequest.AlarmAction.DEACTIVATE).setMemberId(1).setAlarmValue(7)));
        assertTrue(answer.hasAlarmResponse() || answer.hasError(), answer::toString);
        ok(client.call(put("invalid/after", "still usable")));
    }

    @Test
    @DisplayName("a PublishMember for an id outside the configuration is refused: the member table stays bounded")
    void publishOfANonMemberIsRefused() {
        for (long id : new long[] {0, 2, 99, Long.MAX_VALUE}) {
            refused(Error.Code.INVALID_ARGUMENT, "not in the cluster's configuration", Frame.newBuilder()
                    .setPublishMemberRequest(PublishMemberRequest.newBuilder().setMember(Member.newBuilder()
                            .setId(id).setName("fake").setClientAddress("127.0.0.1:1"))));
        }
    }

    @Test
    @DisplayName("etcd ErrGRPCEmptyKey: Put, Range and DeleteRange with an empty key are INVALID_ARGUMENT")
    void anEmptyKeyIsInvalid() {
        refused(Error.Code.INVALID_ARGUMENT, "key is empty", put("", "v"));
        refused(Error.Code.INVALID_ARGUMENT, "key is empty", Frame.newBuilder().setRangeRequest(RangeRequest.newBuilder()));
        refused(Error.Code.INVALID_ARGUMENT, "key is empty",
                Frame.newBuilder().setDeleteRangeRequest(DeleteRangeRequest.newBuilder()));
    }

    @Test
    @DisplayName("etcd Range: a range_end before the key is an empty interval (no keys, no error); a negative "
            + "limit or a future revision is INVALID_ARGUMENT")
    void rangeEndBeforeKeyIsEmptyAndBadRangeArgumentsAreInvalid() {
        ok(client.call(put("invalid/m", "v")));
        Frame empty = ok(client.call(Frame.newBuilder().setRangeRequest(RangeRequest.newBuilder()
                .setKey(bytes("invalid/z")).setRangeEnd(bytes("invalid/a")))));
        assertEquals(0, empty.getRangeResponse().getCount());
        refused(Error.Code.INVALID_ARGUMENT, "negative limit", Frame.newBuilder().setRangeRequest(
                RangeRequest.newBuilder().setKey(bytes("invalid/m")).setLimit(-1)));
        refused(Error.Code.INVALID_ARGUMENT, "future", Frame.newBuilder().setRangeRequest(
                RangeRequest.newBuilder().setKey(bytes("invalid/m")).setRevision(1L << 40)));
    }

    @Test
    @DisplayName("etcd mvcc ErrEmptyWatcherRange: a watch whose range_end is not after its key is INVALID_ARGUMENT")
    void aWatchWithRangeEndBeforeKeyIsInvalid() {
        refused(Error.Code.INVALID_ARGUMENT, "range_end", Frame.newBuilder().setWatchRequest(WatchRequest.newBuilder()
                .setCreateRequest(WatchCreateRequest.newBuilder().setKey(bytes("invalid/z"))
                        .setRangeEnd(bytes("invalid/a")))));
    }

    @Test
    @DisplayName("etcd LeaseGrant: a negative TTL or one over the maximum (365 days) is INVALID_ARGUMENT")
    void aLeaseTtlOutOfBoundsIsInvalid() {
        refused(Error.Code.INVALID_ARGUMENT, "TTL", Frame.newBuilder().setLeaseGrantRequest(
                LeaseGrantRequest.newBuilder().setTTL(-1)));
        refused(Error.Code.INVALID_ARGUMENT, "TTL", Frame.newBuilder().setLeaseGrantRequest(
                LeaseGrantRequest.newBuilder().setTTL(365L * 24 * 3600 + 1)));
    }

    @Test
    @DisplayName("etcd ErrGRPCTooManyOps: a txn over the op limit (128) is refused, typed, nothing applied; Rota's "
            + "documented code for it is REQUEST_TOO_LARGE (kv.md)")
    void aTxnWithTooManyOpsIsRefused() {
        TxnRequest.Builder txn = TxnRequest.newBuilder();
        for (int i = 0; i < 129; i++) {
            txn.addSuccess(RequestOp.newBuilder().setRequestPut(PutRequest.newBuilder().setKey(bytes("invalid/t" + i))));
        }
        refused(Error.Code.REQUEST_TOO_LARGE, "128", Frame.newBuilder().setTxnRequest(txn));
        assertEquals(0, ok(client.call(Frame.newBuilder().setRangeRequest(RangeRequest.newBuilder()
                .setKey(bytes("invalid/t0"))))).getRangeResponse().getCount(), "nothing applied");
    }
}
