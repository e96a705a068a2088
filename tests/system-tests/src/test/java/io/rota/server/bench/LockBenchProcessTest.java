package io.rota.server.bench;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Runs {@link LockBench} when asked for (it takes about a minute and measures, it does not assert speed):
 * <pre>./mvnw -q -o -B verify -pl tests/system-tests -am -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false \
 *     -Dit.test=LockBenchProcessTest -Drota.lockbench=10</pre>
 * {@code rota.lockbench} is the timed seconds per workload (3 s warm-up each). The table is printed and
 * written to {@code tests/system-tests/target/lock-bench.md}. Without the property the test is skipped, saying so.
 * {@code -Drota.lockbench.only=64} runs only some workloads, {@code -Drota.lockbench.jfr=DIR} records the
 * members with JFR (see {@link LockBench}).
 */
@Tag("process")
class LockBenchProcessTest {

    @TempDir
    Path dir;

    @Test
    @DisplayName("lock bench: cycles/s for 1 client, 8 clients on one lock, 64 clients on 64 locks (opt-in)")
    void lockBench() throws Exception {
        String seconds = System.getProperty("rota.lockbench");
        assumeTrue(seconds != null && !seconds.isBlank(),
                "the lock bench runs only with -Drota.lockbench=<seconds per workload> (it measures, it does not test)");
        List<LockBench.Result> results = LockBench.run(dir, Duration.ofSeconds(Long.parseLong(seconds.trim())),
                Duration.ofSeconds(3));
        String table = LockBench.table(results);
        System.out.println(table);
        Files.writeString(Path.of("target", "lock-bench.md"), table);
        assertEquals(System.getProperty("rota.lockbench.only", "1,8,64").split(",").length, results.size());
        results.forEach(r -> assertTrue(r.cycles() > 0, "no cycle completed in " + r.workload()));
    }
}
