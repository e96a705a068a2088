package io.rota.server;

import io.rota.testkit.Await;
import io.rota.testkit.RepositoryRoot;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Leader election with real processes on both sides: two {@code scripts/rotactl elect} processes campaign
 * against three real server processes; the elected one is killed with kill -9 (no resign, no release),
 * and the other becomes leader once the dead one's lease expires — with a higher epoch, never while the
 * first still led.
 */
@Tag("process")
class ElectKillProcessTest {

    @RegisterExtension
    static final SharedProcessCluster CLUSTER = new SharedProcessCluster();

    private static final Pattern EPOCH = Pattern.compile("epoch (\\d+)");

    @TempDir
    Path dir;

    @Test
    void theSecondCampaignerLeadsAfterTheFirstIsKilled() throws Exception {
        Path first = dir.resolve("first.out");
        Path second = dir.resolve("second.out");
        List<Process> started = new ArrayList<>();
        try {
            Process a = elect("app-1", first);
            started.add(a);
            Await.until(Duration.ofSeconds(30), () -> epoch(first) > 0, "app-1 elected");
            Process b = elect("app-2", second);
            started.add(b);
            // app-2 is queued behind app-1: it must not claim leadership while app-1 lives.
            Await.until(Duration.ofSeconds(30), () -> campaigning(), "app-2's campaign key in the queue");
            assertEquals(0, epoch(second), "app-2 claimed leadership while app-1 led: " + read(second));

            a.destroyForcibly().waitFor(); // kill -9: no resign, its lease must expire
            Await.until(Duration.ofSeconds(60), () -> epoch(second) > 0, "app-2 elected after app-1's kill -9");

            assertTrue(read(second).contains("app-2"), read(second));
            assertTrue(epoch(second) > epoch(first), "epochs: " + epoch(first) + " then " + epoch(second));
        } finally {
            for (Process p : started) {
                p.destroyForcibly().waitFor();
            }
        }
    }

    /** Starts {@code scripts/rotactl elect demo PROPOSAL} as a real process writing its output to {@code out}. */
    private static Process elect(String proposal, Path out) throws IOException {
        Path script = RepositoryRoot.resolve("scripts", "rotactl");
        return new ProcessBuilder("bash", script.toString(), "--endpoints", CLUSTER.get().endpoints(),
                "elect", "kill-demo", proposal).redirectErrorStream(true).redirectOutput(out.toFile()).start();
    }

    /** Whether two campaign keys exist under the election's prefix. */
    private static boolean campaigning() {
        Path script = RepositoryRoot.resolve("scripts", "rotactl");
        try {
            Process p = new ProcessBuilder("bash", script.toString(), "--endpoints", CLUSTER.get().endpoints(),
                    "get", "rota/election/kill-demo/", "--prefix", "--count-only").redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes());
            p.waitFor();
            return out.trim().endsWith("2");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static long epoch(Path out) {
        Matcher m = EPOCH.matcher(read(out));
        return m.find() ? Long.parseLong(m.group(1)) : 0;
    }

    private static String read(Path out) {
        try {
            return Files.exists(out) ? Files.readString(out) : "";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
