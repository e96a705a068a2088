package io.rota.server;

import com.google.protobuf.ByteString;
import io.rota.client.Auth;
import io.rota.client.RotaClient;
import io.rota.proto.AuthRequest;
import io.rota.proto.AuthenticateRequest;
import io.rota.proto.Compare;
import io.rota.proto.Error;
import io.rota.proto.Frame;
import io.rota.proto.PutRequest;
import io.rota.proto.RangeRequest;
import io.rota.proto.RegisterSessionRequest;
import io.rota.proto.RegisterSessionResponse;
import io.rota.proto.RequestOp;
import io.rota.proto.SessionRef;
import io.rota.proto.TxnRequest;
import io.rota.proto.TxnResponse;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;

import static io.rota.server.Requests.bytes;
import static io.rota.server.Requests.get;
import static io.rota.server.Requests.inSession;
import static io.rota.server.Requests.put;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Sessions belong to their user (issue 31; Raft thesis §6.3) on three members with auth enabled: bob owns a
 * session; mallory, a user with no key permission at all, knows its id (the dashboard shows it) and its
 * sequence numbers (they count 1, 2, 3) — and sometimes even its secret. Under bob's session she can read none
 * of his remembered answers, swallow none of his writes, and plant no answer his lock would believe. Bob talks
 * to the leader and through a follower (his token names him on both); mallory through a follower. She may
 * write her own prefix, app-m/, and nothing else.
 */
@Tag("cluster")
class SessionOwnershipTest {

    @RegisterExtension
    static final SharedCluster CLUSTER = new SharedCluster(Duration.ofSeconds(10));

    private static String bobToken;
    private static String malloryToken;

    @BeforeAll
    static void setUp() {
        try (RotaClient root = RotaClient.builder().endpoints(CLUSTER.get().endpoints())
                .credentials("root", "root-pw").build()) {
            Auth auth = root.auth();   // auth is still off: anyone may manage it, as in etcd
            auth.addUser("root", "root-pw".toCharArray());
            auth.grantRole("root", "root");
            auth.addRole("owner-b");
            auth.grantPermission("owner-b", Auth.Permission.prefix(Auth.PermissionType.READWRITE, "app-b/"));
            auth.grantPermission("owner-b", Auth.Permission.prefix(Auth.PermissionType.READWRITE, "rota/"));
            auth.addRole("owner-m");
            auth.grantPermission("owner-m", Auth.Permission.prefix(Auth.PermissionType.READWRITE, "app-m/"));
            auth.addUser("bob", "bob-pw".toCharArray());
            auth.grantRole("bob", "owner-b");
            auth.addUser("mallory", "mallory-pw".toCharArray());
            auth.grantRole("mallory", "owner-m");
            auth.enable();
        }
        bobToken = login("bob", "bob-pw");
        malloryToken = login("mallory", "mallory-pw");
    }

    private static RotaClient as(String user, String password) {
        return RotaClient.builder().endpoints(CLUSTER.get().endpoints()).credentials(user, password).build();
    }

    private static String login(String user, String password) {
        try (FrameClient raw = new FrameClient(CLUSTER.get().client(0))) {
            Frame login = raw.call(Frame.newBuilder().setAuthRequest(AuthRequest.newBuilder()
                    .setAuthenticate(AuthenticateRequest.newBuilder().setName(user).setPassword(password))));
            String token = login.getAuthResponse().getToken();
            assertFalse(token.isEmpty(), login.toString());
            return token;
        }
    }

    /** An empty txn: no key to check, so any user may send it; its answer is "succeeded". */
    private static Frame.Builder emptyTxn() {
        return Frame.newBuilder().setTxnRequest(TxnRequest.getDefaultInstance());
    }

    /** {@code f} under session {@code clientId}'s {@code sequence} with {@code secret}, as mallory sends it. */
    private static Frame.Builder asMallory(Frame.Builder f, long clientId, ByteString secret, long sequence) {
        return f.setAuthToken(malloryToken)
                .setSession(SessionRef.newBuilder().setClientId(clientId).setSecret(secret).setSequence(sequence));
    }

    private static void assertRefused(Frame answer) {
        assertEquals(Error.Code.SESSION_EXPIRED, answer.getError().getCode(), answer.toString());
    }

