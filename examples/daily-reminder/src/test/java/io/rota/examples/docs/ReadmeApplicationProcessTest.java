package io.rota.examples.docs;

import io.rota.testkit.RepositoryRoot;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * README.md's "An application's build" followed as written (design HS42): the install command, the pom and the
 * Java main marked {@code <!-- readme-app: ... -->} in README.md. The SDK modules the command names are
 * installed, from a copy of this repository (so nothing here is rebuilt under the running build), into a
 * temporary local repository; ~/.m2 is only read, as its tail ({@code -Dmaven.repo.local.tail}), never written.
 * The application is built offline against that repository alone plus the tail, then run against a port where
 * nothing listens: it must fail the SDK's way — exit 1 with "UNAVAILABLE" from the lock recipe, and the SDK's
 * own log line through the application's slf4j binding — which needs the client, the recipes, the protocol,
 * protobuf, Netty and a logger on its class path.
 *
 * <p>Opt-in, as it builds for a minute or two: {@code ./mvnw -o -B -pl examples/daily-reminder -am -Dtest=none
 * -Dsurefire.failIfNoSpecifiedTests=false -Dfailsafe.failIfNoSpecifiedTests=false
 * -Dit.test=ReadmeApplicationProcessTest -Drota.readmeapp=true verify}.
 */
@Tag("process")
class ReadmeApplicationProcessTest {

    private static final Pattern MARK = Pattern.compile("^<!-- readme-app: (\\S+) -->\\s*$");
    private static final Pattern PL = Pattern.compile("(?:^|\\s)-pl\\s+(\\S+)");
    private static final Set<String> NOT_COPIED = Set.of("target", ".git", "node_modules", "data");

    @TempDir
    Path work;

    @Test
    void anApplicationBuiltFromTheReadmeFindsTheWholeSdk() throws Exception {
        assumeTrue(Boolean.getBoolean("rota.readmeapp"), "building an application from README.md is opt-in: "
                + "-Drota.readmeapp=true (see the class comment)");
        Path root = RepositoryRoot.find();
        Map<String, String> blocks = markedBlocks(Files.readAllLines(root.resolve("README.md")));
        assertEquals(Set.of("install", "pom.xml", "src/main/java/Main.java"), blocks.keySet(),
                "README.md's marked blocks of the application");

        String install = blocks.get("install").strip();
        Matcher pl = PL.matcher(install);
        assertTrue(install.startsWith("./mvnw ") && install.contains(" install ") && install.contains(" -am")
                && pl.find(), "README.md's install command: " + install);

        Path source = work.resolve("rota");
        copyTree(root, source);
        Path repo = work.resolve("repo");
        String tail = "-Dmaven.repo.local.tail=" + Path.of(System.getProperty("user.home"), ".m2", "repository");
        List<String> installCommand = new ArrayList<>(Arrays.asList(install.split("\\s+")));
        installCommand.set(0, source.resolve("mvnw").toString());
        installCommand.addAll(List.of("-o", "-B", "-Dmaven.repo.local=" + repo, tail));
        run(source, installCommand, 15);
        for (String module : pl.group(1).split(",")) {
            assertTrue(Files.isDirectory(source.resolve(module)), "README.md installs a module that is not here: "
                    + module);
        }

        Path app = work.resolve("app");
        Files.createDirectories(app.resolve("src/main/java"));
        Files.writeString(app.resolve("pom.xml"), blocks.get("pom.xml"));
        Files.writeString(app.resolve("src/main/java/Main.java"), blocks.get("src/main/java/Main.java"));
        run(app, List.of(source.resolve("mvnw").toString(), "-o", "-q", "-B", "-Dmaven.repo.local=" + repo, tail,
                "package", "org.apache.maven.plugins:maven-dependency-plugin:" + dependencyPluginVersion(root)
                        + ":build-classpath", "-Dmdep.outputFile=cp.txt"), 10);

        Path jar;
        try (Stream<Path> jars = Files.list(app.resolve("target"))) {
            jar = jars.filter(p -> p.toString().endsWith(".jar")).findFirst().orElseThrow();
        }
        String classPath = jar + java.io.File.pathSeparator + Files.readString(app.resolve("cp.txt")).strip();
        assertFalse(classPath.contains("rota-kv-server") || classPath.contains("rota-raft-core"),
                "an application of the SDK gets no server: " + classPath);
        ProcessBuilder main = new ProcessBuilder(javaExecutable(), "-cp", classPath, "Main").directory(app.toFile());
        main.environment().put("ROTA_ENDPOINTS", "127.0.0.1:" + portWithNothingListening());
        Result result = run(main, 2);
        assertEquals(1, result.exit(), "the application, with no cluster there, exits 1:\n" + result);
        assertTrue(result.out().contains("UNAVAILABLE"), "the SDK's typed error:\n" + result);
        assertTrue(result.err().contains("WARN io.rota.client"), "the SDK's log line through slf4j-simple:\n" + result);
        assertFalse(result.all().contains("No SLF4J providers") || result.all().contains("NoClassDefFoundError")
                || result.all().contains("ClassNotFoundException"), "a class path with a hole:\n" + result);
    }

