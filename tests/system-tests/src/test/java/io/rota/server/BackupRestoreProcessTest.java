package io.rota.server;

import io.rota.client.GetResult;
import io.rota.client.KeyValue;
import io.rota.client.LeaseTimeToLive;
import io.rota.client.RotaClient;
import io.rota.client.RotaException;
import io.rota.testkit.Await;
import io.rota.testkit.ProcessCluster;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 18 end to end, on real members: back up a used cluster with {@code rotactl snapshot save}, lose every
 * member and its data dir, {@code rota snapshot restore} three new dirs, start them as a new cluster, and find
 * every key (value, create/mod revision, version, lease), the lease and the revision back; a damaged backup is
 * refused. Then the restored cluster's space quota: past a tiny --quota-backend-bytes its leader arms NOSPACE,
 * puts fail NO_SPACE, deletes still work, and after a compaction and {@code rotactl alarm disarm} puts work again.
 */
@Tag("process")
class BackupRestoreProcessTest {

    private static final int MEMBERS = 3;
    /** Small enough that the test fills it in a few hundred writes of 1 KiB. */
    private static final int QUOTA_BYTES = 256 * 1024;
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    @Test
    void aRestoredClusterHasEveryKeyLeaseAndRevisionAndItsQuotaArmsAndDisarms() throws Exception {
        Path backup = dir.resolve("backup.db");
        Map<String, KeyValue> before = new TreeMap<>();
        try (ProcessCluster cluster = ProcessCluster.start(dir.resolve("c"), MEMBERS,
                "--quota-backend-bytes", "" + QUOTA_BYTES)) {
            try {
                run(cluster, backup, before);
            } catch (Throwable e) {
                for (int i = 0; i < MEMBERS; i++) {
                    List<String> log = Files.readAllLines(cluster.logFile(i));
                    System.out.println("---- " + ProcessCluster.name(i) + " (last 40 lines)");
                    log.subList(Math.max(0, log.size() - 40), log.size()).forEach(System.out::println);
                }
                throw e;
            }
        }
    }

