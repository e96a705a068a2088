package io.rota.server;

import io.rota.client.Auth;
import io.rota.client.RotaClient;
import io.rota.client.RotaException;
import io.rota.client.Watch;
import io.rota.client.WatchEvent;
import io.rota.client.WatchListener;
import io.rota.testkit.Await;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Watches do not outlive an auth change (issue 33 item 6, design SD14), on three members in one JVM: a watch
 * opened by an anonymous client before {@code auth enable} ends at the enable; a user's watch ends with
 * PERMISSION_DENIED once root revokes the permission it reads by (the SDK logs in again, re-creates it, and
 * the member refuses the create), and sees nothing written after; another user's watch, whose permission
 * still holds, is re-created by the SDK and misses no event.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Tag("cluster")
class WatchAuthChangeTest {

    private static final Duration DEADLINE = Duration.ofSeconds(20);
    private static final Auth.Permission READ_APP = Auth.Permission.prefix(Auth.PermissionType.READ, "app/");

    @RegisterExtension
    static final SharedCluster CLUSTER = new SharedCluster(Duration.ofSeconds(10));

    private static RotaClient anonymous;
    private static RotaClient root;

    @BeforeAll
    static void setUp() {
        anonymous = CLUSTER.connect();
        root = as("root", "root-pw");
        Auth auth = root.auth();
        auth.addUser("root", "root-pw".toCharArray());
        auth.grantRole("root", "root");
        auth.addRole("app-reader");
        auth.grantPermission("app-reader", READ_APP);
        auth.addUser("u", "u-pw".toCharArray());
        auth.grantRole("u", "app-reader");
        auth.addRole("other-reader");
        auth.grantPermission("other-reader", Auth.Permission.prefix(Auth.PermissionType.READ, "other/"));
        auth.addUser("v", "v-pw".toCharArray());
        auth.grantRole("v", "other-reader");
    }

    @AfterAll
    static void tearDown() {
        for (RotaClient c : new RotaClient[] {anonymous, root}) {
            if (c != null) {
                c.close();
            }
        }
    }

    private static RotaClient as(String user, String password) {
        return RotaClient.builder().endpoints(CLUSTER.get().endpoints()).credentials(user, password)
                .callTimeout(DEADLINE).build();
    }

    /** Events and the error a watch delivered. */
    static final class Seen implements WatchListener {
        final List<String> keys = new CopyOnWriteArrayList<>();
        final CompletableFuture<RotaException> error = new CompletableFuture<>();

        @Override
        public void onEvent(WatchEvent event) {
            keys.add(event.kv().keyString());
        }

        @Override
        public void onError(RotaException e) {
            error.complete(e);
        }
    }

    @Test
    @Order(1)
    @DisplayName("an anonymous watch opened before auth enable ends at the enable, and sees nothing written after it")
    void anonymousWatchEndsAtEnable() throws Exception {
        Seen seen = new Seen();
        try (Watch w = anonymous.watches().watchPrefix("app/", 0, seen)) {
            Await.until(DEADLINE, () -> w.nextRevision() > 0, "the anonymous watch is created");
            root.kv().put("app/before", "1");
            Await.until(DEADLINE, () -> seen.keys.contains("app/before"), "the watch sees a write before enable");
            root.auth().enable();
            RotaException e = seen.error.get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
            assertEquals(RotaException.Code.INVALID_AUTH_TOKEN, e.code(), e.getMessage());
            root.kv().put("app/after-enable", "1");
            assertEquals(List.of("app/before"), seen.keys, "nothing written after the enable reaches it");
        }
    }

    @Test
    @Order(2)
    @DisplayName("revoking the permission ends the user's watch with PERMISSION_DENIED; another user's watch resumes")
    void revokedPermissionEndsTheWatch() throws Exception {
        try (RotaClient u = as("u", "u-pw"); RotaClient v = as("v", "v-pw")) {
            Seen uSeen = new Seen();
            Seen vSeen = new Seen();
            try (Watch uw = u.watches().watchPrefix("app/", 0, uSeen);
                 Watch vw = v.watches().watchPrefix("other/", 0, vSeen)) {
                Await.until(DEADLINE, () -> uw.nextRevision() > 0 && vw.nextRevision() > 0, "both watches created");
                root.kv().put("app/1", "1");
                Await.until(DEADLINE, () -> uSeen.keys.contains("app/1"), "u's watch sees app/1");
                root.auth().revokePermission("app-reader", READ_APP.key(), READ_APP.rangeEnd());
                RotaException e = uSeen.error.get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
                assertEquals(RotaException.Code.PERMISSION_DENIED, e.code(), e.getMessage());
                root.kv().put("app/2", "2");
                root.kv().put("other/1", "1");
                Await.until(DEADLINE, () -> vSeen.keys.contains("other/1"),
                        "v's watch, re-created after the auth change, sees other/1");
                assertEquals(List.of("app/1"), uSeen.keys, "u sees nothing written after the revoke");
                assertTrue(!vSeen.error.isDone(), "v's watch goes on: " + vSeen.error.getNow(null));
            }
        }
    }
}
