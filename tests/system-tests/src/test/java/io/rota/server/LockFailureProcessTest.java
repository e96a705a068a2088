package io.rota.server;

import io.rota.client.RotaClient;
import io.rota.client.RotaException;
import io.rota.client.recipes.Lock;
import io.rota.client.recipes.LockHandle;
import io.rota.client.recipes.LockOptions;
import io.rota.testkit.Await;
import io.rota.testkit.ProcessCluster;
import io.rota.testkit.RepositoryRoot;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One lock's failure is no other lock's loss, on three real member processes (issue 31): the scenario the issue
 * was filed with — a refused second lock handed the client's first lock to its waiter seconds before its
 * safe-until — and {@code rotactl lock} reporting a lock lost while its holder was paused.
 */
@Tag("process")
class LockFailureProcessTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    @RegisterExtension
    static final SharedProcessCluster CLUSTER = new SharedProcessCluster();

    @TempDir
    Path dir;

    @Test
    @DisplayName("issue 31: A holds 'held', B waits; A's second lock is refused (name over the key limit); B gets 'held' only after A releases it")
    void aRefusedSecondLockLeavesTheFirstHeldUntilItsRelease() throws Exception {
        LockOptions options = LockOptions.defaults().withTtl(Duration.ofSeconds(3));
        ExecutorService pool = Executors.newCachedThreadPool();
        try (RotaClient a = RotaClient.connect(CLUSTER.get().endpoints());
             RotaClient b = RotaClient.connect(CLUSTER.get().endpoints())) {
            LockHandle held = Lock.of(a, "held", options).acquire(WAIT);
            CompletableFuture<Long> bAcquiredAt = CompletableFuture.supplyAsync(() -> {
                try {
                    LockHandle next = Lock.of(b, "held", options).acquire(Duration.ofSeconds(60));
                    long at = System.nanoTime();
                    next.release();
                    return at;
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            }, pool);
            Await.until(WAIT, () -> a.kv().getPrefix("rota/lock/held/").count() == 2, "B queued behind A");

            RotaException refused = assertThrows(RotaException.class,
                    () -> Lock.of(a, "x".repeat(9_000), options).acquire(Duration.ofSeconds(10)));
            assertTrue(refused.code() == RotaException.Code.REQUEST_TOO_LARGE
                    || refused.code() == RotaException.Code.INVALID_ARGUMENT, refused.toString());

            // A keeps 'held' across two of its TTLs (a revoked session would hand it over at once, an expired
            // one within a TTL); its safe-until keeps moving ahead of the clock.
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(6);
            while (System.nanoTime() - until < 0) {
                assertTrue(held.isHeld() && held.safeUntilNanos() - System.nanoTime() > 0, "A lost 'held': " + held);
                assertTrue(!bAcquiredAt.isDone(), "B got 'held' while A still held it");
                a.kv().get("held");   // paces the loop by a round trip
            }
            long releasedAt = System.nanoTime();
            assertTrue(held.release(), "A's key was still there to release");
            assertTrue(bAcquiredAt.get(WAIT.toSeconds(), TimeUnit.SECONDS) - releasedAt > 0,
                    "B acquired 'held' only after A released it");
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    @DisplayName("issue 31: under a NOSPACE alarm a second lock is refused, the first stays held, its release and the hand-over still work")
    void aNoSpaceAlarmLeavesTheFirstHeldAndReleaseStillWorks() throws Exception {
        LockOptions options = LockOptions.defaults().withTtl(Duration.ofSeconds(3));
        ExecutorService pool = Executors.newCachedThreadPool();
        try (ProcessCluster cluster = ProcessCluster.start(dir.resolve("quota"), 3, "--quota-backend-bytes", "" + 256 * 1024);
             RotaClient a = RotaClient.connect(cluster.endpoints());
             RotaClient b = RotaClient.connect(cluster.endpoints())) {
            LockHandle held = Lock.of(a, "held", options).acquire(WAIT);
            CompletableFuture<LockHandle> waiter = CompletableFuture.supplyAsync(() -> {
                try {
                    return Lock.of(b, "held", options).acquire(Duration.ofSeconds(90));
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            }, pool);
            Await.until(WAIT, () -> a.kv().getPrefix("rota/lock/held/").count() == 2, "B queued behind A");

            String kib = "x".repeat(1024);
            int[] n = {0};
            Await.until(WAIT, () -> {
                try {
                    a.kv().put("fill/" + n[0]++, kib);
                    return false;
                } catch (RotaException e) {
                    assertEquals(RotaException.Code.NO_SPACE, e.code(), e.toString());
                    return true;
                }
            }, "the space quota armed NOSPACE");
            RotaException refused = assertThrows(RotaException.class,
                    () -> Lock.of(a, "second", options).acquire(Duration.ofSeconds(10)));
            assertEquals(RotaException.Code.NO_SPACE, refused.code(), refused.toString());

            // Two TTLs under the alarm: the session's keep-alives go on, A keeps 'held', B keeps waiting.
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(6);
            while (System.nanoTime() - until < 0) {
                assertTrue(held.isHeld() && held.safeUntilNanos() - System.nanoTime() > 0, "A lost 'held' under NOSPACE: " + held);
                assertTrue(!waiter.isDone(), "B got 'held' while A still held it");
                a.kv().get("held");
            }
            assertTrue(held.release(), "a release is deletes only, which NOSPACE does not refuse");
            LockHandle next = waiter.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            assertTrue(next.fencingToken() > held.fencingToken());
            assertTrue(next.release(), "the next holder's release under NOSPACE");
            assertEquals(0, a.kv().getPrefix("rota/lock/").count(), "no place left behind");
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    @DisplayName("issue 31: rotactl lock whose holder was paused past its safe-until (SIGSTOP, another took the lock, SIGCONT) exits 1 and says why")
    void aPausedRotactlLockExitsOneWhenItLostTheLock() throws Exception {
        Path jar = Path.of(System.getProperty("rotactl.jar",
                RepositoryRoot.resolve("tools", "rotactl", "target", "rotactl.jar").toString()));
        assertTrue(Files.isRegularFile(jar), "needs the packaged " + jar.toAbsolutePath() + ": run ./mvnw -B verify");
        Path progress = dir.resolve("progress");
        Path output = dir.resolve("rotactl.out");
        Process rotactl = new ProcessBuilder("java", "-Xmx128m", "-XX:TieredStopAtLevel=1", "-jar", jar.toString(),
                "--endpoints", CLUSTER.get().endpoints(), "lock", "--ttl", "2", "paused", "--",
                "sh", "-c", "echo started > \"$0\"; sleep 4; echo done >> \"$0\"", progress.toString())
                .redirectErrorStream(true).redirectOutput(output.toFile()).start();
        try (RotaClient b = RotaClient.connect(CLUSTER.get().endpoints())) {
            Await.until(WAIT, () -> read(progress).contains("started") || !rotactl.isAlive(), "the command started under the lock");
            assertTrue(rotactl.isAlive(), Files.readString(output));
            signal("STOP", rotactl.pid());   // the holder pauses; its command (a process group of its own) runs on

            LockHandle next = Lock.of(b, "paused", LockOptions.defaults().withTtl(Duration.ofSeconds(2))).acquire(WAIT);
            Await.until(WAIT, () -> read(progress).contains("done"), "the paused holder's command finished");
            signal("CONT", rotactl.pid());
            assertTrue(rotactl.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS), "rotactl ended after SIGCONT");
            String said = Files.readString(output);
            assertEquals(1, rotactl.exitValue(), "a lock lost while its command ran is exit 1: " + said);
            assertTrue(said.contains("lost the lock paused"), said);
            next.release();
        } finally {
            if (rotactl.isAlive()) {
                signal("CONT", rotactl.pid());
                rotactl.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    private static void signal(String name, long pid) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(pid)).inheritIO().start();
        assertTrue(kill.waitFor(10, TimeUnit.SECONDS) && kill.exitValue() == 0, "kill -" + name + " " + pid);
    }

    private static String read(Path file) {
        try {
            return Files.exists(file) ? Files.readString(file) : "";
        } catch (IOException e) {
            return "";   // being written: read again on the next poll
        }
    }
}
