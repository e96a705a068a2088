package io.rota.server.kv;

import com.google.protobuf.ByteString;
import io.rota.proto.AuthCommand;
import io.rota.proto.AuthEnableRequest;
import io.rota.proto.AuthRoleAddRequest;
import io.rota.proto.AuthRoleGrantPermissionRequest;
import io.rota.proto.AuthUserAddRequest;
import io.rota.proto.AuthUserDeleteRequest;
import io.rota.proto.AuthUserGrantRoleRequest;
import io.rota.proto.AuthUserRevokeRoleRequest;
import io.rota.proto.Command;
import io.rota.proto.CommandResult;
import io.rota.proto.Error;
import io.rota.proto.Permission;
import io.rota.server.auth.AuthState;
import io.rota.server.authgate.Passwords;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static io.rota.server.kv.Harness.assertError;
import static io.rota.server.kv.Harness.b;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The replicated auth state: deterministic apply, revision bumps, enable's precondition, snapshot round trip. */
class AuthApplyTest {

    /** One bcrypt hash for every user: hashing is the proposer's (slow) work, not what is tested here. */
    private static String hash;
    private static final ByteString TOKEN_KEY = ByteString.copyFrom(new byte[32]);

    @BeforeAll
    static void hashOnce() {
        hash = Passwords.hash("secret");
    }

    private static Command.Builder auth(AuthCommand.Builder c) {
        return Command.newBuilder().setAuth(c);
    }

    private static List<Command.Builder> setup() {
        List<Command.Builder> cmds = new ArrayList<>();
        cmds.add(auth(AuthCommand.newBuilder().setUserAdd(AuthUserAddRequest.newBuilder().setName("root").setPasswordHash(hash))));
        cmds.add(auth(AuthCommand.newBuilder().setUserGrantRole(AuthUserGrantRoleRequest.newBuilder().setUser("root").setRole("root"))));
        cmds.add(auth(AuthCommand.newBuilder().setRoleAdd(AuthRoleAddRequest.newBuilder().setName("app-a"))));
        cmds.add(auth(AuthCommand.newBuilder().setRoleGrantPermission(AuthRoleGrantPermissionRequest.newBuilder()
                .setName("app-a").setPerm(Permission.newBuilder().setPermType(Permission.Type.READ)
                        .setKey(b("app-a/")).setRangeEnd(b("app-a0"))))));
        cmds.add(auth(AuthCommand.newBuilder().setUserAdd(AuthUserAddRequest.newBuilder().setName("alice").setPasswordHash(hash))));
        cmds.add(auth(AuthCommand.newBuilder().setUserGrantRole(AuthUserGrantRoleRequest.newBuilder().setUser("alice").setRole("app-a"))));
        cmds.add(auth(AuthCommand.newBuilder().setEnable(AuthEnableRequest.getDefaultInstance()).setTokenKey(TOKEN_KEY)));
        return cmds;
    }

    @Test
    @DisplayName("every change bumps the auth revision once; a refused one changes nothing")
    void revisionBumps() {
        Harness h = new Harness();
        long revision = 0;
        for (Command.Builder c : setup()) {
            CommandResult r = h.run(c);
            assertTrue(r.hasAuth(), r.toString());
            assertEquals(++revision, r.getAuth().getAuthRevision());
        }
        AuthState s = h.sm.auth().state();
        assertTrue(s.enabled());
        assertEquals(7, s.revision());
        assertError(Error.Code.INVALID_ARGUMENT, h.run(auth(AuthCommand.newBuilder()
                .setUserAdd(AuthUserAddRequest.newBuilder().setName("alice").setPasswordHash(hash)))));
        assertError(Error.Code.INVALID_ARGUMENT, h.run(auth(AuthCommand.newBuilder()
                .setUserDelete(AuthUserDeleteRequest.newBuilder().setName("root")))));
        assertError(Error.Code.INVALID_ARGUMENT, h.run(auth(AuthCommand.newBuilder()
                .setUserRevokeRole(AuthUserRevokeRoleRequest.newBuilder().setName("root").setRole("root")))));
        assertEquals(7, h.sm.auth().state().revision(), "refusals leave the revision alone");
        assertTrue(h.sm.auth().state().permissions("alice").canRead(b("app-a/k"), ByteString.EMPTY));
        assertFalse(h.sm.auth().state().permissions("alice").canWrite(b("app-a/k"), ByteString.EMPTY));
    }

    @Test
    @DisplayName("enabling auth needs a root user with the root role; a user without a hash is refused")
    void enableNeedsRoot() {
        Harness h = new Harness();
        assertError(Error.Code.INVALID_ARGUMENT, h.run(auth(AuthCommand.newBuilder()
                .setEnable(AuthEnableRequest.getDefaultInstance()).setTokenKey(TOKEN_KEY))));
        h.run(auth(AuthCommand.newBuilder().setUserAdd(AuthUserAddRequest.newBuilder().setName("root").setPasswordHash(hash))));
        assertError(Error.Code.INVALID_ARGUMENT, h.run(auth(AuthCommand.newBuilder()
                .setEnable(AuthEnableRequest.getDefaultInstance()).setTokenKey(TOKEN_KEY))));
        assertFalse(h.sm.auth().state().enabled());
        assertError(Error.Code.INVALID_ARGUMENT, h.run(auth(AuthCommand.newBuilder()
                .setUserAdd(AuthUserAddRequest.newBuilder().setName("bob").setPassword("plain")))));
    }

    @Test
    @DisplayName("apply is deterministic, and a snapshot carries the auth state: tokens stay valid across a restore")
    void deterministicAndSnapshotted() throws Exception {
        Harness a = new Harness();
        Harness b = new Harness();
        for (Command.Builder c : setup()) {
            a.run(c.clone());
            b.run(c.clone());
        }
        byte[] imageA = a.sm.capture().serialize();
        assertArrayEquals(imageA, b.sm.capture().serialize(), "two members applying the same log hold the same state");
        assertTrue(StoreImage.read(new java.io.ByteArrayInputStream(imageA)).getAuth().getEnabled());

        Harness restored = new Harness();
        restored.sm.restore(imageA);
        assertArrayEquals(imageA, restored.sm.capture().serialize());
        io.rota.server.auth.TokenPolicy policy = io.rota.server.authgate.AuthGate.unboundTokens().withClusterId("rota-test");
        String token = a.sm.auth().state().token("alice", policy);
        assertEquals("alice", restored.sm.auth().state().userOf(token, policy), "a token of one member is valid on another");
        assertTrue(Passwords.matches(hash, "secret"));

        a.run(auth(AuthCommand.newBuilder().setUserRevokeRole(AuthUserRevokeRoleRequest.newBuilder()
                .setName("alice").setRole("app-a"))));
        assertNull(a.sm.auth().state().userOf(token, policy), "a change makes older tokens stale");
        assertNotNull(a.sm.auth().state().userOf(a.sm.auth().state().token("alice", policy), policy));
        assertNull(a.sm.auth().state().userOf(token.substring(0, token.length() - 2) + "xx", policy), "a forged signature");
    }
}