    @Test
    @DisplayName("another user under bob's session id: cannot read his remembered txn answer, swallow his next write,"
            + " or plant the answer to his lock's txn — with or without his secret")
    void anotherUserCannotUseTheSession() {
        int leader = CLUSTER.get().awaitLeader();
        int follower = CLUSTER.get().follower();
        try (FrameClient bob = new FrameClient(CLUSTER.get().client(leader));
             FrameClient bobViaFollower = new FrameClient(CLUSTER.get().client(follower));
             FrameClient mallory = new FrameClient(CLUSTER.get().client(follower))) {
            RegisterSessionResponse session = bob.call(Frame.newBuilder().setAuthToken(bobToken)
                    .setRegisterSessionRequest(RegisterSessionRequest.getDefaultInstance())).getRegisterSessionResponse();
            assertEquals(16, session.getSecret().size(), "128 random bits");
            long id = session.getClientId();
            assertFalse(bob.call(inSession(put("app-b/secret", "s3cr3t"), session, 1).setAuthToken(bobToken)).hasError());

            // 1. His remembered answer (a txn's range values) stays his.
            Frame read = bob.call(inSession(Frame.newBuilder().setTxnRequest(TxnRequest.newBuilder()
                    .addSuccess(RequestOp.newBuilder().setRequestRange(RangeRequest.newBuilder()
                            .setKey(bytes("app-b/secret"))))), session, 2).setAuthToken(bobToken));
            assertEquals("s3cr3t", read.getTxnResponse().getResponses(0).getResponseRange().getKvs(0)
                    .getValue().toStringUtf8());
            for (ByteString secret : new ByteString[] {ByteString.EMPTY, session.getSecret()}) {
                Frame stolen = mallory.call(asMallory(emptyTxn(), id, secret, 2));
                assertRefused(stolen);
                assertFalse(stolen.toString().contains("s3cr3t"));
            }

            // 2. His next write is not swallowed: mallory's copy of sequence 3 is refused, his own is applied.
            assertRefused(mallory.call(asMallory(emptyTxn(), id, ByteString.EMPTY, 3)));
            assertRefused(mallory.call(asMallory(emptyTxn(), id, session.getSecret(), 3)));
            Frame write = bobViaFollower.call(inSession(put("app-b/next", "bob"), session, 3).setAuthToken(bobToken));
            assertFalse(write.hasError(), write.toString());
            Frame next = bob.call(get("app-b/next").setAuthToken(bobToken));
            assertEquals("bob", next.getRangeResponse().getKvs(0).getValue().toStringUtf8());

            // 3. No planted answer: the lock is held by another; mallory answers sequence 4 "succeeded" first.
            assertFalse(bob.call(put("app-b/lock", "held by another").setAuthToken(bobToken)).hasError());
            assertRefused(mallory.call(asMallory(emptyTxn(), id, ByteString.EMPTY, 4)));
            assertRefused(mallory.call(asMallory(emptyTxn(), id, session.getSecret(), 4)));
            Frame acquire = bob.call(inSession(Frame.newBuilder().setTxnRequest(TxnRequest.newBuilder()
                    .addCompare(Compare.newBuilder().setKey(bytes("app-b/lock")).setTarget(Compare.Target.CREATE)
                            .setResult(Compare.Result.EQUAL).setCreateRevision(0))
                    .addSuccess(RequestOp.newBuilder().setRequestPut(PutRequest.newBuilder().setKey(bytes("app-b/lock"))
                            .setValue(bytes("bob"))))), session, 4).setAuthToken(bobToken));
            TxnResponse answer = acquire.getTxnResponse();
            assertTrue(acquire.hasTxnResponse(), acquire.toString());
            assertFalse(answer.getSucceeded(), "bob's lock txn is answered by the cluster, not by mallory: " + acquire);
            Frame lock = bob.call(get("app-b/lock").setAuthToken(bobToken));
            assertEquals("held by another", lock.getRangeResponse().getKvs(0).getValue().toStringUtf8());
        }
    }

    /** The leader's applied index: a session id is the index of its registering entry. */
    private static long appliedIndex(int leader) {
        try (FrameClient raw = new FrameClient(CLUSTER.get().client(leader))) {
            Frame status = raw.call(Frame.newBuilder().setAuthToken(bobToken)
                    .setStatusRequest(io.rota.proto.StatusRequest.getDefaultInstance()));
            assertTrue(status.getStatusResponse().getRaftAppliedIndex() > 0, status.toString());
            return status.getStatusResponse().getRaftAppliedIndex();
        }
    }

    @Test
    @DisplayName("Lock.acquire believes no planted answer: mallory answers every sequence of every session bob may"
            + " have 'succeeded, put at revision r' first; bob's lock, held by root, is not his")
    void noPlantedAnswerMakesALockHeld() throws Exception {
        int leader = CLUSTER.get().awaitLeader();
        try (RotaClient root = as("root", "root-pw"); RotaClient bob = as("bob", "bob-pw");
             FrameClient mallory = new FrameClient(CLUSTER.get().client(CLUSTER.get().follower()))) {
            try (var held = io.rota.client.recipes.Lock.of(root, "shared").acquire(Duration.ofSeconds(10))) {
                long before = appliedIndex(leader);
                bob.kv().put("app-b/first", "registers bob's session");
                io.rota.client.recipes.Lock.of(bob, "warm-up").acquire(Duration.ofSeconds(10)).close();
                long after = appliedIndex(leader);
                // Every session bob may have, every sequence he may use next: "succeeded", a real put's answer.
                Frame.Builder plant = Frame.newBuilder().setTxnRequest(TxnRequest.newBuilder()
                        .addSuccess(RequestOp.newBuilder().setRequestPut(PutRequest.newBuilder()
                                .setKey(bytes("app-m/planted")).setValue(bytes("m")))));
                int planted = 0;
                for (long id = before; id <= after; id++) {
                    for (long sequence = 1; sequence <= 32; sequence++) {
                        planted += mallory.call(asMallory(plant.clone(), id, ByteString.EMPTY, sequence))
                                .hasTxnResponse() ? 1 : 0;
                    }
                }
                var lock = io.rota.client.recipes.Lock.of(bob, "shared");
                org.junit.jupiter.api.Assertions.assertThrows(io.rota.client.recipes.LockTimeoutException.class,
                        () -> lock.acquire(Duration.ofSeconds(2)), "root holds 'shared': bob must not believe he does");
                assertTrue(held.isHeld());
                assertEquals(0, planted, "answers mallory planted under sessions not hers");
            }
        }
    }
}
