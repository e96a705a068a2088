package io.rota.server.authgate;

import io.rota.proto.AuthCommand;
import io.rota.proto.AuthEnableRequest;
import io.rota.proto.AuthUserAddRequest;
import io.rota.proto.AuthUserGrantRoleRequest;
import io.rota.proto.AuthenticateRequest;
import io.rota.proto.AuthRequest;
import io.rota.proto.Error;
import io.rota.proto.Frame;
import io.rota.proto.PutRequest;
import io.rota.server.auth.AuthException;
import io.rota.server.auth.AuthStore;
import com.google.protobuf.ByteString;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Issue 33: logins that cannot be enumerated or out-guessed by reconnecting or spraying names. */
class AuthGateLoginTest {

    private final AtomicLong now = new AtomicLong(1_000_000);
    private final AuthStore store = new AuthStore();
    private final AuthGate gate = new AuthGate(store, now::get);

    AuthGateLoginTest() throws Exception {
        String hash = Passwords.hash("root-pw", Passwords.MIN_COST);
        store.apply(AuthCommand.newBuilder().setUserAdd(AuthUserAddRequest.newBuilder().setName("root")
                .setPasswordHash(hash)).build());
        store.apply(AuthCommand.newBuilder().setUserGrantRole(AuthUserGrantRoleRequest.newBuilder().setUser("root")
                .setRole("root")).build());
        store.apply(AuthCommand.newBuilder().setEnable(AuthEnableRequest.getDefaultInstance())
                .setTokenKey(ByteString.copyFrom(new byte[32])).build());
        gate.configure("rota-test", Duration.ofMinutes(5), Passwords.MIN_COST, System::currentTimeMillis);
    }

    @AfterEach
    void close() {
        gate.close();
    }

    private Error login(String user, String password, String host, int port) {
        try {
            gate.authenticate(user, password, new InetSocketAddress(host, port)).join();
            return null;
        } catch (CompletionException e) {
            return ((AuthException) e.getCause()).error();
        }
    }

    @Test
    @DisplayName("an unknown user's login runs bcrypt as a known user's does, and gets the same answer")
    void unknownUsersCostABcryptCheck() {
        long before = Passwords.CHECKS.get();
        Error unknown = login("nobody", "pw", "10.0.0.1", 1000);
        assertEquals(before + 1, Passwords.CHECKS.get(), "an unknown user is checked against a dummy hash");
        Error wrong = login("root", "wrong", "10.0.0.1", 1001);
        assertEquals(unknown.getMessage(), wrong.getMessage());
        assertEquals(unknown.getCode(), wrong.getCode());
    }

    @Test
    @DisplayName("failures count per source address: a reconnect (another port) does not reset them")
    void aReconnectDoesNotReset() {
        for (int i = 0; i < AuthGate.Limiters.FREE_SOURCE_FAILURES; i++) {
            assertEquals(0, login("spray-" + i, "Winter2026!", "10.0.0.7", 40_000 + i).getRetryAfterMs(),
                    "each made-up name fails once: free for the name, counted for the address");
        }
        Error over = login("spray-over", "Winter2026!", "10.0.0.7", 45_000);
        assertTrue(over.getRetryAfterMs() > 0, "past the address's allowance, failures cost a wait: " + over);
        Error next = login("root", "root-pw", "10.0.0.7", 50_000);
        assertNotNull(next, "the address now waits, even with the right password");
        assertTrue(next.getRetryAfterMs() > 0 && next.getMessage().contains("too many"), next.toString());
        assertNull(login("root", "root-pw", "10.0.0.8", 50_000), "another address is not slowed down");
    }

    @Test
    @DisplayName("a flood of made-up names does not flush a real user's failure count")
    void junkNamesDoNotFlushARealUsersCount() {
        for (int i = 0; i <= FailureLimiter.FREE_FAILURES; i++) {
            login("root", "guess-" + i, "10.0.1." + i, 1000);   // from several addresses: counted per user
        }
        AuthGate.Limiters limiters = gate.limiters();
        long waiting = limiters.knownUsers.waitMs("root", now.get());
        assertTrue(waiting > 0, "root is being slowed down");
        for (int i = 0; i < 150_000; i++) {
            limiters.forUser(false).failed("junk-" + i, now.get());
        }
        assertEquals(waiting, limiters.knownUsers.waitMs("root", now.get()), "the junk went to its own table");
        Error e = login("root", "root-pw", "10.0.2.1", 1000);
        assertTrue(e != null && e.getRetryAfterMs() > 0, "root's logins still wait: " + e);
    }

    @Test
    @DisplayName("sourceOf: the host of an address, whatever its port or spelling")
    void sourceOf() {
        assertEquals("127.0.0.1", AuthGate.sourceOf(new InetSocketAddress("127.0.0.1", 5000)));
        assertEquals("127.0.0.1", AuthGate.sourceOf("/127.0.0.1:5000"));
        assertEquals("0:0:0:0:0:0:0:1", AuthGate.sourceOf("/0:0:0:0:0:0:0:1:5000"));
    }

    @Test
    @DisplayName("a frame naming a user but holding no token is refused, whatever its certificate says")
    void aClaimedUserIsNotReplacedByTheCertificate() {
        Frame put = Frame.newBuilder().setClaimedUser("app")
                .setPutRequest(PutRequest.newBuilder().setKey(ByteString.copyFromUtf8("other/x"))).build();
        AuthGate.Verdict v = gate.check(put, "root", "test");
        assertNotNull(v.error(), "the certificate's CN (root) must not stand in for the named user");
        assertEquals(Error.Code.INVALID_AUTH_TOKEN, v.error().getCode());
        assertTrue(v.error().getMessage().contains("authenticate as 'app'"), v.error().getMessage());
        AuthGate.Verdict byCert = gate.check(put.toBuilder().clearClaimedUser().build(), "root", "test");
        assertNull(byCert.error(), "no user named: the certificate's CN is the user, as before");
        Frame login = Frame.newBuilder().setClaimedUser("app").setAuthRequest(AuthRequest.newBuilder()
                .setAuthenticate(AuthenticateRequest.newBuilder().setName("app").setPassword("x"))).build();
        assertNull(gate.check(login, "root", "test").error(), "the login itself passes");
        assertThrows(IllegalArgumentException.class,
                () -> gate.configure("x", Duration.ofMinutes(1), 3, System::currentTimeMillis));
    }
}
