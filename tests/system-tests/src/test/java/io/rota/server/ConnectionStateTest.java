package io.rota.server;

import io.rota.client.ConnectionState;
import io.rota.client.KeepAlive;
import io.rota.client.Lease;
import io.rota.client.RotaClient;
import io.rota.client.RotaException;
import io.rota.testkit.Await;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static io.rota.client.ConnectionState.CONNECTED;
import static io.rota.client.ConnectionState.LOST;
import static io.rota.client.ConnectionState.RECONNECTED;
import static io.rota.client.ConnectionState.SUSPENDED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The SDK's connection state (Curator's meanings) against a real three-member cluster: the first answer is
 * CONNECTED, every member stopped is SUSPENDED, members back is RECONNECTED (found by the client's own probe,
 * the test makes no call), a kept-alive lease revoked is LOST, and close is LOST. Own cluster: it stops all.
 */
@Tag("cluster")
class ConnectionStateTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    @RegisterExtension
    static final SharedCluster CLUSTER = new SharedCluster(Duration.ofSeconds(10));

    @Test
    @DisplayName("CONNECTED, SUSPENDED when every member stops, RECONNECTED when they return, LOST on a lost lease and on close")
    void theStatesFollowTheCluster() {
        CLUSTER.get().awaitLeader();
        List<ConnectionState> told = new CopyOnWriteArrayList<>();
        List<String> order = new CopyOnWriteArrayList<>();
        RotaClient rota = RotaClient.builder().endpoints(CLUSTER.get().endpoints())
                .callTimeout(Duration.ofSeconds(3)).attemptTimeout(Duration.ofMillis(500)).build();
        try {
            // A throwing listener first: it is logged, and the next one is still told, in order.
            rota.addConnectionStateListener((c, s) -> {
                order.add("thrower " + s);
                throw new IllegalStateException("a listener's bug");
            });
            rota.addConnectionStateListener((c, s) -> {
                assertEquals(rota, c);
                order.add("recorder " + s);
                told.add(s);
            });
            assertEquals(SUSPENDED, rota.connectionState(), "a new client has not been answered yet");

            rota.kv().put("state/a", "1");
            Await.until(WAIT, () -> told.equals(List.of(CONNECTED)), "CONNECTED after the first answer: " + told);
            assertEquals(CONNECTED, rota.connectionState());

            for (int i = 0; i < 3; i++) {
                CLUSTER.get().stop(i);
            }
            assertThrows(RotaException.class, () -> rota.kv().get("state/a"));
            Await.until(WAIT, () -> told.equals(List.of(CONNECTED, SUSPENDED)), "SUSPENDED, every member down: " + told);

            CLUSTER.get().startStopped();
            // No call from here on: the client's probe finds the cluster back.
            Await.until(WAIT, () -> told.equals(List.of(CONNECTED, SUSPENDED, RECONNECTED)),
                    "RECONNECTED once a member answers with a leader: " + told);
            assertEquals(RECONNECTED, rota.connectionState());

            Lease lease = rota.leases().grant(Duration.ofSeconds(10));
            KeepAlive keepAlive = rota.leases().keepAlive(lease.id(), (id, why) -> { });
            try (RotaClient other = CLUSTER.connect()) {
                other.leases().revoke(lease.id());
            }
            Await.until(WAIT, () -> told.equals(List.of(CONNECTED, SUSPENDED, RECONNECTED, LOST)),
                    "LOST when a kept-alive lease is gone: " + told);
            keepAlive.close();

            rota.kv().put("state/b", "2");
            Await.until(WAIT, () -> told.equals(List.of(CONNECTED, SUSPENDED, RECONNECTED, LOST, RECONNECTED)),
                    "RECONNECTED after LOST once a call is answered: " + told);
        } finally {
            rota.close();
            CLUSTER.get().startStopped();
        }
        Await.until(WAIT, () -> told.equals(List.of(CONNECTED, SUSPENDED, RECONNECTED, LOST, RECONNECTED, LOST)),
                "LOST on close: " + told);
        assertEquals(LOST, rota.connectionState());
        for (int i = 0; i < told.size(); i++) {
            assertEquals(List.of("thrower " + told.get(i), "recorder " + told.get(i)), order.subList(2 * i, 2 * i + 2),
                    "listeners in the order added, each change to all: " + order);
        }
    }
}