    @Test
    void theBomAndTheReadmeNameTheProjectsVersion() throws IOException {
        Path root = RepositoryRoot.find();
        String version = projectVersion(Files.readString(root.resolve("pom.xml")));
        assertEquals(version, projectVersion(Files.readString(root.resolve("sdk").resolve("bom").resolve("pom.xml"))),
                "sdk/bom/pom.xml has no parent: its version must be written out as the project's");
        String pom = markedBlocks(Files.readAllLines(root.resolve("README.md"))).get("pom.xml");
        assertTrue(pom != null && pom.contains("<artifactId>rota-bom</artifactId>\n        <version>" + version
                + "</version>"), "README.md's application imports rota-bom " + version + ":\n" + pom);
    }

    /** The first {@code <version>} at the project's level (two spaces in), as the poms here are written. */
    private static String projectVersion(String pom) {
        Matcher m = Pattern.compile("(?m)^  <version>([^<]+)</version>").matcher(pom);
        assertTrue(m.find(), "a project version in\n" + pom);
        return m.group(1);
    }

    /** The fenced block after each {@code <!-- readme-app: NAME -->} line, by NAME. */
    static Map<String, String> markedBlocks(List<String> lines) {
        Map<String, String> blocks = new LinkedHashMap<>();
        for (int i = 0; i < lines.size(); i++) {
            Matcher m = MARK.matcher(lines.get(i));
            if (!m.matches()) {
                continue;
            }
            int open = i + 1;
            assertTrue(open < lines.size() && lines.get(open).startsWith("```"),
                    "README.md:" + (i + 1) + ": a readme-app mark must be followed by a fenced block");
            StringBuilder block = new StringBuilder();
            int j = open + 1;
            for (; j < lines.size() && !lines.get(j).startsWith("```"); j++) {
                block.append(lines.get(j)).append('\n');
            }
            assertTrue(j < lines.size(), "README.md:" + (open + 1) + ": the block is not closed");
            blocks.put(m.group(1), block.toString());
            i = j;
        }
        return blocks;
    }

    private static void copyTree(Path from, Path to) throws IOException {
        try (Stream<Path> walk = Files.walk(from)) {
            for (Path p : walk.toList()) {
                Path rel = from.relativize(p);
                boolean skipped = false;
                for (Path part : rel) {
                    skipped |= NOT_COPIED.contains(part.toString());
                }
                if (skipped) {
                    continue;
                }
                Path target = to.resolve(rel.toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(target);
                } else if (Files.isRegularFile(p)) {
                    Files.copy(p, target);
                    if (Files.isExecutable(p)) {
                        target.toFile().setExecutable(true);
                    }
                }
            }
        }
    }

    private static String dependencyPluginVersion(Path root) throws IOException {
        Matcher m = Pattern.compile("<maven-dependency-plugin.version>([^<]+)<")
                .matcher(Files.readString(root.resolve("pom.xml")));
        assertTrue(m.find(), "the root pom's maven-dependency-plugin.version");
        return m.group(1);
    }

    private static int portWithNothingListening() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    private static String javaExecutable() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    private static Result run(Path dir, List<String> command, int minutes) throws Exception {
        Result r = run(new ProcessBuilder(command).directory(dir.toFile()), minutes);
        assertEquals(0, r.exit(), String.join(" ", command) + " failed:\n" + r);
        return r;
    }

    private static Result run(ProcessBuilder pb, int minutes) throws Exception {
        Path out = Files.createTempFile("readme-app", ".out");
        Path err = Files.createTempFile("readme-app", ".err");
        try {
            Process p = pb.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
            if (!p.waitFor(minutes, TimeUnit.MINUTES)) {
                p.destroyForcibly().waitFor();
                throw new AssertionError(String.join(" ", pb.command()) + " did not finish in " + minutes + " min");
            }
            return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
                    Files.readString(err, StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
        }
    }

    record Result(int exit, String out, String err) {
        String all() {
            return out + err;
        }

        @Override
        public String toString() {
            String tail = all().length() > 4000 ? all().substring(all().length() - 4000) : all();
            return "exit " + exit + "\n" + tail;
        }
    }
}
