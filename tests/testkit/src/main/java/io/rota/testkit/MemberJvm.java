package io.rota.testkit;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The JVM options of the members a test starts ({@link ProcessCluster}). The default suite starts a few
 * hundred member JVMs on a 2-core machine, and each one's first seconds are class loading and JIT
 * compilation, not Rota: a one-member server used 2.9–3.1 s of CPU to become healthy, 1.9 s with C1 only
 * ({@code -XX:TieredStopAtLevel=1}) and 1.5–1.6 s with C1 and an AppCDS archive of the jar (measured
 * 2026-12-02; design.md P13). Test members serve tests, not benchmarks, so they get both:
 * <ul>
 *   <li>C1 only, unless the cluster asks for the full JIT ({@link ProcessCluster#fullJit()}: the opt-in
 *       benches do, as they measure Rota's speed, which needs C2) or {@code -Drota.process.jit=full} is set;</li>
 *   <li>the archive {@code rota-server-members.jsa} beside the jar, written once per build by a training
 *       run (one member started with {@code -XX:ArchiveClassesAtExit}, healthy, stopped with SIGTERM), used
 *       while it is newer than the jar; {@code -Drota.process.cds=false} turns it off.</li>
 * </ul>
 * Neither changes what a member does, only how soon its code runs fast. Anything that goes wrong with the
 * archive leaves the members without it, said once on standard error.
 */
final class MemberJvm {

    private static final Duration TRAINING_TIMEOUT = Duration.ofSeconds(60);
    /** The JVM's own CDS lines (classes it cannot archive, a stale archive) are not the test's business. */
    private static final List<String> QUIET = List.of("-Xlog:cds=off", "-Xlog:cds+dynamic=off");
    /** This test JVM's archive, once asked ({@code asked}): null when off or not to be had. */
    private static Path archive;
    private static boolean asked;

    private MemberJvm() {
    }

    /**
     * The options for a member running {@code jar}, after -Xmx and the GC and before {@code -jar}: C1 only unless
     * {@code fullJit} (a cluster that measures) or {@code -Drota.process.jit=full} (every cluster).
     */
    static synchronized List<String> options(Path jar, String javaBin, boolean fullJit) {
        List<String> opts = new ArrayList<>();
        if (!fullJit && !"full".equals(System.getProperty("rota.process.jit", "c1"))) {
            opts.add("-XX:TieredStopAtLevel=1");
        }
        if (!asked) {
            asked = true;
            archive = Boolean.parseBoolean(System.getProperty("rota.process.cds", "true")) ? archive(jar, javaBin) : null;
        }
        if (archive != null) {
            opts.add("-XX:SharedArchiveFile=" + archive);
            opts.addAll(QUIET);
        }
        return opts;
    }

    /** The jar's member archive, written first if missing or older than the jar; null if it cannot be had. */
    private static Path archive(Path jar, String javaBin) {
        String name = jar.getFileName().toString().replaceFirst("\\.jar$", "") + "-members.jsa";
        Path file = jar.resolveSibling(name);
        try {
            if (Files.isRegularFile(file)
                    && Files.getLastModifiedTime(file).compareTo(Files.getLastModifiedTime(jar)) > 0) {
                return file;
            }
            train(jar, javaBin, file);
            return file;
        } catch (IOException | RuntimeException | AssertionError e) {
            System.err.println("ProcessCluster: members start without a class-data archive (" + e + ")");
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /** One member started, healthy, stopped with SIGTERM: its JVM writes the classes it loaded at exit. */
    private static void train(Path jar, String javaBin, Path archive) throws IOException, InterruptedException {
        Path dir = Files.createTempDirectory("rota-cds-training");
        Path written = dir.resolve("members.jsa");
        int client = Ports.freePort();
        int peer = Ports.freePort();
        int http = Ports.freePort();
        List<String> cmd = new ArrayList<>(List.of(javaBin, "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-XX:ArchiveClassesAtExit=" + written));
        cmd.addAll(QUIET);
        cmd.addAll(List.of("-jar", jar.toString(), "server", "--name", "n1", "--data-dir", dir.resolve("n1").toString(),
                "--listen-client", "127.0.0.1:" + client, "--listen-peer", "127.0.0.1:" + peer,
                "--http", "127.0.0.1:" + http, "--initial-cluster", "n1=127.0.0.1:" + peer));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(dir.resolve("n1.log").toFile()).start();
        try {
            HttpClient web = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
            HttpRequest health = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + http + "/health")).build();
            Await.until(TRAINING_TIMEOUT, () -> {
                try {
                    return web.send(health, HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
                } catch (IOException e) {
                    return false;
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }, "the class-data training member healthy");
        } finally {
            p.destroy();   // SIGTERM: a normal exit, which writes the archive
            if (!p.waitFor(TRAINING_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
        }
        if (!Files.isRegularFile(written)) {
            throw new IOException("the training member wrote no archive (exit " + p.exitValue() + ", log "
                    + dir.resolve("n1.log") + ")");
        }
        Files.move(written, archive, StandardCopyOption.REPLACE_EXISTING);
        System.err.println("ProcessCluster: wrote the members' class-data archive " + archive);
        try (var paths = Files.walk(dir)) {
            paths.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        }
    }
}
