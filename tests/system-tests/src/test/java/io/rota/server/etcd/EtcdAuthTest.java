package io.rota.server.etcd;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.AbstractStub;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import io.rota.etcd.api.AuthEnableRequest;
import io.rota.etcd.api.AuthGrpc;
import io.rota.etcd.api.AuthRoleAddRequest;
import io.rota.etcd.api.AuthRoleGetRequest;
import io.rota.etcd.api.AuthRoleGetResponse;
import io.rota.etcd.api.AuthRoleGrantPermissionRequest;
import io.rota.etcd.api.AuthRoleListRequest;
import io.rota.etcd.api.AuthStatusRequest;
import io.rota.etcd.api.AuthUserAddRequest;
import io.rota.etcd.api.AuthUserGetRequest;
import io.rota.etcd.api.AuthUserGrantRoleRequest;
import io.rota.etcd.api.AuthUserListRequest;
import io.rota.etcd.api.AuthUserRevokeRoleRequest;
import io.rota.etcd.api.AuthenticateRequest;
import io.rota.etcd.api.Compare;
import io.rota.etcd.api.KVGrpc;
import io.rota.etcd.api.LeaseGrantRequest;
import io.rota.etcd.api.LeaseGrpc;
import io.rota.etcd.api.LeaseRevokeRequest;
import io.rota.etcd.api.Permission;
import io.rota.etcd.api.PutRequest;
import io.rota.etcd.api.RangeRequest;
import io.rota.etcd.api.RequestOp;
import io.rota.etcd.api.TxnRequest;
import io.rota.etcd.api.WatchCreateRequest;
import io.rota.etcd.api.WatchGrpc;
import io.rota.etcd.api.WatchRequest;
import io.rota.etcd.api.WatchResponse;
import io.rota.server.RotaServer;
import io.rota.testkit.Await;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * etcd's Auth service and the per-call checks on the etcd port, with generated stubs against one member:
 * users, roles and permissions set up through etcd's own calls, then every service checked as the user its
 * metadata token names — reads, writes, txn compares, watches and lease revokes — with etcd's statuses and
 * messages (design.md Y20). The users: root; alice reads {@code app-a/}; bob reads and writes {@code app-a/}.
 */
@Tag("cluster")
class EtcdAuthTest {

    @TempDir
    static Path dir;
    private static RotaServer server;
    private static ManagedChannel channel;
    private static String rootToken;

    @BeforeAll
    static void start() {
        server = EtcdApiTest.singleMember(dir, "etcd-auth-test");
        channel = NettyChannelBuilder.forAddress(server.etcdAddress()).usePlaintext().build();
        Await.until(Duration.ofSeconds(10), () -> server.view().isLeader(), "the single member to lead");

        StatusRuntimeException notEnabled = assertThrows(StatusRuntimeException.class, () -> auth(null)
                .authenticate(AuthenticateRequest.newBuilder().setName("root").setPassword("x").build()));
        assertStatus(notEnabled, Status.Code.FAILED_PRECONDITION, "etcdserver: authentication is not enabled");

        AuthGrpc.AuthBlockingStub admin = auth(null);
        admin.userAdd(AuthUserAddRequest.newBuilder().setName("root").setPassword("root-pw").build());
        admin.userGrantRole(AuthUserGrantRoleRequest.newBuilder().setUser("root").setRole("root").build());
        admin.roleAdd(AuthRoleAddRequest.newBuilder().setName("read-a").build());
        admin.roleGrantPermission(AuthRoleGrantPermissionRequest.newBuilder().setName("read-a").setPerm(
                Permission.newBuilder().setPermType(Permission.Type.READ).setKey(b("app-a/")).setRangeEnd(b("app-a0"))).build());
        admin.roleAdd(AuthRoleAddRequest.newBuilder().setName("rw-a").build());
        admin.roleGrantPermission(AuthRoleGrantPermissionRequest.newBuilder().setName("rw-a").setPerm(
                Permission.newBuilder().setPermType(Permission.Type.READWRITE).setKey(b("app-a/")).setRangeEnd(b("app-a0"))).build());
        admin.userAdd(AuthUserAddRequest.newBuilder().setName("alice").setPassword("alice-pw").build());
        admin.userGrantRole(AuthUserGrantRoleRequest.newBuilder().setUser("alice").setRole("read-a").build());
        admin.userAdd(AuthUserAddRequest.newBuilder().setName("bob").setPassword("bob-pw").build());
        admin.userGrantRole(AuthUserGrantRoleRequest.newBuilder().setUser("bob").setRole("rw-a").build());
        admin.authEnable(AuthEnableRequest.getDefaultInstance());
        rootToken = login("root", "root-pw");
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

    private static ByteString b(String s) {
        return ByteString.copyFromUtf8(s);
    }

    /** A stub whose calls carry {@code token} in the metadata key etcd clients use (none if null). */
    private static <S extends AbstractStub<S>> S as(S stub, String token) {
        S s = stub.withDeadlineAfter(10, TimeUnit.SECONDS);
        if (token == null) {
            return s;
        }
        Metadata md = new Metadata();
        md.put(Metadata.Key.of("token", Metadata.ASCII_STRING_MARSHALLER), token);
        return s.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(md));
    }

