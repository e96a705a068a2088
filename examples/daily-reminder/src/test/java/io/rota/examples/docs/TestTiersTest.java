package io.rota.examples.docs;

import io.rota.testkit.RepositoryRoot;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The test tiers hold (design HS50): {@code -Pquick} leaves out the tests tagged sim, cluster, process, browser
 * and chaos, so a test that starts member processes or an in-JVM cluster but carries no tag would slip into the
 * inner loop unnoticed. Every {@code *ProcessTest} carries {@code @Tag("process")}, and every test class of
 * tests/system-tests (which runs the system: in-JVM clusters or processes) carries {@code cluster} or
 * {@code process}. {@link #anUntaggedClassIsReported()} shows the check failing on a planted class.
 */
class TestTiersTest {

    @Test
    void everyTestThatStartsTheSystemCarriesItsTier() throws IOException {
        Path root = RepositoryRoot.find();
        List<String> missing = new ArrayList<>();
        int checked = 0;
        try (Stream<Path> walk = Files.walk(root)) {
            for (Path f : walk.filter(p -> isTestSource(root, p)).toList()) {
                String name = f.getFileName().toString();
                boolean systemTest = root.relativize(f).startsWith(Path.of("tests", "system-tests"));
                if (!name.endsWith("ProcessTest.java") && !(systemTest && name.endsWith("Test.java"))) {
                    continue;
                }
                checked++;
                String problem = problem(name, Files.readString(f, StandardCharsets.UTF_8));
                if (problem != null) {
                    missing.add(root.relativize(f) + ": " + problem);
                }
            }
        }
        assertTrue(checked > 50, "expected the process and system tests, found " + checked);
        assertEquals(List.of(), missing, "tests without their tier's tag (design HS50)");
    }

    @Test
    void anUntaggedClassIsReported() {
        assertEquals("no @Tag(\"process\")", problem("PlantedProcessTest.java", "class PlantedProcessTest {}"));
        assertEquals("no @Tag(\"cluster\") or @Tag(\"process\")",
                problem("PlantedTest.java", "class PlantedTest {}"));
        assertEquals(null, problem("PlantedTest.java", "@Tag(\"cluster\")\nclass PlantedTest {}"));
    }

    /** What is wrong with a test source's tags, or null. */
    static String problem(String fileName, String source) {
        boolean process = source.contains("@Tag(\"process\")");
        if (fileName.endsWith("ProcessTest.java")) {
            return process ? null : "no @Tag(\"process\")";
        }
        return process || source.contains("@Tag(\"cluster\")") ? null : "no @Tag(\"cluster\") or @Tag(\"process\")";
    }

    private static boolean isTestSource(Path root, Path p) {
        Path rel = root.relativize(p);
        for (Path part : rel) {
            String s = part.toString();
            if (s.equals("target") || s.equals(".git") || s.equals("node_modules")) {
                return false;
            }
        }
        return Files.isRegularFile(p) && p.toString().endsWith(".java")
                && rel.toString().contains("src" + java.io.File.separator + "test" + java.io.File.separator);
    }
}
