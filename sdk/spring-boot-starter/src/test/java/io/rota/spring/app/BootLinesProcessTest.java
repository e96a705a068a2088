package io.rota.spring.app;

import io.rota.client.KeyValue;
import io.rota.client.RotaClient;
import io.rota.testkit.Await;
import io.rota.testkit.ProcessCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The starter as published, in the applications it promises to fit (design U1). Inside the reactor a module
 * that depends on the starter also sees the shaded SDK's original dependencies (Netty 4.2 among them), so no
 * in-reactor test can show that a Boot 3.5 application needs no Netty BOM. Here the class paths are built by
 * hand, as the installed POMs make them: the starter jar, the shaded SDK jar (its reduced POM leaves only
 * slf4j-api), Spring Boot's jars at the versions its BOM manages, and that line's Netty (copied by
 * maven-dependency-plugin into {@code boot-3.5/} and {@code boot-4.0/}). One instance of
 * {@link TickerApplication} runs on Boot 3.5 with Netty 4.1 and one on Boot 4.0 with Netty 4.2, side by side
 * against a real three-member cluster (server processes), as during a rolling upgrade: each fire time of the
 * {@code @SingletonJob} runs exactly once across the two, and each line has its health indicator (the one of its
 * health API, answering) and meters.
 */
@Tag("process")
class BootLinesProcessTest {

    static final Duration RATE = Duration.ofSeconds(2);
    static final int FIRE_TIMES = 5;
    static final Pattern RAN = Pattern.compile("ran fire=(\\d+) token=(\\d+) calls=(\\d+)");

    private static Path dir;
    private static ProcessCluster cluster;
    private final List<Process> apps = new ArrayList<>();