    private static AuthGrpc.AuthBlockingStub auth(String token) {
        return as(AuthGrpc.newBlockingStub(channel), token);
    }

    private static KVGrpc.KVBlockingStub kv(String token) {
        return as(KVGrpc.newBlockingStub(channel), token);
    }

    private static String login(String user, String password) {
        return auth(null).authenticate(AuthenticateRequest.newBuilder().setName(user).setPassword(password).build())
                .getToken();
    }

    private static void assertStatus(StatusRuntimeException e, Status.Code code, String message) {
        assertEquals(code, e.getStatus().getCode(), e.toString());
        assertEquals(message, e.getStatus().getDescription());
    }

    private static void denied(Executable call) {
        assertStatus(assertThrows(StatusRuntimeException.class, call), Status.Code.PERMISSION_DENIED,
                "etcdserver: permission denied");
    }

    @Test
    @DisplayName("without a token every call is refused with etcd's 'user name is empty'; a wrong password and a forged token get etcd's errors")
    void anonymousWrongPasswordAndForgedToken() {
        assertStatus(assertThrows(StatusRuntimeException.class, () -> kv(null).range(RangeRequest.newBuilder()
                .setKey(b("app-a/x")).build())), Status.Code.INVALID_ARGUMENT, "etcdserver: user name is empty");
        assertStatus(assertThrows(StatusRuntimeException.class, () -> as(LeaseGrpc.newBlockingStub(channel), null)
                .leaseGrant(LeaseGrantRequest.newBuilder().setTTL(5).build())), Status.Code.INVALID_ARGUMENT,
                "etcdserver: user name is empty");
        assertStatus(assertThrows(StatusRuntimeException.class, () -> login("alice", "wrong")),
                Status.Code.INVALID_ARGUMENT, "etcdserver: authentication failed, invalid user ID or password");
        assertStatus(assertThrows(StatusRuntimeException.class, () -> kv("v1.YWxpY2U.1.forged").range(
                RangeRequest.newBuilder().setKey(b("app-a/x")).build())), Status.Code.UNAUTHENTICATED,
                "etcdserver: invalid auth token");
    }

    @Test
    @DisplayName("a nested txn is authorised whole, as etcd does: a forbidden key in any op or compare of any branch refuses it")
    void nestedTxnIsCheckedAtEveryLevel() {
        String bob = login("bob", "bob-pw");
        RequestOp putA = RequestOp.newBuilder().setRequestPut(PutRequest.newBuilder().setKey(b("app-a/n"))
                .setValue(b("1"))).build();
        TxnRequest allowed = TxnRequest.newBuilder().addSuccess(RequestOp.newBuilder().setRequestTxn(
                TxnRequest.newBuilder().addSuccess(putA))).build();
        assertTrue(kv(bob).txn(allowed).getResponses(0).getResponseTxn().getSucceeded());

        // The forbidden put sits in a failure branch that will not run: refused all the same.
        TxnRequest forbiddenOp = TxnRequest.newBuilder().addSuccess(RequestOp.newBuilder().setRequestTxn(
                TxnRequest.newBuilder().addSuccess(putA).addFailure(RequestOp.newBuilder().setRequestPut(
                        PutRequest.newBuilder().setKey(b("app-b/n")).setValue(b("x")))))).build();
        denied(() -> kv(bob).txn(forbiddenOp));
        TxnRequest forbiddenCompare = TxnRequest.newBuilder().addSuccess(RequestOp.newBuilder().setRequestTxn(
                TxnRequest.newBuilder().addCompare(Compare.newBuilder().setKey(b("app-b/k"))
                        .setTarget(Compare.CompareTarget.VERSION).setResult(Compare.CompareResult.GREATER)
                        .setVersion(0)))).build();
        denied(() -> kv(bob).txn(forbiddenCompare));
        assertEquals(0, kv(rootToken).range(RangeRequest.newBuilder().setKey(b("app-b/n")).build()).getCount());
    }

