package io.rota.server;

import io.rota.client.RotaClient;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * One {@link TestCluster} shared by the tests of a class: started (with a leader elected) before the
 * first test, closed and its data deleted after the last. Register it with
 * {@code @RegisterExtension static final SharedCluster CLUSTER = new SharedCluster(...)}.
 */
final class SharedCluster implements BeforeAllCallback, AfterAllCallback {

    private final Duration watchProgressInterval;
    private Path dir;
    private TestCluster cluster;

    SharedCluster(Duration watchProgressInterval) {
        this.watchProgressInterval = watchProgressInterval;
    }

    @Override
    public void beforeAll(ExtensionContext context) throws IOException {
        dir = Files.createTempDirectory("rota-" + context.getRequiredTestClass().getSimpleName());
        cluster = new TestCluster(dir, 3, watchProgressInterval);
        cluster.awaitLeader();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (cluster != null) {
            cluster.close();
        }
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    TestCluster get() {
        return cluster;
    }

    /** A new SDK client for all three members (the caller closes it). */
    RotaClient connect() {
        return RotaClient.connect(cluster.endpoints());
    }
}
