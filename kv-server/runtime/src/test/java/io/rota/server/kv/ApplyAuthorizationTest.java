package io.rota.server.kv;

import com.google.protobuf.ByteString;
import io.rota.proto.AuthCommand;
import io.rota.proto.AuthEnableRequest;
import io.rota.proto.AuthRoleAddRequest;
import io.rota.proto.AuthRoleGrantPermissionRequest;
import io.rota.proto.AuthUserAddRequest;
import io.rota.proto.AuthUserGrantRoleRequest;
import io.rota.proto.Command;
import io.rota.proto.CommandResult;
import io.rota.proto.Compare;
import io.rota.proto.Error;
import io.rota.proto.LeaseGrantRequest;
import io.rota.proto.LeaseKeepAliveRequest;
import io.rota.proto.LeaseRevokeRequest;
import io.rota.proto.LeaseStatus;
import io.rota.proto.LeaseTimeToLiveRequest;
import io.rota.proto.Permission;
import io.rota.proto.PutRequest;
import io.rota.proto.RegisterSessionRequest;
import io.rota.proto.RequestOp;
import io.rota.proto.SessionRef;
import io.rota.proto.StoreSnapshot;
import io.rota.proto.TxnRequest;
import io.rota.server.authgate.Passwords;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static io.rota.server.kv.Harness.assertError;
import static io.rota.server.kv.Harness.b;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Authorization at apply (issue 33, as etcd's AuthInfo): a client's command carries its caller and the auth
 * revision its door checked it against, and apply checks it again on the applied auth state — the revision, the
 * user, the key permissions by the door's own rule, lease owners and the per-user quotas. Users: root; alice
 * (READWRITE alice/); bob (READWRITE bob/).
 */
class ApplyAuthorizationTest {

    private static String hash;

    @BeforeAll
    static void hashOnce() {
        hash = Passwords.hash("secret");
    }

    private static Harness enabled() {
        Harness h = new Harness();
        for (String user : List.of("root", "alice", "bob")) {
            h.run(Command.newBuilder().setAuth(AuthCommand.newBuilder()
                    .setUserAdd(AuthUserAddRequest.newBuilder().setName(user).setPasswordHash(hash))));
        }
        grantRole(h, "root", "root");
        for (String user : List.of("alice", "bob")) {
            h.run(Command.newBuilder().setAuth(AuthCommand.newBuilder()
                    .setRoleAdd(AuthRoleAddRequest.newBuilder().setName(user + "-rw"))));
            h.run(Command.newBuilder().setAuth(AuthCommand.newBuilder().setRoleGrantPermission(
                    AuthRoleGrantPermissionRequest.newBuilder().setName(user + "-rw").setPerm(Permission.newBuilder()
                            .setPermType(Permission.Type.READWRITE).setKey(b(user + "/")).setRangeEnd(b(user + "0"))))));
            grantRole(h, user, user + "-rw");
        }
        CommandResult enabled = h.run(Command.newBuilder().setAuth(AuthCommand.newBuilder()
                .setEnable(AuthEnableRequest.getDefaultInstance()).setTokenKey(ByteString.copyFrom(new byte[32]))));
        assertTrue(enabled.hasAuth(), enabled::toString);
        return h;
    }

    private static void grantRole(Harness h, String user, String role) {
        h.run(Command.newBuilder().setAuth(AuthCommand.newBuilder()
                .setUserGrantRole(AuthUserGrantRoleRequest.newBuilder().setUser(user).setRole(role))));
    }

    /** {@code cmd} as a leader of issue 33 proposes a request of {@code user} it checked just now. */
    private static CommandResult as(Harness h, String user, Command.Builder cmd) {
        return as(h, user, h.sm.auth().state().revision(), cmd);
    }

    private static CommandResult as(Harness h, String user, long authRevision, Command.Builder cmd) {
        return h.run(cmd.setCaller(CoordinationStateMachine.caller(user)).setAuthRevision(authRevision)
                .setMaxLeasesPerUser(cmd.getMaxLeasesPerUser() == 0 ? 100 : cmd.getMaxLeasesPerUser())
                .setMaxSessionsPerUser(cmd.getMaxSessionsPerUser() == 0 ? 100 : cmd.getMaxSessionsPerUser()));
    }

    private static Command.Builder put(String key, long lease) {
        return Command.newBuilder().setPut(PutRequest.newBuilder().setKey(b(key)).setValue(b("v")).setLease(lease));
    }

    private static long grant(Harness h, String user) {
        CommandResult r = as(h, user, Command.newBuilder().setLeaseGrant(LeaseGrantRequest.newBuilder().setTTL(60)));
        assertFalse(r.hasError(), r::toString);
        return r.getLeaseGrant().getID();
    }

    private static Command.Builder revoke(long id) {
        return Command.newBuilder().setLeaseRevoke(LeaseRevokeRequest.newBuilder().setID(id));
    }

    private static Command.Builder keepAlive(long id) {
        return Command.newBuilder().setLeaseKeepAlive(LeaseKeepAliveRequest.newBuilder().setID(id));
    }

    private static List<Long> leasesOf(Harness h, String user) {
        return h.sm.leases(CoordinationStateMachine.caller(user)).getLeasesList().stream().map(LeaseStatus::getID).toList();
    }

    @Test
    @DisplayName("a command checked before the latest auth change is refused INVALID_AUTH_TOKEN, not applied, and its"
            + " session's retry of the same sequence is applied")
    void staleAuthRevisionIsRefusedAndRetryable() {
        Harness h = enabled();
        long checked = h.sm.auth().state().revision();
        ByteString secret = ByteString.copyFrom("s1", StandardCharsets.UTF_8);
        long client = as(h, "alice", Command.newBuilder().setRegisterSession(RegisterSessionRequest.newBuilder()
                .setSecret(secret))).getRegisterSession().getClientId();
        // An auth change lands between the door's check and the apply.
        assertTrue(h.run(Command.newBuilder().setAuth(AuthCommand.newBuilder()
                .setRoleAdd(AuthRoleAddRequest.newBuilder().setName("extra")))).hasAuth());
        SessionRef ref = SessionRef.newBuilder().setClientId(client).setSequence(1).setSecret(secret).build();
        CommandResult stale = as(h, "alice", checked, put("alice/a", 0).setSession(ref));
        assertError(Error.Code.INVALID_AUTH_TOKEN, stale);
        assertTrue(stale.getError().getMessage().contains("authenticate again and retry"), stale::toString);
        assertNull(h.get("alice/a"), "a refused command changes nothing");

        CommandResult retried = as(h, "alice", put("alice/a", 0).setSession(ref));
        assertTrue(retried.hasPut(), "the retry after logging in again is applied, not answered from memory: " + retried);
        assertNotNull(h.get("alice/a"));
    }

    @Test
    @DisplayName("while auth is enabled, a command of no user or of an unknown one is refused; internal and"
            + " pre-issue-33 commands are applied as before")
    void namelessCallersAreRefused() {
        Harness h = enabled();
        long revision = h.sm.auth().state().revision();
        assertError(Error.Code.INVALID_AUTH_TOKEN, h.run(put("alice/x", 0).setCaller("anonymous").setAuthRevision(revision)));
        assertError(Error.Code.INVALID_AUTH_TOKEN, as(h, "carol", put("alice/x", 0)));
        assertNull(h.get("alice/x"));
        // The members' own commands name no caller; entries from before issue 33 carry no auth revision.
        assertTrue(h.run(put("internal/x", 0).setCaller("")).hasPut());
        assertTrue(h.run(put("old/x", 0).setCaller("anonymous")).hasPut());
    }

    @Test
    @DisplayName("the door's key rule again at apply: puts, deletes, txn compares and both branches")
    void keyPermissionsAtApply() {
        Harness h = enabled();
        assertTrue(as(h, "alice", put("alice/k", 0)).hasPut());
        assertError(Error.Code.PERMISSION_DENIED, as(h, "bob", put("alice/k", 0)));
        RequestOp aliceOp = RequestOp.newBuilder().setRequestPut(PutRequest.newBuilder().setKey(b("alice/k"))).build();
        RequestOp bobOp = RequestOp.newBuilder().setRequestPut(PutRequest.newBuilder().setKey(b("bob/k"))).build();
        assertError(Error.Code.PERMISSION_DENIED, as(h, "bob", Command.newBuilder().setTxn(TxnRequest.newBuilder()
                .addCompare(Compare.newBuilder().setKey(b("alice/k")).setTarget(Compare.Target.VERSION)
                        .setResult(Compare.Result.GREATER)).addSuccess(bobOp))));
        assertError(Error.Code.PERMISSION_DENIED, as(h, "bob", Command.newBuilder().setTxn(TxnRequest.newBuilder()
                .addSuccess(bobOp).addFailure(aliceOp))));
        assertError(Error.Code.PERMISSION_DENIED, as(h, "bob", Command.newBuilder().setAlarm(
                io.rota.proto.AlarmCommand.newBuilder().setAction(io.rota.proto.AlarmRequest.AlarmAction.DEACTIVATE))));
        assertEquals("v", h.get("alice/k").getValue().toStringUtf8());
        assertTrue(as(h, "root", put("alice/k", 0)).hasPut());
    }

    @Test
    @DisplayName("only a lease's owner or root may revoke it, keep it alive, read it or attach keys to it; users list"
            + " their own leases")
    void leaseOwners() {
        Harness h = enabled();
        long alices = grant(h, "alice");
        long bobs = grant(h, "bob");
        assertTrue(as(h, "alice", put("alice/held", alices)).hasPut());

        assertError(Error.Code.LEASE_NOT_FOUND, as(h, "bob", revoke(alices)));
        assertError(Error.Code.LEASE_NOT_FOUND, as(h, "bob", keepAlive(alices)));
        assertError(Error.Code.LEASE_NOT_FOUND, as(h, "bob", put("bob/k", alices)));
        assertError(Error.Code.LEASE_NOT_FOUND, as(h, "bob", Command.newBuilder().setTxn(TxnRequest.newBuilder()
                .addFailure(RequestOp.newBuilder().setRequestTxn(TxnRequest.newBuilder().addSuccess(RequestOp.newBuilder()
                        .setRequestPut(PutRequest.newBuilder().setKey(b("bob/k")).setLease(alices))))))));
        StoreException hidden = assertThrows(StoreException.class, () -> h.sm.timeToLive(
                LeaseTimeToLiveRequest.newBuilder().setID(alices).build(), CoordinationStateMachine.caller("bob")));
        assertEquals(Error.Code.LEASE_NOT_FOUND, hidden.error().getCode());
        assertEquals(List.of(bobs), leasesOf(h, "bob"));
        assertEquals(List.of(alices), leasesOf(h, "alice"));
        assertEquals(List.of(alices, bobs), leasesOf(h, "root"));
        assertNotNull(h.get("alice/held"), "alice's key is still there");
        assertFalse(h.get("bob/k") != null && h.get("bob/k").getLease() == alices);

        assertTrue(as(h, "alice", keepAlive(alices)).hasLeaseKeepAlive());
        assertTrue(as(h, "alice", revoke(alices)).hasLeaseRevoke());
        assertNull(h.get("alice/held"));
        assertTrue(as(h, "root", revoke(bobs)).hasLeaseRevoke(), "root may revoke any lease");
    }

    @Test
    @DisplayName("a revoke still needs WRITE on every key the lease holds, judged on the applied state")
    void revokeNeedsWriteOnItsKeys() {
        Harness h = enabled();
        long alices = grant(h, "alice");
        assertTrue(as(h, "root", put("root/k", alices)).hasPut(), "root may attach a key to any lease");
        CommandResult r = as(h, "alice", revoke(alices));
        assertError(Error.Code.PERMISSION_DENIED, r);
        assertTrue(r.getError().getMessage().contains("root/k"), r::toString);
        assertNotNull(h.get("root/k"));
    }

    @Test
    @DisplayName("leases survive a snapshot with their owners; a lease of no owner (an older image) is root's alone")
    void ownersInSnapshots() throws Exception {
        Harness h = enabled();
        long alices = grant(h, "alice");
        Harness copy = new Harness();
        copy.sm.restore(h.sm.capture().serialize());
        copy.index = h.index;
        assertError(Error.Code.LEASE_NOT_FOUND, as(copy, "bob", revoke(alices)));
        assertTrue(as(copy, "alice", keepAlive(alices)).hasLeaseKeepAlive());

        StoreSnapshot image = h.sm.image();
        StoreSnapshot older = image.toBuilder().setLeases(0, image.getLeases(0).toBuilder().clearOwner()).build();
        Harness old = new Harness();
        old.sm.restore(new java.io.ByteArrayInputStream(older.toByteArray()));
        old.index = h.index;
        assertError(Error.Code.LEASE_NOT_FOUND, as(old, "alice", keepAlive(alices)));
        assertTrue(as(old, "root", keepAlive(alices)).hasLeaseKeepAlive());
    }

    @Test
    @DisplayName("per-user lease quota: a user past it is refused UNAVAILABLE naming the flag; others and root still"
            + " grant")
    void leaseQuota() {
        Harness h = enabled();
        Command.Builder grant = Command.newBuilder().setLeaseGrant(LeaseGrantRequest.newBuilder().setTTL(60))
                .setMaxLeasesPerUser(2);
        assertTrue(as(h, "alice", grant.clone()).hasLeaseGrant());
        assertTrue(as(h, "alice", grant.clone()).hasLeaseGrant());
        CommandResult third = as(h, "alice", grant.clone());
        assertError(Error.Code.UNAVAILABLE, third);
        assertTrue(third.getError().getMessage().contains("--max-leases-per-user"), third::toString);
        assertTrue(third.getError().getRetryAfterMs() > 0);
        assertTrue(as(h, "bob", grant.clone()).hasLeaseGrant());
        assertTrue(as(h, "root", grant.clone()).hasLeaseGrant());
        assertTrue(as(h, "root", grant.clone()).hasLeaseGrant());
        assertTrue(as(h, "root", grant.clone()).hasLeaseGrant(), "root is not bound");
        assertTrue(as(h, "alice", revoke(leasesOf(h, "alice").get(0))).hasLeaseRevoke());
        assertTrue(as(h, "alice", grant.clone()).hasLeaseGrant(), "a revoke frees the quota");
    }

    @Test
    @DisplayName("per-user session quota: a user past it evicts its own least recently active session, never another's")
    void sessionQuota() {
        Harness h = enabled();
        SessionRef bobs = register(h, "bob", 2);
        SessionRef first = register(h, "alice", 2);
        SessionRef second = register(h, "alice", 2);
        SessionRef third = register(h, "alice", 2);
        assertError(Error.Code.SESSION_EXPIRED, as(h, "alice", put("alice/1", 0).setSession(first)));
        assertTrue(as(h, "alice", put("alice/2", 0).setSession(second)).hasPut());
        assertTrue(as(h, "alice", put("alice/3", 0).setSession(third)).hasPut());
        assertTrue(as(h, "bob", put("bob/1", 0).setSession(bobs)).hasPut(), "bob's session stays");
    }

    private static SessionRef register(Harness h, String user, int bound) {
        ByteString secret = b("secret-" + h.index);
        CommandResult r = as(h, user, Command.newBuilder().setMaxSessionsPerUser(bound)
                .setRegisterSession(RegisterSessionRequest.newBuilder().setSecret(secret)));
        assertTrue(r.hasRegisterSession(), r::toString);
        return SessionRef.newBuilder().setClientId(r.getRegisterSession().getClientId()).setSequence(1)
                .setSecret(secret).build();
    }
}