    @Test
    @DisplayName("a reader of app-a/ reads it, and may not write it, read app-b/, compare on app-b/ in a txn, or watch app-b/")
    void readerIsHeldToItsPrefix() throws Exception {
        kv(rootToken).put(PutRequest.newBuilder().setKey(b("app-a/k")).setValue(b("1")).build());
        kv(rootToken).put(PutRequest.newBuilder().setKey(b("app-b/k")).setValue(b("2")).build());
        String alice = login("alice", "alice-pw");
        assertEquals("1", kv(alice).range(RangeRequest.newBuilder().setKey(b("app-a/k")).build()).getKvs(0)
                .getValue().toStringUtf8());
        denied(() -> kv(alice).put(PutRequest.newBuilder().setKey(b("app-a/k")).setValue(b("x")).build()));
        denied(() -> kv(alice).range(RangeRequest.newBuilder().setKey(b("app-b/k")).build()));
        denied(() -> kv(alice).txn(TxnRequest.newBuilder().addCompare(Compare.newBuilder().setKey(b("app-b/k"))
                .setTarget(Compare.CompareTarget.VERSION).setResult(Compare.CompareResult.GREATER).setVersion(0))
                .addSuccess(RequestOp.newBuilder().setRequestRange(RangeRequest.newBuilder().setKey(b("app-a/k"))))
                .build()));

        BlockingQueue<WatchResponse> got = new LinkedBlockingQueue<>();
        StreamObserver<WatchRequest> watch = as(WatchGrpc.newStub(channel), alice).withDeadline(null)
                .watch(EtcdApiTest.collect(got));
        watch.onNext(WatchRequest.newBuilder().setCreateRequest(WatchCreateRequest.newBuilder().setKey(b("app-b/k"))).build());
        WatchResponse refused = got.poll(10, TimeUnit.SECONDS);
        assertNotNull(refused, "an answer to the refused watch");
        assertTrue(refused.getCreated() && refused.getCanceled(), refused.toString());
        assertEquals("etcdserver: permission denied", refused.getCancelReason());
        watch.onNext(WatchRequest.newBuilder().setCreateRequest(WatchCreateRequest.newBuilder().setKey(b("app-a/k"))).build());
        WatchResponse created = got.poll(10, TimeUnit.SECONDS);
        assertNotNull(created, "the allowed watch on the same stream");
        assertTrue(created.getCreated() && !created.getCanceled(), created.toString());
        watch.onCompleted();
    }

    @Test
    @DisplayName("issue 33: revoking a watcher's role cancels its running watch with etcd's 'permission denied'")
    void revokingTheRoleCancelsARunningWatch() throws Exception {
        try {
            auth(rootToken).userAdd(AuthUserAddRequest.newBuilder().setName("carol").setPassword("carol-pw").build());
            rootToken = login("root", "root-pw");   // every auth change makes the tokens before it stale
            auth(rootToken).userGrantRole(AuthUserGrantRoleRequest.newBuilder().setUser("carol").setRole("read-a")
                    .build());
            String carol = login("carol", "carol-pw");
            BlockingQueue<WatchResponse> got = new LinkedBlockingQueue<>();
            StreamObserver<WatchRequest> watch = as(WatchGrpc.newStub(channel), carol).withDeadline(null)
                    .watch(EtcdApiTest.collect(got));
            watch.onNext(WatchRequest.newBuilder().setCreateRequest(WatchCreateRequest.newBuilder()
                    .setKey(b("app-a/carol"))).build());
            WatchResponse created = got.poll(10, TimeUnit.SECONDS);
            assertNotNull(created, "the watch is created");
            assertTrue(created.getCreated() && !created.getCanceled(), created.toString());
            rootToken = login("root", "root-pw");
            auth(rootToken).userRevokeRole(AuthUserRevokeRoleRequest.newBuilder().setName("carol").setRole("read-a")
                    .build());
            WatchResponse canceled = got.poll(10, TimeUnit.SECONDS);
            assertNotNull(canceled, "the running watch is canceled when the role is revoked");
            assertTrue(canceled.getCanceled() && canceled.getWatchId() == created.getWatchId(), canceled.toString());
            assertTrue(canceled.getCancelReason().startsWith("etcdserver: permission denied"),
                    canceled.getCancelReason());
            rootToken = login("root", "root-pw");
            kv(rootToken).put(PutRequest.newBuilder().setKey(b("app-a/carol")).setValue(b("after")).build());
            WatchResponse after = got.poll(1, TimeUnit.SECONDS);
            assertTrue(after == null, "nothing reaches the canceled watch: " + after);
            watch.onCompleted();
        } finally {
            rootToken = login("root", "root-pw");
        }
    }

