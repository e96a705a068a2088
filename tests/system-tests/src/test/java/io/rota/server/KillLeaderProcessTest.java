package io.rota.server;

import io.rota.proto.Error;
import io.rota.proto.Frame;
import io.rota.testkit.Await;
import io.rota.testkit.ProcessCluster;
import io.rota.testkit.Ports;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static io.rota.server.Requests.get;
import static io.rota.server.Requests.ok;
import static io.rota.server.Requests.put;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * End to end: three real {@code java -jar rota-server.jar server ...} processes. The leader is killed
 * with SIGKILL (Process.destroyForcibly on Linux); writes continue through the survivors and every
 * acknowledged write is still there. Runs in the integration-test phase, after the jar is packaged.
 */
@Tag("process")
class KillLeaderProcessTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    @TempDir
    Path dir;
    private final List<Process> processes = new ArrayList<>();

    @AfterEach
    void stopEveryProcess() throws InterruptedException {
        for (Process p : processes) {
            p.destroyForcibly();
        }
        for (Process p : processes) {
            p.waitFor();
        }
    }

    @Test
    void writesContinueAfterTheLeaderIsKilledAndNothingAcknowledgedIsLost() throws Exception {
        Path jar = Path.of(System.getProperty("rota.jar", "target/rota-server.jar"));
        assumeTrue(Files.isRegularFile(jar), "needs the packaged " + jar + ": run ./mvnw -B verify");
        int[] client = new int[3];
        int[] httpPort = new int[3];
        StringBuilder cluster = new StringBuilder();
        for (int i = 0; i < 3; i++) {
            client[i] = Ports.freePort();
            httpPort[i] = Ports.freePort();
            cluster.append(i == 0 ? "" : ",").append("n").append(i + 1).append("=127.0.0.1:").append(Ports.freePort());
        }
        for (int i = 0; i < 3; i++) {
            String peer = cluster.toString().split(",")[i].split("=")[1];
            ProcessBuilder pb = new ProcessBuilder(javaBin(), "-Xmx256m", "-jar", jar.toString(),
                    "server", "--name", "n" + (i + 1), "--data-dir", dir.resolve("n" + (i + 1)).toString(),
                    "--listen-client", "127.0.0.1:" + client[i], "--listen-peer", peer,
                    "--http", "127.0.0.1:" + httpPort[i], "--initial-cluster", cluster.toString(),
                    "--heartbeat-ms", "50", "--election-ms", "500")
                    .redirectErrorStream(true).redirectOutput(dir.resolve("n" + (i + 1) + ".log").toFile());
            processes.add(pb.start());
        }
        for (int i = 0; i < 3; i++) {
            int port = httpPort[i];
            Await.until(TIMEOUT, () -> ProcessCluster.httpGetOnPort(port, "/health").status() == 200,
                    "n" + (i + 1) + " healthy");
        }
        // Healthy is not yet elected: wait until some member reports itself leader.
        int[] found = {-1};
        Await.until(TIMEOUT, () -> {
            for (int i = 0; i < 3; i++) {
                if (ProcessCluster.httpGetOnPort(httpPort[i], "/status").body().contains("\"role\":\"leader\"")) {
                    found[0] = i;
                    return true;
                }
            }
            return false;
        }, "a leader");
        int leader = found[0];
        int a = (leader + 1) % 3;
        int b = (leader + 2) % 3;

        List<String> acknowledged = new ArrayList<>();
        try (FrameClient viaA = new FrameClient(new InetSocketAddress("127.0.0.1", client[a]));
             FrameClient viaB = new FrameClient(new InetSocketAddress("127.0.0.1", client[b]))) {
            for (int k = 0; k < 50; k++) {
                ok(viaA.call(put("before/" + k, "v" + k)));
                acknowledged.add("before/" + k);
            }
            processes.get(leader).destroyForcibly().waitFor();
            for (int k = 0; k < 50; k++) {
                String key = "after/" + k;
                Await.until(TIMEOUT, () -> acknowledgedPut(viaA, key), "a put of " + key + " acknowledged");
                acknowledged.add(key);
            }
            for (String key : acknowledged) {
                Frame read = ok(viaB.call(get(key)));
                assertEquals(1, read.getRangeResponse().getCount(), key + " was acknowledged but is lost");
            }
        }
    }

    /** One attempt; UNAVAILABLE and TIMEOUT (a leader election in progress) are retried by the caller. */
    private static boolean acknowledgedPut(FrameClient c, String key) {
        Frame answer = c.call(put(key, "v"));
        if (answer.hasError()) {
            Error.Code code = answer.getError().getCode();
            if (code != Error.Code.UNAVAILABLE && code != Error.Code.TIMEOUT) {
                throw new AssertionError(code + ": " + answer.getError().getMessage());
            }
            return false;
        }
        return true;
    }

    private static String javaBin() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }
}
