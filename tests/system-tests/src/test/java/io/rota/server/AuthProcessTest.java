package io.rota.server;

import io.rota.client.Auth;
import io.rota.client.Lease;
import io.rota.client.RotaClient;
import io.rota.client.RotaException;
import io.rota.client.TlsOptions;
import io.rota.client.Watch;
import io.rota.client.WatchEvent;
import io.rota.client.WatchListener;
import io.rota.client.recipes.Lock;
import io.rota.client.recipes.LockOptions;
import io.rota.testkit.Await;
import io.rota.testkit.ProcessCluster;
import io.rota.testkit.TestCertificates;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Authentication and authorization on three real member processes (docs/security.md, "How each attack is
 * refused"), with TLS on both ports and client certificates required, so one cluster proves both ways a
 * caller is named: a password (a token the SDK renews) and a client certificate's CN (etcd's rule).
 *
 * <p>Setup, once: every client holds the test CA's client certificate (CN {@value TlsCluster#CLIENT_CN}, which
 * names no user). Root; role reader-a (READ {@code app-a/}) given to alice; role owner-b (READWRITE
 * {@code app-b/}) given to bob; then auth is enabled while an anonymous client is connected. Process tests
 * are slow on a loaded machine: one cluster serves every test, and the in-JVM AuthClusterTest holds the
 * finer cases (txn branches, brute force, failover).
 */
@Tag("process")
class AuthProcessTest {

    private static final Duration DEADLINE = Duration.ofSeconds(30);

    private static Path dir;
    private static TlsCluster certs;
    private static ProcessCluster cluster;
    private static RotaClient anonymous;
    private static RotaClient root;
    private static RotaClient alice;
    private static RotaClient bob;

    @BeforeAll
    static void setUp() throws IOException {
        String missing = TlsCluster.unavailable();
        assumeTrue(missing == null, () -> "SKIPPED: auth process tests run on a TLS cluster and need openssl to make"
                + " certificates: " + missing);
        dir = Files.createTempDirectory("rota-AuthProcessTest");
        certs = new TlsCluster(dir.resolve("tls"));
        cluster = ProcessCluster.prepare(dir, 3, null).memberArgs(certs::memberFlags);
        cluster.startAll();
        cluster.awaitLeader();
        anonymous = client(certs.clientOptions(), null, null);
        anonymous.kv().put("app-a/seed", "1");
        root = client(certs.clientOptions(), "root", "root-pw");
        Auth auth = root.auth();   // auth is still off: anyone may manage it, as in etcd
        once(() -> root.auth().addUser("root", "root-pw".toCharArray()));
        once(() -> auth.grantRole("root", "root"));
        once(() -> auth.addRole("reader-a"));
        auth.grantPermission("reader-a", Auth.Permission.prefix(Auth.PermissionType.READ, "app-a/"));
        once(() -> auth.addRole("owner-b"));
        auth.grantPermission("owner-b", Auth.Permission.prefix(Auth.PermissionType.READWRITE, "app-b/"));
        once(() -> root.auth().addUser("alice", "alice-pw".toCharArray()));
        once(() -> auth.grantRole("alice", "reader-a"));
        once(() -> root.auth().addUser("bob", "bob-pw".toCharArray()));
        once(() -> auth.grantRole("bob", "owner-b"));
        auth.enable();
        alice = client(certs.clientOptions(), "alice", "alice-pw");
        bob = client(certs.clientOptions(), "bob", "bob-pw");
    }