    @Test
    @DisplayName("a writer of app-a/ may not revoke another user's lease (not found, issue 33), nor its own once it"
            + " holds an app-b/ key; root may")
    void leaseRevokeNeedsWriteOnItsKeys() {
        String bob = login("bob", "bob-pw");
        kv(bob).put(PutRequest.newBuilder().setKey(b("app-a/bob")).setValue(b("v")).build());
        denied(() -> kv(bob).put(PutRequest.newBuilder().setKey(b("app-b/bob")).setValue(b("v")).build()));
        long roots = as(LeaseGrpc.newBlockingStub(channel), rootToken).leaseGrant(LeaseGrantRequest.newBuilder()
                .setTTL(60).build()).getID();
        StatusRuntimeException notFound = assertThrows(StatusRuntimeException.class, () -> as(
                LeaseGrpc.newBlockingStub(channel), bob).leaseRevoke(LeaseRevokeRequest.newBuilder().setID(roots).build()));
        assertStatus(notFound, Status.Code.NOT_FOUND, "etcdserver: requested lease not found");
        as(LeaseGrpc.newBlockingStub(channel), rootToken).leaseRevoke(LeaseRevokeRequest.newBuilder().setID(roots).build());

        long lease = as(LeaseGrpc.newBlockingStub(channel), bob).leaseGrant(LeaseGrantRequest.newBuilder()
                .setTTL(60).build()).getID();
        kv(rootToken).put(PutRequest.newBuilder().setKey(b("app-b/leased")).setLease(lease).build());
        denied(() -> as(LeaseGrpc.newBlockingStub(channel), bob).leaseRevoke(LeaseRevokeRequest.newBuilder()
                .setID(lease).build()));
        as(LeaseGrpc.newBlockingStub(channel), rootToken).leaseRevoke(LeaseRevokeRequest.newBuilder().setID(lease).build());
        assertEquals(0, kv(rootToken).range(RangeRequest.newBuilder().setKey(b("app-b/leased")).build()).getCount());
    }

    @Test
    @DisplayName("auth administration needs root; reads of users and roles answer as etcd; a role change invalidates older tokens")
    void administrationAndTokenInvalidation() {
        String alice = login("alice", "alice-pw");
        denied(() -> auth(alice).userList(AuthUserListRequest.getDefaultInstance()));
        assertTrue(auth(rootToken).userList(AuthUserListRequest.getDefaultInstance()).getUsersList()
                .containsAll(List.of("alice", "bob", "root")));
        assertEquals(List.of("read-a"), auth(rootToken).userGet(AuthUserGetRequest.newBuilder().setName("alice").build())
                .getRolesList());
        assertTrue(auth(rootToken).roleList(AuthRoleListRequest.getDefaultInstance()).getRolesList()
                .containsAll(List.of("read-a", "root", "rw-a")));
        AuthRoleGetResponse root = auth(rootToken).roleGet(AuthRoleGetRequest.newBuilder().setRole("root").build());
        assertEquals(Permission.Type.READWRITE, root.getPerm(0).getPermType());
        assertTrue(auth(rootToken).authStatus(AuthStatusRequest.getDefaultInstance()).getEnabled());
        assertStatus(assertThrows(StatusRuntimeException.class, () -> auth(rootToken).userAdd(AuthUserAddRequest
                .newBuilder().setName("alice").setPassword("again").build())), Status.Code.FAILED_PRECONDITION,
                "etcdserver: user name already exists");
        assertStatus(assertThrows(StatusRuntimeException.class, () -> auth(rootToken).userGet(AuthUserGetRequest
                .newBuilder().setName("nobody").build())), Status.Code.FAILED_PRECONDITION, "etcdserver: user name not found");

        // Any user or role change bumps the auth revision: tokens handed out before it are refused, as the
        // native port refuses them, and etcd clients answer that by logging in again.
        auth(rootToken).roleAdd(AuthRoleAddRequest.newBuilder().setName("spare").build());
        assertStatus(assertThrows(StatusRuntimeException.class, () -> kv(alice).range(RangeRequest.newBuilder()
                .setKey(b("app-a/k")).build())), Status.Code.UNAUTHENTICATED, "etcdserver: invalid auth token");
        rootToken = login("root", "root-pw");
        kv(login("alice", "alice-pw")).range(RangeRequest.newBuilder().setKey(b("app-a/k")).build());
    }
}