    private void run(ProcessCluster cluster, Path backup, Map<String, KeyValue> before) throws Exception {
        {
            long revision;
            long leaseId;
            try (RotaClient client = client(cluster)) {
                leaseId = client.leases().grant(Duration.ofSeconds(120)).id();
                for (int i = 0; i < 20; i++) {
                    client.kv().put("app/k" + i, "v" + i);
                }
                client.kv().put("app/k3", "v3-again");
                client.kv().put("app/locked", "holder", leaseId);
                client.kv().delete("app/k7");
                GetResult all = client.kv().getPrefix("app/");
                all.kvs().forEach(kv -> before.put(kv.keyString(), kv));
                revision = all.revision();

                step("wrote revision " + revision + "; saving a backup");
                RotactlRunner.Run saved = RotactlRunner.run(cluster.endpoint(1), "", "snapshot", "save", backup.toString());
                assertEquals(0, saved.exitCode(), saved.toString());
                assertTrue(saved.out().contains("Snapshot saved at " + backup), saved.out());
                assertFalse(Files.exists(dir.resolve("backup.db.part")), "the .part file is renamed");
                RotactlRunner.Run status = RotactlRunner.run(Map.of(), "", "-w", "json", "snapshot", "status",
                        backup.toString());
                assertEquals(0, status.exitCode(), status.toString());
                assertEquals(revision, RotactlRunner.revision(status.out()), status.out());
                assertTrue(status.out().contains("\"total_keys\":" + before.size()), status.out());
                client.kv().put("app/after-backup", "lost with the cluster");
            }

            step("backup saved and checked; stopping every member");
            for (int i = 0; i < MEMBERS; i++) {
                cluster.terminate(i, TIMEOUT);
            }
            for (int i = 0; i < MEMBERS; i++) {
                cluster.deleteDataDir(i);
            }

            // A damaged backup is refused, naming the problem, and nothing is written.
            byte[] damaged = Files.readAllBytes(backup);
            damaged[damaged.length / 2] ^= 0x01;
            Path bad = Files.write(dir.resolve("damaged.db"), damaged);
            String[] refused = restore(cluster, 0, bad);
            assertEquals("1", refused[0], refused[1] + refused[2]);
            assertTrue(refused[2].contains("not a valid backup") && refused[2].contains("SHA-256"), refused[2]);
            assertFalse(Files.exists(cluster.dataDir(0)), "nothing is written from a damaged backup");
            RotactlRunner.Run badStatus = RotactlRunner.run(Map.of(), "", "snapshot", "status", bad.toString());
            assertNotEquals(0, badStatus.exitCode(), badStatus.toString());
            assertTrue(badStatus.err().contains("SHA-256"), badStatus.toString());

            for (int i = 0; i < MEMBERS; i++) {
                String[] done = restore(cluster, i, backup);
                assertEquals("0", done[0], done[1] + done[2]);
                assertTrue(done[1].contains("--cluster-id restored-test"), done[1]);
            }
            step("restored three data dirs; starting them");
            String initialCluster = initialCluster(cluster);
            for (int i = 0; i < MEMBERS; i++) {
                cluster.startMember(i, initialCluster, "--cluster-id", "restored-test");
            }
            for (int i = 0; i < MEMBERS; i++) {
                cluster.awaitHealthy(i);
            }

            step("restored cluster healthy; checking it");
            try (RotaClient client = client(cluster)) {
                GetResult all = client.kv().getPrefix("app/");
                assertEquals(revision, all.revision(), "the revision is back");
                Map<String, KeyValue> after = new TreeMap<>();
                all.kvs().forEach(kv -> after.put(kv.keyString(), kv));
                assertEquals(before, after, "every key, with its value, revisions, version and lease");
                LeaseTimeToLive ttl = client.leases().timeToLive(leaseId, true);
                assertEquals(Duration.ofSeconds(120), ttl.grantedTtl());
                assertTrue(ttl.remaining().toSeconds() > 100, "the lease restarts with its full TTL: " + ttl);
                assertEquals(List.of("app/locked"), ttl.keys());
                for (int i = 0; i < MEMBERS; i++) {
                    int member = i;
                    Await.until(TIMEOUT, () -> client.cluster().hashKvAsync(cluster.endpoint(member), revision).join().hash()
                            == client.cluster().hashKvAsync(cluster.endpoint(0), revision).join().hash(), "n" + i + " same state");
                }
                assertEquals(revision + 1, client.kv().put("app/new", "written to the new cluster").revision());

                step("every key, the lease and the revision are back; filling the quota");
                // The space quota: fill past it; the leader arms NOSPACE within a tick and puts are refused.
                String kib = "x".repeat(1024);
                int[] n = {0};
                Await.until(TIMEOUT, () -> {
                    try {
                        client.kv().put("fill/" + n[0]++, kib);
                        return false;
                    } catch (RotaException e) {
                        assertEquals(RotaException.Code.NO_SPACE, e.code(), e.toString());
                        assertTrue(e.getMessage().contains("rotactl alarm disarm"), e.getMessage());
                        return true;
                    }
                }, "a put refused with NO_SPACE");
                step("NOSPACE after " + n[0] + " puts of 1 KiB");
                RotactlRunner.Run alarms = RotactlRunner.run(cluster.endpoints(), "", "alarm", "list");
                assertEquals(0, alarms.exitCode(), alarms.toString());
                assertTrue(alarms.out().matches("(?s)memberID:\\d+ alarm:NOSPACE\\s*"), alarms.out());
                RotactlRunner.Run refusedPut = RotactlRunner.run(cluster.endpoints(), "", "put", "fill/more", "x");
                assertNotEquals(0, refusedPut.exitCode());
                assertTrue(refusedPut.err().contains("alarm"), refusedPut.toString());

                // Deletes and compaction still work; then disarm, and puts work again.
                client.kv().deletePrefix("fill/");
                long now = client.kv().get("app/new").revision();
                RotactlRunner.Run compacted = RotactlRunner.run(cluster.endpoints(), "", "compaction", "" + now);
                assertEquals(0, compacted.exitCode(), compacted.toString());
                assertEquals("compacted revision " + now + "\n", compacted.out());
                RotaException old = org.junit.jupiter.api.Assertions.assertThrows(RotaException.class, () -> client.kv()
                        .get("app/k1", io.rota.client.GetOptions.builder().revision(revision).build()));
                assertEquals(RotaException.Code.COMPACTED, old.code());
                assertEquals(now, old.compactRevision());
                RotactlRunner.Run disarmed = RotactlRunner.run(cluster.endpoints(), "", "alarm", "disarm");
                assertEquals(0, disarmed.exitCode(), disarmed.toString());
                assertTrue(client.maintenance().alarms().isEmpty());
                assertTrue(client.kv().put("app/after-disarm", "ok").revision() > now);
            }
        }
    }

    private static RotaClient client(ProcessCluster cluster) {
        return RotaClient.builder().endpoints(cluster.endpoints()).callTimeout(TIMEOUT).build();
    }

    private static void step(String what) {
        System.out.println("BackupRestoreProcessTest: " + what);
    }

    /** {@code rota snapshot restore FILE} for member i, in-process: exit code, stdout, stderr. */
    static String[] restore(ProcessCluster cluster, int i, Path file) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = RotaServer.run(new String[] {"snapshot", "restore", file.toString(), "--name", ProcessCluster.name(i),
                "--initial-cluster", initialCluster(cluster), "--data-dir", cluster.dataDir(i).toString(),
                "--cluster-id", "restored-test"}, new PrintWriter(out, true), new PrintWriter(err, true));
        return new String[] {"" + code, out.toString(), err.toString()};
    }

    static String initialCluster(ProcessCluster cluster) {
        StringBuilder s = new StringBuilder();
        for (int j = 0; j < cluster.size(); j++) {
            s.append(j == 0 ? "" : ",").append(ProcessCluster.name(j)).append("=127.0.0.1:").append(cluster.peerPort(j));
        }
        return s.toString();
    }
}
