package io.rota.server;

import io.rota.client.RotaClient;
import io.rota.client.recipes.Election;
import io.rota.client.recipes.ElectionListener;
import io.rota.client.recipes.Leader;
import io.rota.client.recipes.Lock;
import io.rota.client.recipes.LockHandle;
import io.rota.client.recipes.LockOptions;
import io.rota.testkit.Await;
import io.rota.testkit.ProcessCluster;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The shared session lease against three real server processes: a lock and an election of one client
 * share it, both are lost together when it is, a new one is granted for the next acquisition, and it
 * survives kill -9 of the member the client talks to.
 */
@Tag("process")
class SessionLeaseProcessTest {

    @RegisterExtension
    static final SharedProcessCluster CLUSTER = new SharedProcessCluster();

    static final LockOptions OPTIONS = LockOptions.defaults().withTtl(Duration.ofSeconds(3));
    static final Duration WAIT = Duration.ofSeconds(30);

    @Test
    @DisplayName("a lock and an election of one client share the session; its loss fails both; the next acquire re-grants")
    void aLostSessionFailsTheLockAndTheElectionAndIsReGranted() throws Exception {
        ProcessCluster cluster = CLUSTER.get();
        try (RotaClient a = RotaClient.connect(cluster.endpoints()); RotaClient other = RotaClient.connect(cluster.endpoints())) {
            LockHandle held = Lock.of(a, "process-session", OPTIONS).acquire(WAIT);
            AtomicReference<String> lockLost = new AtomicReference<>();
            AtomicReference<String> leadershipLost = new AtomicReference<>();
            held.onLost((h, why) -> lockLost.set(why));
            // The election's own queue (Election.of's default prefix) with the lock's TTL, hence the same session.
            Election election = Election.of(a, "process-session", OPTIONS.withPrefix("rota/election")).addListener(new ElectionListener() {
                @Override
                public void gained(Leader leader) {
                }

                @Override
                public void lost(String reason) {
                    leadershipLost.set(reason);
                }
            });
            Leader leader = election.campaign("a");
            assertEquals(held.leaseId(), a.leases().session(OPTIONS.ttl()).leaseId(), "one session for both");

            other.leases().revoke(held.leaseId());
            Await.until(WAIT, () -> lockLost.get() != null && leadershipLost.get() != null,
                    "the lock and the leadership both lost with their session");
            assertFalse(held.isHeld());

            LockHandle again = Lock.of(a, "process-session", OPTIONS).acquire(WAIT);
            assertNotEquals(held.leaseId(), again.leaseId(), "a new session for the new acquisition");
            assertTrue(again.fencingToken() > leader.epoch());
            assertTrue(again.release());
        }
    }

    @Test
    @DisplayName("a held lock's session survives kill -9 of a member: keep-alives go on through the others")
    void theSessionSurvivesAKilledMember() throws Exception {
        ProcessCluster cluster = CLUSTER.get();
        try (RotaClient a = RotaClient.connect(cluster.endpoints()); RotaClient b = RotaClient.connect(cluster.endpoints())) {
            LockHandle held = Lock.of(a, "process-survive", OPTIONS).acquire(WAIT);
            AtomicReference<String> lost = new AtomicReference<>();
            held.onLost((h, why) -> lost.set(why));
            int victim = cluster.awaitLeader();
            cluster.kill(victim);
            cluster.awaitLeader();
            long renewedFrom = held.safeUntilNanos();
            Await.until(WAIT, () -> held.safeUntilNanos() > renewedFrom, "a keep-alive confirmed after the kill");
            assertTrue(Lock.of(b, "process-survive", OPTIONS).tryAcquire().isEmpty(), "still held");
            assertEquals(null, lost.get());
            assertTrue(held.release());
            cluster.startMember(victim);
            cluster.awaitHealthy(victim);
        }
    }
}
