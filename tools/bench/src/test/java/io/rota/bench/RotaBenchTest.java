package io.rota.bench;

import io.rota.bench.driver.DriverMain;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RotaBenchTest {

    private static Plan plan(String... args) {
        RotaBench.CompareCommand compare = new RotaBench.CompareCommand();
        new CommandLine(compare).parseArgs(args);
        return compare.plan();
    }

    @Test
    void defaultsAreTheFullPassOverAllThreeSystems() {
        Plan p = plan();
        assertEquals(List.of("rota", "etcd", "zookeeper"), p.systems());
        assertEquals(DriverMain.WORKLOADS, p.workloads());
        assertEquals(Plan.DEFAULT_WARMUP_MS, p.warmupMs());
        assertEquals(Plan.DEFAULT_MEASURE_MS, p.measureMs());
        assertFalse(p.quick());
    }

    @Test
    void rotaEtcdIsAnOptInSystemDrivenByTheEtcdDriver() {
        assertEquals(List.of("rota", "rota-etcd", "etcd"), plan("--systems", "rota,rota-etcd,etcd").systems());
        assertEquals("127.0.0.1:12301,127.0.0.1:12302,127.0.0.1:12303", RotaEtcdSystem.etcdEndpoints(12000));
    }

    @Test
    void quickShortensEveryWindowAndExplicitSecondsWin() {
        Plan p = plan("--quick", "--systems", "zk,rota", "--measure", "2.5");
        assertEquals(List.of("zookeeper", "rota"), p.systems());
        assertEquals(Plan.QUICK_WARMUP_MS, p.warmupMs());
        assertEquals(2_500, p.measureMs());
        assertEquals(Plan.QUICK_FAILOVER_AFTER_MS, p.failoverAfterMs());
        assertTrue(p.quick());
        assertEquals(p, p.toBuilder().build(), "toBuilder keeps every value, the quick windows included");
    }

    @Test
    void aFullPassFitsItsTimeBudget() {
        // 9 rows of warm-up + window per system, three systems: the measured part of a full pass is 7.5 min of
        // the 15 the bench promises (the rest: starting and stopping clusters, JVMs, opening 64 lock sessions).
        Plan full = plan();
        long perSystem = 8 * (full.warmupMs() + full.measureMs()) + full.failoverBeforeMs() + full.failoverAfterMs();
        assertTrue(3 * perSystem <= 8 * 60_000, "full pass windows: " + 3 * perSystem + " ms");
        Plan quick = plan("--quick");
        long quickPerSystem = 8 * (quick.warmupMs() + quick.measureMs()) + quick.failoverBeforeMs()
                + quick.failoverAfterMs();
        assertTrue(3 * quickPerSystem <= 2 * 60_000, "quick pass windows: " + 3 * quickPerSystem + " ms");
    }

    @Test
    void badValuesNameTheOptionAndExitWithTwo() {
        CommandLine.ParameterException e = assertThrows(CommandLine.ParameterException.class,
                () -> plan("--systems", "rota,consul"));
        assertTrue(e.getMessage().contains("--systems") && e.getMessage().contains("consul"), e.getMessage());
        e = assertThrows(CommandLine.ParameterException.class, () -> plan("--workloads", "failover,write-1"));
        assertTrue(e.getMessage().contains("failover must come last"), e.getMessage());
        e = assertThrows(CommandLine.ParameterException.class, () -> plan("--measure", "0.1"));
        assertTrue(e.getMessage().contains("--measure"), e.getMessage());
        assertThrows(CommandLine.ParameterException.class, () -> plan("--systems", "rota,rota"));

        StringWriter err = new StringWriter();
        int exit = new CommandLine(new RotaBench()).setErr(new PrintWriter(err))
                .execute("compare", "--systems", "consul");
        assertEquals(2, exit);
        assertTrue(err.toString().contains("unknown system 'consul'"), err.toString());
    }
}
