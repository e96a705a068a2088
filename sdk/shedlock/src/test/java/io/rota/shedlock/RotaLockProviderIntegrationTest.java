package io.rota.shedlock;

import io.rota.client.RotaClient;
import io.rota.testkit.Await;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.test.support.AbstractExtensibleLockProviderIntegrationTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.OptionalLong;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * ShedLock's own provider test-suite (shedlock-test-support: the basic, lockAtLeastFor, timeout, fuzz and
 * extension tests) against three real Rota members. Each test gets its own key prefix, as the suite reuses
 * one lock name and some of its tests leave the lock held.
 */
@Tag("cluster")
class RotaLockProviderIntegrationTest extends AbstractExtensibleLockProviderIntegrationTest {

    private static InProcessCluster cluster;
    private static RotaClient rota;
    private RotaLockProvider provider;

    @BeforeAll
    static void startCluster() {
        cluster = new InProcessCluster();
        rota = cluster.connect();
    }

    @AfterAll
    static void stopCluster() {
        if (rota != null) {
            rota.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    @BeforeEach
    void newPrefix() {
        provider = new RotaLockProvider(rota, "shedlock-it/" + UUID.randomUUID() + "/");
    }

    @Test
    @DisplayName("each later holder, on another client, has a higher fencing token; extending keeps it")
    void fencingTokensGrowWithEachHolder() {
        String prefix = "shedlock-fence/" + UUID.randomUUID() + "/";
        try (RotaClient other = cluster.connect()) {
            RotaLockProvider a = new RotaLockProvider(rota, prefix);
            RotaLockProvider b = new RotaLockProvider(other, prefix);
            RotaSimpleLock first = (RotaSimpleLock) a.lock(config("job", Duration.ofSeconds(30), Duration.ZERO)).orElseThrow();
            assertTrue(b.lock(config("job", Duration.ofSeconds(30), Duration.ZERO)).isEmpty(), "held by a");
            SimpleLock extended = first.extend(Duration.ofSeconds(30), Duration.ZERO).orElseThrow();
            assertEquals(first.fencingToken(), ((RotaSimpleLock) extended).fencingToken(), "the same tenure");
            extended.unlock();
            RotaSimpleLock second = (RotaSimpleLock) b.lock(config("job", Duration.ofSeconds(30), Duration.ZERO)).orElseThrow();
            assertTrue(second.fencingToken() > first.fencingToken(),
                    "later holder " + second.fencingToken() + " > earlier " + first.fencingToken());
            second.unlock();
        }
    }

    @Test
    @DisplayName("inside a locked task, RotaLockProvider.fencingToken() is the task's token; outside it is empty")
    void theLockedTaskSeesItsToken() throws Exception {
        // On a thread of its own: the suite's tests leave locks held on the test thread (not unlocked on purpose).
        AtomicReference<OptionalLong> inside = new AtomicReference<>();
        AtomicReference<OptionalLong> after = new AtomicReference<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread scheduler = new Thread(() -> {
            try {
                new DefaultLockingTaskExecutor(provider).executeWithLock(
                        (Runnable) () -> inside.set(RotaLockProvider.fencingToken()),
                        config("task", Duration.ofSeconds(30), Duration.ZERO));
                after.set(RotaLockProvider.fencingToken());
            } catch (Throwable t) {
                failure.set(t);
            }
        }, "scheduler");
        scheduler.start();
        scheduler.join(Duration.ofSeconds(30).toMillis());
        assertEquals(null, failure.get());
        assertTrue(inside.get().isPresent() && inside.get().getAsLong() > 0, "token inside the task: " + inside.get());
        assertTrue(after.get().isEmpty(), "no token once the lock is released: " + after.get());
    }

    @Test
    @DisplayName("a holder that dies without unlocking loses the record when its lockAtMostFor lease expires on the cluster")
    void aDeadHoldersRecordExpiresWithItsLease() {
        String prefix = "shedlock-dead/" + UUID.randomUUID() + "/";
        RotaClient dying = cluster.connect();
        new RotaLockProvider(dying, prefix).lock(config("job", Duration.ofSeconds(1), Duration.ZERO)).orElseThrow();
        dying.close();   // no unlock, no keep-alive: only the lease's TTL bounds the record
        Await.until(Duration.ofSeconds(15), () -> rota.kv().get(prefix + "job").first().isEmpty(),
                "the record deleted by the lease's expiry");
    }

    private static LockConfiguration config(String name, Duration atMost, Duration atLeast) {
        return new LockConfiguration(Instant.now(), name, atMost, atLeast);
    }

    @Override
    protected ExtensibleLockProvider getLockProvider() {
        return provider;
    }

    @Override
    protected void assertUnlocked(String lockName) {
        assertFalse(provider.isLocked(lockName), lockName + " should be free");
    }

    @Override
    protected void assertLocked(String lockName) {
        assertTrue(provider.isLocked(lockName), lockName + " should be held");
    }
}
