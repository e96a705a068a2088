package io.rota.server;

import io.rota.testkit.ProcessCluster;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.io.IOException;
import java.nio.file.Files;

/**
 * One {@link ProcessCluster} of three real server processes shared by the tests of a class: started (with a
 * leader elected) before the first test, killed after the last. Register it with
 * {@code @RegisterExtension static final SharedProcessCluster CLUSTER = new SharedProcessCluster();}.
 */
final class SharedProcessCluster implements BeforeAllCallback, AfterAllCallback {

    private ProcessCluster cluster;

    @Override
    public void beforeAll(ExtensionContext context) throws IOException {
        cluster = ProcessCluster.start(Files.createTempDirectory("rota-" + context.getRequiredTestClass().getSimpleName()), 3);
        cluster.awaitLeader();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (cluster != null) {
            cluster.close();
        }
    }

    ProcessCluster get() {
        return cluster;
    }
}