    @AfterAll
    static void tearDown() {
        for (RotaClient c : new RotaClient[] {anonymous, root, alice, bob}) {
            if (c != null) {
                c.close();
            }
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    private static RotaClient client(TlsOptions tls, String user, String password) {
        RotaClient.Builder b = RotaClient.builder().endpoints(cluster.endpoints()).tls(tls).callTimeout(DEADLINE);
        return (user == null ? b : b.credentials(user, password)).build();
    }

    /**
     * An auth change for the setup. On a loaded machine the SDK may retry a change whose answer was late
     * although it was applied; the retry is then refused as "already exists" or "already has role", which
     * here means done.
     */
    static void once(Runnable change) {
        try {
            change.run();
        } catch (RotaException e) {
            if (e.code() != RotaException.Code.INVALID_ARGUMENT || !e.getMessage().contains(" already ")) {
                throw e;
            }
        }
    }

    private static RotaException.Code refused(Runnable call) {
        return assertThrows(RotaException.class, call::run).code();
    }

    @Test
    @DisplayName("a client connected before auth was enabled gets INVALID_AUTH_TOKEN on its next call; a logged-in one goes on")
    void connectedClientIsRefusedAfterEnable() {
        RotaException e = assertThrows(RotaException.class, () -> anonymous.kv().get("app-a/seed"));
        assertEquals(RotaException.Code.INVALID_AUTH_TOKEN, e.code());
        assertTrue(e.getMessage().contains("authenticate first"), e.getMessage());
        assertTrue(e.getMessage().contains("'" + TlsCluster.CLIENT_CN + "' is not a user"),
                "its certificate's CN names no user, and the error says so: " + e.getMessage());
        assertEquals("1", root.kv().get("app-a/seed").first().orElseThrow().valueString());
        awaitLog("request names no user");
    }

    @Test
    @DisplayName("READ on app-a/: reads app-a/, cannot write it, cannot read app-b/")
    void readerStaysInItsPrefix() {
        assertEquals("1", alice.kv().get("app-a/seed").first().orElseThrow().valueString());
        assertEquals(RotaException.Code.PERMISSION_DENIED, refused(() -> alice.kv().put("app-a/x", "v")));
        bob.kv().put("app-b/secret", "s");
        assertEquals(RotaException.Code.PERMISSION_DENIED, refused(() -> alice.kv().get("app-b/secret")));
    }

    @Test
    @DisplayName("a watch on app-b/ by a reader of app-a/ is refused and sees nothing; one on app-a/ sees events")
    void watchesNeedRead() throws Exception {
        CompletableFuture<RotaException> refusal = new CompletableFuture<>();
        Watch denied = alice.watches().watchPrefix("app-b/", 0, new WatchListener() {
            @Override
            public void onEvent(WatchEvent event) {
                refusal.completeExceptionally(new AssertionError("a refused watch saw " + event));
            }

            @Override
            public void onError(RotaException error) {
                refusal.complete(error);
            }
        });
        bob.kv().put("app-b/watched", "w");
        assertEquals(RotaException.Code.PERMISSION_DENIED, refusal.get(30, TimeUnit.SECONDS).code());
        denied.close();

        CompletableFuture<WatchEvent> seen = new CompletableFuture<>();
        try (Watch allowed = alice.watches().watchPrefix("app-a/", 0, seen::complete)) {
            Await.until(DEADLINE, () -> allowed.nextRevision() > 0, "the watch on app-a/ is created");
            root.kv().put("app-a/watched", "w");
            assertEquals("app-a/watched", seen.get(30, TimeUnit.SECONDS).kv().keyString());
        }
    }

    @Test
    @DisplayName("bob's lease cannot be revoked by alice: it is answered as no lease (issue 33); its owner can")
    void leaseRevokeChecksTheLeaseKeys() {
        Lease lease = bob.leases().grant(Duration.ofSeconds(60));
        bob.kv().put("app-b/held", "x", lease.id());
        assertEquals(RotaException.Code.LEASE_NOT_FOUND, refused(() -> alice.leases().revoke(lease.id())));
        assertEquals(1, bob.kv().get("app-b/held").kvs().size(), "the key is still there");
        bob.leases().revoke(lease.id());
        assertTrue(bob.kv().get("app-b/held").kvs().isEmpty());
    }

    @Test
    @DisplayName("the lock recipe on app-b/'s prefix is refused to a reader of app-a/; its owner takes it")
    void locksFollowKeyPermissions() throws Exception {
        LockOptions options = LockOptions.defaults().withPrefix("app-b/lock").withTtl(Duration.ofSeconds(5));
        RotaException e = assertThrows(RotaException.class, () -> Lock.of(alice, "nightly", options).tryAcquire());
        assertEquals(RotaException.Code.PERMISSION_DENIED, e.code());
        try (var held = Lock.of(bob, "nightly", options).tryAcquire().orElseThrow()) {
            assertTrue(held.fencingToken() > 0);
        }
    }

    @Test
    @DisplayName("a role change makes older tokens invalid; the SDK logs in again by itself and the call succeeds")
    void roleChangeInvalidatesTokensAndTheSdkRenews() {
        once(() -> root.auth().addUser("carol", "carol-pw".toCharArray()));
        once(() -> root.auth().addRole("writer-c"));
        once(() -> root.auth().grantRole("carol", "writer-c"));
        try (RotaClient carol = client(certs.clientOptions(), "carol", "carol-pw")) {
            // Carol logs in (a token at this auth revision) and is refused: her role has no permission yet.
            assertEquals(RotaException.Code.PERMISSION_DENIED, refused(() -> carol.kv().put("app-c/x", "1")));
            root.auth().grantPermission("writer-c", Auth.Permission.prefix(Auth.PermissionType.READWRITE, "app-c/"));
            // Her token is now older than the auth revision: a member refuses it, the SDK logs in and retries.
            Await.until(DEADLINE, () -> tryPut(carol, "app-c/x", "1"), "carol's put succeeds after the grant");
            assertEquals("1", carol.kv().get("app-c/x").first().orElseThrow().valueString());
            awaitLog("the auth token was issued before the latest user or role change");
        }
    }

    /** A member may apply the grant a moment after root's call returns: a refusal until then is expected. */
    private static boolean tryPut(RotaClient c, String key, String value) {
        try {
            c.kv().put(key, value);
            return true;
        } catch (RotaException e) {
            assertEquals(RotaException.Code.PERMISSION_DENIED, e.code(), e.getMessage());
            return false;
        }
    }

    @Test
    @DisplayName("a certificate with CN alice acts as alice without a password, with exactly her permissions")
    void certificateCommonNameNamesTheUser() {
        TestCertificates.Pair cert = certs.ca.issue("alice-client", "alice", List.of(), List.of());
        TlsOptions asAlice = TlsOptions.builder().trustedCaFile(certs.ca.cert())
                .clientCertificate(cert.cert(), cert.key()).build();
        try (RotaClient byCertificate = client(asAlice, null, null)) {
            assertEquals("1", byCertificate.kv().get("app-a/seed").first().orElseThrow().valueString());
            assertEquals(RotaException.Code.PERMISSION_DENIED, refused(() -> byCertificate.kv().put("app-a/cn", "v")));
            RotaException other = assertThrows(RotaException.class, () -> byCertificate.kv().get("app-b/secret"));
            assertEquals(RotaException.Code.PERMISSION_DENIED, other.code());
            assertTrue(other.getMessage().contains("user 'alice'"), other.getMessage());
            assertEquals(RotaException.Code.PERMISSION_DENIED, refused(() -> byCertificate.auth().listUsers()),
                    "not root");
        }
        TestCertificates.Pair stranger = certs.ca.issue("stranger-client", "stranger", List.of(), List.of());
        try (RotaClient byStranger = client(TlsOptions.builder().trustedCaFile(certs.ca.cert())
                .clientCertificate(stranger.cert(), stranger.key()).build(), null, null)) {
            RotaException e = assertThrows(RotaException.class, () -> byStranger.kv().get("app-a/seed"));
            assertEquals(RotaException.Code.INVALID_AUTH_TOKEN, e.code());
            assertTrue(e.getMessage().contains("'stranger' is not a user"), e.getMessage());
        }
    }

    @Test
    @DisplayName("rotactl --user against the processes: root reads auth status, alice is refused a write with PERMISSION_DENIED")
    void rotactlWithUser() {
        RotactlRunner.Run status = rotactl("--user", "root:root-pw", "auth", "status");
        assertEquals(0, status.exitCode(), status.toString());
        assertTrue(status.out().contains("Authentication Status: true"), status.out());
        RotactlRunner.Run denied = rotactl("--user", "alice:alice-pw", "put", "app-a/k", "v");
        assertEquals(1, denied.exitCode(), denied.toString());
        assertTrue(denied.err().contains("PERMISSION_DENIED"), denied.err());
    }

    private static RotactlRunner.Run rotactl(String... args) {
        List<String> all = new ArrayList<>(List.of("--endpoints", cluster.endpoints(), "--command-timeout", "20s",
                "--cacert", certs.ca.cert().toString(), "--cert", certs.client.cert().toString(),
                "--key", certs.client.key().toString()));
        all.addAll(List.of(args));
        return RotactlRunner.run(Map.of(), "", all.toArray(String[]::new));
    }

    /** Waits until some member's log has a line containing {@code part} (auth refusals are logged, bounded). */
    private static void awaitLog(String part) {
        Await.until(DEADLINE, () -> {
            for (int i = 0; i < cluster.size(); i++) {
                if (lines(cluster.logFile(i)).stream().anyMatch(l -> l.contains(part))) {
                    return true;
                }
            }
            return false;
        }, "a member's log has a line with '" + part + "'");
    }

    private static List<String> lines(Path log) {
        try {
            return Files.readAllLines(log, StandardCharsets.UTF_8);
        } catch (UncheckedIOException | IOException e) {
            return List.of();
        }
    }
}