    @BeforeAll
    static void startCluster() throws IOException {
        dir = Files.createTempDirectory("rota-boot-lines");
        cluster = ProcessCluster.start(dir.resolve("cluster"), 3);
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

    @AfterEach
    void stopApps() throws InterruptedException {
        for (Process p : apps) {
            p.destroyForcibly();
        }
        for (Process p : apps) {
            p.waitFor(10, TimeUnit.SECONDS);
        }
    }

    @Test
    @DisplayName("a Boot 3.5 (Netty 4.1) and a Boot 4.0 (Netty 4.2) instance, no Netty BOM: each fire time runs once")
    void bootLinesShareASingletonJob() throws Exception {
        Path out35 = dir.resolve("boot35.out");
        Path out40 = dir.resolve("boot40.out");
        apps.add(app(property("boot35.dir"), "boot35", out35));
        apps.add(app(property("boot40.dir"), "boot40", out40));
        Await.until(Duration.ofSeconds(120), () -> read(out35).contains("ready instance=boot35")
                && read(out40).contains("ready instance=boot40") || apps.stream().anyMatch(p -> !p.isAlive()),
                "both instances up (outputs in " + dir + ")");
        assertTrue(apps.stream().allMatch(Process::isAlive), "an instance died:\n" + read(out35) + "\n" + read(out40));

        Map<Long, List<String>> runs = new TreeMap<>();
        try (RotaClient rota = RotaClient.builder().endpoints(cluster.endpoints()).build()) {
            Await.until(Duration.ofSeconds(60), () -> {
                runs.clear();
                runs.putAll(runs(rota));
                return runs.size() >= FIRE_TIMES;
            }, FIRE_TIMES + " fire times run");
            stop(apps);
            runs.clear();
            runs.putAll(runs(rota));
        }
        String boot35 = read(out35);
        String boot40 = read(out40);

        assertLine(boot35, "3.5.", "4.1.", "RotaBoot3HealthIndicator");
        assertLine(boot40, "4.0.", "4.2.", "RotaHealthIndicator");
        runs.forEach((fire, instances) -> assertEquals(1, instances.size(), "fire time " + fire + " ran on " + instances));
        for (long fire : runs.keySet()) {
            assertEquals(0, fire % RATE.toMillis(), "fire times are multiples of the rate: " + runs.keySet());
        }
        // Each recorded run is in exactly one instance's output, and the instances counted their calls.
        List<Long> printed = new ArrayList<>();
        long calls = 0;
        for (String out : List.of(boot35, boot40)) {
            Matcher m = RAN.matcher(out);
            while (m.find()) {
                printed.add(Long.parseLong(m.group(1)));
                calls = Math.max(calls, Long.parseLong(m.group(3)));
            }
        }
        printed.sort(null);
        assertEquals(List.copyOf(runs.keySet()), printed, "runs in the cluster and in the instances' outputs");
        assertTrue(calls > 0, "rota.client.calls counted the jobs' calls:\n" + boot35 + "\n" + boot40);
    }

    /** One Boot line's checks: its versions, the SDK from the shaded jar, its health indicator UP, no class clash. */
    private static void assertLine(String out, String boot, String netty, String healthBean) {
        assertTrue(out.contains("boot=" + boot), out);
        assertTrue(out.contains("app netty=" + netty), out);
        assertTrue(out.matches("(?s).*sdk from=\\S*rota-client-shaded-\\S*\\.jar.*"), "the SDK came from the shaded jar: " + out);
        // The bean of this line's health API, answering. Its status is whatever the cluster was at that moment
        // (on a loaded machine a kept-alive lease may just have been lost: DOWN); UP/DOWN semantics are
        // RotaAutoConfigurationTest's and RotaClusterTest's, on both lines.
        assertTrue(out.matches("(?s).*health bean=" + healthBean + " status=(UP|DOWN).*"), out);
        assertTrue(out.contains("metrics bean=1"), out);
        for (String bad : List.of("NoClassDefFoundError", "NoSuchMethodError", "APPLICATION FAILED TO START",
                "No SLF4J providers")) {
            assertFalse(out.contains(bad), bad + ":\n" + out);
        }
    }

    /** The runs recorded in the cluster: fire time (epoch ms) to the instances that ran it. */
    private static Map<Long, List<String>> runs(RotaClient rota) {
        Map<Long, List<String>> runs = new TreeMap<>();
        for (KeyValue kv : rota.kv().getPrefix("ticker/runs/").kvs()) {
            String[] parts = kv.keyString().substring("ticker/runs/".length()).split("/");
            runs.computeIfAbsent(Long.parseLong(parts[0]), f -> new ArrayList<>()).add(parts[1]);
        }
        return runs;
    }

    /** SIGTERM (Spring closes the context: jobs stop, the client closes), then wait for the exit. */
    private static void stop(List<Process> apps) throws InterruptedException {
        for (Process p : apps) {
            p.destroy();
        }
        for (Process p : apps) {
            assertTrue(p.waitFor(60, TimeUnit.SECONDS), "an instance did not stop on SIGTERM");
        }
    }

    /** The application in a JVM whose class path is the starter, the shaded SDK, the app and {@code bootDir}'s jars. */
    private static Process app(String bootDir, String instance, Path out) throws IOException {
        List<String> classPath = new ArrayList<>(List.of(property("starter.jar"), property("shaded.jar"),
                property("app.classes")));
        classPath.addAll(jars(bootDir));
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        return new ProcessBuilder(java.toString(), "-Xmx256m", "-XX:TieredStopAtLevel=1",
                "-cp", String.join(File.pathSeparator, classPath), TickerApplication.class.getName(),
                "--rota.endpoints=" + cluster.endpoints(), "--rota.instance-id=" + instance,
                "--rota.jobs.lock-ttl=3s", "--rota.jobs.poll-interval=200ms",
                "--ticker.rate=" + RATE.toMillis() + "ms", "--spring.main.banner-mode=off")
                .redirectErrorStream(true).redirectOutput(out.toFile()).start();
    }

    private static List<String> jars(String dir) throws IOException {
        try (Stream<Path> files = Files.list(Path.of(dir))) {
            List<String> jars = files.map(Path::toString).filter(n -> n.endsWith(".jar")).sorted().toList();
            assertFalse(jars.isEmpty(), "no jars in " + dir + " (the pre-integration-test copy)");
            assertTrue(jars.stream().noneMatch(j -> j.contains("rota-client-0") || j.contains("protobuf-java")),
                    "only Spring Boot, Micrometer, logging and Netty in " + dir + ": " + jars);
            return jars;
        }
    }

    private static String read(Path file) {
        try {
            return Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String property(String name) {
        String value = System.getProperty(name);
        assertTrue(value != null && !value.isEmpty(),
                name + " is set by failsafe (run ./mvnw -B verify -pl sdk/spring-boot-starter -am)");
        return value;
    }
}
