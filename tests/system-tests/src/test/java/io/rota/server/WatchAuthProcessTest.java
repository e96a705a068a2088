package io.rota.server;

import io.rota.client.Auth;
import io.rota.client.RotaClient;
import io.rota.client.RotaException;
import io.rota.client.Watch;
import io.rota.testkit.Await;
import io.rota.testkit.ProcessCluster;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Issue 33 item 6 on real member processes: an anonymous watch running when auth is enabled ends then, and a
 * user's watch ends with PERMISSION_DENIED when root revokes the permission it reads by — the SDK logs in
 * again, re-creates the watch, and the member refuses the create. WatchAuthChangeTest has the in-JVM cases.
 */
@Tag("process")
class WatchAuthProcessTest {

    private static final Duration DEADLINE = Duration.ofSeconds(30);
    private static final Auth.Permission READ_APP = Auth.Permission.prefix(Auth.PermissionType.READ, "app/");

    @TempDir
    Path dir;


    private static RotaClient client(ProcessCluster cluster, String user, String password) {
        RotaClient.Builder b = RotaClient.builder().endpoints(cluster.endpoints()).callTimeout(DEADLINE);
        return (user == null ? b : b.credentials(user, password)).build();
    }

    @Test
    @DisplayName("auth enable ends an anonymous watch; revoking U's permission ends U's watch with PERMISSION_DENIED")
    void authChangesEndWatches() throws Exception {
        try (ProcessCluster cluster = ProcessCluster.start(dir, 3);
             RotaClient anonymous = client(cluster, null, null);
             RotaClient root = client(cluster, "root", "root-pw")) {
            cluster.awaitLeader();
            Auth auth = root.auth();
            AuthProcessTest.once(() -> auth.addUser("root", "root-pw".toCharArray()));
            AuthProcessTest.once(() -> auth.grantRole("root", "root"));
            AuthProcessTest.once(() -> auth.addRole("app-reader"));
            auth.grantPermission("app-reader", READ_APP);
            AuthProcessTest.once(() -> auth.addUser("u", "u-pw".toCharArray()));
            AuthProcessTest.once(() -> auth.grantRole("u", "app-reader"));

            WatchAuthChangeTest.Seen before = new WatchAuthChangeTest.Seen();
            try (Watch w = anonymous.watches().watchPrefix("app/", 0, before)) {
                Await.until(DEADLINE, () -> w.nextRevision() > 0, "the anonymous watch is created");
                auth.enable();
                cluster.httpCredentials("root", "root-pw");
                RotaException e = before.error.get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
                assertEquals(RotaException.Code.INVALID_AUTH_TOKEN, e.code(), e.getMessage());
            }

            try (RotaClient u = client(cluster, "u", "u-pw")) {
                WatchAuthChangeTest.Seen seen = new WatchAuthChangeTest.Seen();
                try (Watch w = u.watches().watchPrefix("app/", 0, seen)) {
                    Await.until(DEADLINE, () -> w.nextRevision() > 0, "u's watch is created");
                    root.kv().put("app/1", "1");
                    Await.until(DEADLINE, () -> seen.keys.contains("app/1"), "u's watch sees app/1");
                    auth.revokePermission("app-reader", READ_APP.key(), READ_APP.rangeEnd());
                    RotaException e = seen.error.get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
                    assertEquals(RotaException.Code.PERMISSION_DENIED, e.code(), e.getMessage());
                    root.kv().put("app/2", "2");
                    assertEquals(List.of("app/1"), seen.keys, "nothing written after the revoke reaches u");
                }
            }
        }
    }
}
