package io.rota.shaded.it;

import io.rota.testkit.ProcessCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The shaded SDK (rota-client-shaded) next to an application's own Netty 4.1 (as Spring Boot 3.5 manages) and
 * Netty 4.2, each in a JVM of its own whose class path is the shaded jar, that Netty, slf4j-api and
 * {@link ShadedApp} only: a real lock and put/get against a real three-member cluster (processes).
 */
@Tag("process")
class ShadedClientProcessTest {

    private static Path dir;
    private static ProcessCluster cluster;

    @BeforeAll
    static void startCluster() throws IOException {
        dir = Files.createTempDirectory("rota-shaded");
        cluster = ProcessCluster.start(dir, 3);
        cluster.awaitLeader();
    }

    @AfterAll
    static void stopCluster() throws IOException {
        if (cluster != null) {
            cluster.close();
        }
        if (dir != null) {
            try (Stream<Path> files = Files.walk(dir)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    @Test
    @DisplayName("the shaded jar holds only relocated Netty and protobuf classes, and no native library")
    void theJarIsRelocated() throws IOException {
        try (JarFile jar = new JarFile(property("shaded.jar"))) {
            List<String> names = jar.stream().map(e -> e.getName()).toList();
            assertTrue(names.contains("io/rota/client/RotaClient.class"));
            assertTrue(names.contains("io/rota/client/recipes/Lock.class"));
            assertTrue(names.stream().anyMatch(n -> n.startsWith("io/rota/shaded/io/netty/channel/")));
            assertTrue(names.stream().anyMatch(n -> n.startsWith("io/rota/shaded/com/google/protobuf/")));
            assertEquals(List.of(), names.stream().filter(n -> n.startsWith("io/netty/") || n.startsWith("com/google/")
                    || n.startsWith("META-INF/native/")).toList(), "unrelocated Netty/protobuf or native files");
        }
    }

    @Test
    @DisplayName("with Netty 4.1 on the application's class path: put/get and a fenced lock work")
    void worksNextToNetty41() throws Exception {
        String out = runApp(property("netty41.dir"));
        assertTrue(out.contains("app netty=4.1."), out);
        assertAppWorked(out);
    }

    @Test
    @DisplayName("with Netty 4.2 on the application's class path: put/get and a fenced lock work")
    void worksNextToNetty42() throws Exception {
        String out = runApp(property("netty42.dir"));
        assertTrue(out.contains("app netty=4.2."), out);
        assertAppWorked(out);
    }

    @Test
    @DisplayName("counter-check: the plain (unshaded) SDK next to Netty 4.1 fails, so the test above proves the shading")
    void thePlainClientFailsNextToNetty41() throws Exception {
        // The module's own test class path has the plain SDK jars (or class directories) and protobuf.
        List<String> plain = new ArrayList<>();
        for (String entry : property("surefire.test.class.path").split(File.pathSeparator)) {
            String normalized = entry.replace('\\', '/');
            if (normalized.matches(".*/(client|recipes|proto)/target/classes/?")
                    || normalized.matches(".*/rota-(client|recipes|proto)-[0-9][^/]*\\.jar")
                    || normalized.matches(".*/protobuf-java-[^/]*\\.jar")) {
                plain.add(entry);
            }
        }
        assertEquals(4, plain.size(), "client, recipes, proto and protobuf-java on the test class path: " + plain);
        Process p = app(plain, property("netty41.dir"));
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the app did not end: " + out);
        assertTrue(p.exitValue() != 0 && out.contains("NoClassDefFoundError: io/netty/channel/MultiThreadIoEventLoopGroup"),
                "the plain SDK needs Netty 4.2 classes: " + out);
    }

    private static void assertAppWorked(String out) {
        assertTrue(out.contains("sdk from=") && out.contains("rota-client-shaded"), "the SDK came from the shaded jar: " + out);
        assertTrue(out.contains("get=hello from the shaded SDK"), out);
        assertTrue(out.matches("(?s).*lock token=[1-9][0-9]* held=true.*"), out);
        assertTrue(out.contains("state=CONNECTED"), out);
        assertTrue(out.strip().endsWith("OK"), out);
        assertFalse(out.contains("NoClassDefFoundError") || out.contains("NoSuchMethodError"), out);
    }

    private static String runApp(String nettyDir) throws Exception {
        Process p = app(List.of(property("shaded.jar")), nettyDir);
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the app did not end: " + out);
        assertEquals(0, p.exitValue(), "the app failed:\n" + out);
        return out;
    }

    /** {@link ShadedApp} in a JVM whose class path is {@code sdk}, slf4j-api, the app and the jars in {@code nettyDir}. */
    private static Process app(List<String> sdk, String nettyDir) throws IOException {
        List<String> classPath = new ArrayList<>(sdk);
        classPath.add(property("app.classes"));
        classPath.addAll(jars(property("slf4j.dir")));
        classPath.addAll(jars(nettyDir));
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        return new ProcessBuilder(java.toString(), "-cp", String.join(File.pathSeparator, classPath),
                ShadedApp.class.getName(), cluster.endpoints()).redirectErrorStream(true).start();
    }

    private static List<String> jars(String dir) throws IOException {
        try (Stream<Path> files = Files.list(Path.of(dir))) {
            List<String> jars = files.map(Path::toString).filter(n -> n.endsWith(".jar")).sorted().toList();
            assertFalse(jars.isEmpty(), "no jars in " + dir + " (the pre-integration-test copy)");
            return jars;
        }
    }

    private static String property(String name) {
        String value = System.getProperty(name);
        assertTrue(value != null && !value.isEmpty(),
                name + " is set by failsafe (run ./mvnw -B verify -pl sdk/client-shaded -am)");
        return value;
    }
}
