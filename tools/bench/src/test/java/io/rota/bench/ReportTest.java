package io.rota.bench;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ReportTest {

    private static Measurement write(String w, long ops, double cpu) {
        return new Measurement(w, ops, 10.0, 800, 1600, 3100, 0, -1, -1, cpu);
    }

    private static Measurement failover(long gapMs, long acksAfterKill) {
        return new Measurement("failover", 4000, 10.0, -1, -1, -1, 2, gapMs, acksAfterKill, -1);
    }

    private static final SystemRun ROTA = new SystemRun("Rota", null, "Rota abc123", "rota-client 0.1.0", "17",
            Map.of("write-1", write("write-1", 11_270, 975), "failover", failover(300, 900)));
    private static final SystemRun ETCD = new SystemRun("etcd", null, "etcd 3.4.23", "jetcd-core 0.8.5", "17",
            Map.of("write-1", write("write-1", 9_410, 1186), "failover", failover(1100, 800)));
    private static final SystemRun ZK = new SystemRun("ZooKeeper", null, "ZooKeeper 3.8.0", "curator-recipes 5.9.0",
            "17", Map.of("write-1", write("write-1", 14_220, 625), "failover", failover(5000, 0)));

    @Test
    void throughputRatioIsOverTheFastestPeerAndCpuAndGapOverTheLowest() {
        String table = Report.table(List.of(ROTA, ETCD, ZK));
        String[] lines = table.split("\n");
        assertEquals("| workload | Rota | etcd | ZooKeeper | Rota / best peer |", lines[0]);
        assertEquals("|---|---|---|---|---|", lines[1]);
        // 1,127/s against ZooKeeper's 1,422/s.
        assertEquals("| write 256 B, 1 in flight | 1,127/s, p50 0.80, p99 1.60, p99.9 3.10 ms "
                + "| 941/s, p50 0.80, p99 1.60, p99.9 3.10 ms | 1,422/s, p50 0.80, p99 1.60, p99.9 3.10 ms | 0.79× |",
                lines[2]);
        // A gap against the lowest peer's (etcd 1,100 ms); ZooKeeper never recovered: a lower bound, said so.
        // (Refused writes during the election are the failover's normal retries, not shown as errors.)
        assertEquals("| failover gap, kill -9 of the leader (lower is better) | 300 ms | 1,100 ms "
                + "| ≥ 5,000 ms (no write acknowledged after the kill) | 0.27× |", lines[3]);
        // CPU against the lowest peer's (ZooKeeper 625 µs).
        assertEquals("| server CPU per write, 1 in flight (lower is better) | 975 µs | 1,186 µs | 625 µs | 1.56× |",
                lines[4]);
        assertEquals(5, lines.length, "rows without any figure are left out:\n" + table);
    }

    @Test
    void aSkippedSystemSaysSoInEveryRowAndNoPeerMeansNoRatio() {
        String table = Report.table(List.of(ROTA, SystemRun.skipped("etcd", "ports busy")));
        assertTrue(table.contains("| write 256 B, 1 in flight | 1,127/s, p50 0.80, p99 1.60, p99.9 3.10 ms | skipped | – |"),
                table);
        assertEquals(3 + 2, table.split("\n").length);
    }

    @Test
    void theHeaderNamesEveryVersionAndTheWindows() {
        String header = Report.header(List.of(ROTA, ETCD, SystemRun.skipped("ZooKeeper", "not installed")), "abc123",
                1, 3, new double[] {2, 5}, "quick");
        assertTrue(header.startsWith("Versions: Rota abc123 with rota-client 0.1.0 on JDK 17; etcd 3.4.23 with "
                + "jetcd-core 0.8.5 on JDK 17; ZooKeeper: skipped (not installed)."), header);
        assertTrue(header.contains("Method (quick pass)") && header.contains("1 s warm-up")
                && header.contains("then 3 s measured") && header.contains("after 2 s and writing goes on 5 s"), header);
    }

    @Test
    void aRowWhereNothingFinishedSaysSoAndScoresZero() {
        Measurement none = new Measurement("lock-8x1", 0, 3.0, 0, 0, 0, 0, -1, -1, -1);
        SystemRun rota = new SystemRun("Rota", null, "Rota abc", "rota-client", "17", Map.of("lock-8x1", none));
        SystemRun zk = new SystemRun("ZooKeeper", null, "ZooKeeper 3.8.0", "curator", "17",
                Map.of("lock-8x1", new Measurement("lock-8x1", 390, 3.0, 40_000, 90_000, 95_000, 0, -1, -1, -1)));
        String table = Report.table(List.of(rota, zk));
        assertTrue(table.contains("| lock + unlock, 8 clients on one lock | 0/s (none finished inside the 3 s window) "
                + "| 130/s, p50 40.0, p99 90.0, p99.9 95.0 ms | 0.00× |"), table);
    }

    @Test
    void idleCpuIsAShareOfOneCore() {
        Measurement idle = new Measurement(Compare.IDLE, 0, 3.0, -1, -1, -1, 0, -1, -1, 25_000);
        SystemRun run = new SystemRun("Rota", null, "Rota abc", "rota-client", "17", Map.of(Compare.IDLE, idle));
        String table = Report.table(List.of(run));
        assertTrue(table.contains("| server CPU idle, the 3 s after start (lower is better) | 2.5 % of a core | – |"),
                table);
    }

    @Test
    void millisecondsKeepTwoDecimalsBelowTenAndOneAbove() {
        assertEquals("0.80", Report.millis(800));
        assertEquals("9.99", Report.millis(9_990));
        assertEquals("13.9", Report.millis(13_900));
    }
}
