package io.rota.examples.docs;

import io.rota.testkit.RepositoryRoot;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every {@code ```java} block in README.md and docs/*.md, and every program in docs/examples, compiles
 * against the client, recipes and raft-core APIs, so the docs cannot drift from the code. A broken block
 * fails its own test, named {@code docs/FILE.md:LINE}, with the compiler's message at the Markdown line.
 * The conventions (complete blocks vs fragments, {@code ...}, the given names) are in {@link DocSnippets}.
 */
class DocSnippetsCompileTest {

    @TempDir
    Path out;

    @TestFactory
    Stream<DynamicTest> everyJavaBlockInTheDocsCompiles() throws IOException {
        Path root = RepositoryRoot.find();
        List<DocSnippets.Snippet> snippets = new ArrayList<>(DocSnippets.extract("README.md", root.resolve("README.md")));
        try (Stream<Path> docs = Files.list(root.resolve("docs"))) {
            for (Path doc : docs.filter(p -> p.toString().endsWith(".md")).sorted().toList()) {
                snippets.addAll(DocSnippets.extract("docs/" + doc.getFileName(), doc));
            }
        }
        assertTrue(snippets.size() >= 15, "expected the docs' Java blocks, found " + snippets.size());
        Map<String, List<String>> errors = compile(snippets);
        return snippets.stream().map(s -> DynamicTest.dynamicTest(s.where(), () -> {
            List<String> mine = errors.getOrDefault(s.className(), List.of());
            assertTrue(mine.isEmpty(), "the ```java block at " + s.where() + " does not compile:\n"
                    + String.join("\n", mine));
        }));
    }

    @Test
    void everyJavaFileUnderDocsExamplesCompiles() throws IOException {
        Path examples = RepositoryRoot.find().resolve("docs").resolve("examples");
        List<Path> files;
        try (Stream<Path> list = Files.list(examples)) {
            files = list.filter(p -> p.toString().endsWith(".java")).sorted().toList();
        }
        assertFalse(files.isEmpty(), "expected the runnable examples in " + examples);
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        assertNotNull(javac, "this test needs a JDK (javax.tools.JavaCompiler), not a JRE");
        List<String> errors = new ArrayList<>();
        try (StandardJavaFileManager fm = javac.getStandardFileManager(null, Locale.ROOT, null)) {
            for (Path file : files) {   // one task each: they are separate programs in the default package
                DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
                javac.getTask(null, fm, diagnostics, List.of("--release", "17", "-proc:none", "-classpath",
                                testClassPath(), "-d", out.resolve(file.getFileName().toString()).toString()), null,
                        fm.getJavaFileObjects(file)).call();
                for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
                    if (d.getKind() == Diagnostic.Kind.ERROR) {
                        errors.add("docs/examples/" + file.getFileName() + ":" + d.getLineNumber() + ": "
                                + d.getMessage(Locale.ROOT));
                    }
                }
            }
        }
        assertTrue(errors.isEmpty(), "docs/examples does not compile:\n" + String.join("\n", errors));
    }

    @Test
    void aBrokenBlockFailsWithTheMarkdownFileAndLine() {
        List<String> md = List.of("# A doc", "", "```java", "RotaClient c = rota;", "c.kv().putt(\"k\", \"v\");", "```");
        List<DocSnippets.Snippet> snippets = DocSnippets.extract("docs/broken.md", md);
        assertEquals(1, snippets.size());
        List<String> errors = compile(snippets).get(snippets.get(0).className());
        assertNotNull(errors, "the misspelt call must not compile");
        assertTrue(errors.get(0).startsWith("docs/broken.md:5: "), errors.toString());
        assertTrue(errors.get(0).contains("putt"), errors.toString());
    }

    @Test
    void aCompleteBlockMustImportWhatItUsesAndHandleCheckedExceptions() {
        List<String> md = List.of("```java", "import io.rota.client.RotaClient;", "",
                "Lock lock = Lock.of(rota, \"x\");", "```", "", "```java", "import io.rota.client.recipes.Lock;",
                "import java.time.Duration;", "", "Lock.of(rota, \"x\").acquire(Duration.ofSeconds(1));", "```");
        List<DocSnippets.Snippet> snippets = DocSnippets.extract("docs/strict.md", md);
        Map<String, List<String>> errors = compile(snippets);
        assertTrue(String.join("\n", errors.get(snippets.get(0).className())).contains("docs/strict.md:4: "),
                "a missing import is an error: " + errors);
        assertTrue(String.join("\n", errors.get(snippets.get(1).className())).contains("InterruptedException"),
                "an unhandled checked exception is an error: " + errors);
    }

    @Test
    void ellipsisStandsForTheReadersCode() {
        List<String> md = List.of("```java", "try (Watch w = rota.watches().watchPrefix(\"a/\", 0, e -> { })) { ... }",
                "if (rota != null) {", "    ... the application's work ...", "}", "```");
        List<DocSnippets.Snippet> snippets = DocSnippets.extract("docs/ellipsis.md", md);
        assertFalse(compile(snippets).containsKey(snippets.get(0).className()), compile(snippets).toString());
    }

    /**
     * Compiles each snippet on its own (javac skips flow analysis, where unhandled checked exceptions are
     * found, once any class has an error, so one broken block must not hide another's); returns, per
     * snippet class, its errors as "doc:line: message".
     */
    private Map<String, List<String>> compile(List<DocSnippets.Snippet> snippets) {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        assertNotNull(javac, "this test needs a JDK (javax.tools.JavaCompiler), not a JRE");
        List<String> options = List.of("--release", "17", "-proc:none", "-implicit:none",
                "-classpath", testClassPath(), "-d", out.toString());
        Map<String, List<String>> errors = new HashMap<>();
        try (StandardJavaFileManager files = javac.getStandardFileManager(null, Locale.ROOT, null)) {
            for (DocSnippets.Snippet s : snippets) {
                DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
                javac.getTask(null, files, diagnostics, options, null, List.of(new Source(s.className(), s.source())))
                        .call();
                for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
                    if (d.getKind() == Diagnostic.Kind.ERROR) {
                        long line = s.firstLine() + d.getLineNumber() - 1 - DocSnippets.HEADER_LINES;
                        errors.computeIfAbsent(s.className(), c -> new ArrayList<>())
                                .add(s.doc() + ":" + line + ": " + d.getMessage(Locale.ROOT));
                    }
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException("javac's file manager: " + e, e);
        }
        return errors;
    }

    /** Surefire runs tests with a manifest-only jar; the real test class path is in its own property. */
    private static String testClassPath() {
        String cp = System.getProperty("surefire.test.class.path");
        return cp != null && !cp.isBlank() ? cp : System.getProperty("java.class.path");
    }

    /** A snippet's source, in memory. */
    private static final class Source extends SimpleJavaFileObject {
        private final String code;

        Source(String className, String code) {
            super(URI.create("string:///io/rota/examples/docs/" + className + ".java"), Kind.SOURCE);
            this.code = code;
        }

        @Override
        public CharSequence getCharContent(boolean ignoreEncodingErrors) {
            return code;
        }
    }
}
