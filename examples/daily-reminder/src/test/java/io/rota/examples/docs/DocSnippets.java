package io.rota.examples.docs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The {@code ```java} blocks of a Markdown file, turned into Java sources that {@code javac} can check.
 *
 * <p>The conventions a doc writer follows (docs/design.md G2):
 * <ul>
 *   <li>A block that begins with {@code import} lines is <b>complete</b>: a reader can paste it into a
 *       method and it compiles with exactly those imports; it is compiled in a method without a
 *       {@code throws} clause, so checked exceptions must be handled in the block.</li>
 *   <li>Any other block is a <b>fragment</b>: it is compiled with {@link #FRAGMENT_IMPORTS} in a method
 *       declared {@code throws Exception}.</li>
 *   <li>Both see the names in {@link DocSnippetContext} (the {@code rota} client, a {@code mailer}, a
 *       {@code log}, ...): the things a snippet takes as given.</li>
 *   <li>{@code ...} stands for the reader's own code: a line that starts with {@code ...} becomes a
 *       comment, and {@code { ... }} becomes an empty block. Nothing else is rewritten.</li>
 * </ul>
 */
final class DocSnippets {

    /** What a fragment may use without importing it. */
    static final List<String> FRAGMENT_IMPORTS = List.of(
            "io.rota.client.*", "io.rota.client.recipes.*",
            "io.rota.raft.core.*", "io.rota.raft.node.*", "io.rota.raft.storage.*",
            "java.time.*", "java.util.*", "java.util.concurrent.*", "java.util.concurrent.atomic.*");

    private static final Pattern OPEN = Pattern.compile("^\\s*```java\\s*$");
    private static final Pattern CLOSE = Pattern.compile("^\\s*```\\s*$");
    private static final Pattern IMPORT = Pattern.compile("^import\\s+(static\\s+)?[\\w.]+(\\.\\*)?\\s*;\\s*$");
    private static final Pattern ELLIPSIS_LINE = Pattern.compile("^(\\s*)\\.\\.\\.(.*)$");

    /**
     * One {@code ```java} block.
     *
     * @param doc       the Markdown file, relative to the repository root (for messages)
     * @param firstLine the 1-based line of the block's first code line in that file
     * @param lines     the block's code lines
     */
    record Snippet(String doc, int firstLine, List<String> lines) {

        /** {@code docs/locks.md:23}: where the block starts. */
        String where() {
            return doc + ":" + firstLine;
        }

        /** A Java class name unique to this block. */
        String className() {
            return "Snippet_" + doc.replaceAll("[^A-Za-z0-9]", "_") + "_" + firstLine;
        }

        boolean complete() {
            return !lines.isEmpty() && IMPORT.matcher(lines.get(0).trim()).matches();
        }

        /**
         * The compilation unit. Every code line keeps its own line (imports are commented out in place and
         * repeated on line 1), so a compiler line {@code n} is the block's line {@code n - HEADER_LINES}.
         */
        String source() {
            StringBuilder imports = new StringBuilder();
            if (complete()) {
                for (String line : lines) {
                    if (IMPORT.matcher(line.trim()).matches()) {
                        imports.append(line.trim()).append(' ');
                    }
                }
            } else {
                for (String i : FRAGMENT_IMPORTS) {
                    imports.append("import ").append(i).append("; ");
                }
            }
            StringBuilder src = new StringBuilder();
            src.append("package io.rota.examples.docs; ").append(imports).append('\n');
            src.append("@SuppressWarnings(\"all\") abstract class ").append(className())
                    .append(" extends DocSnippetContext {\n");
            src.append("void snippet()").append(complete() ? "" : " throws Exception").append(" {\n");
            for (String line : lines) {
                src.append(rewrite(line)).append('\n');
            }
            src.append("}}\n");
            return src.toString();
        }

        private static String rewrite(String line) {
            if (IMPORT.matcher(line.trim()).matches()) {
                return "// " + line;
            }
            Matcher m = ELLIPSIS_LINE.matcher(line);
            if (m.matches()) {
                return m.group(1) + "// ..." + m.group(2);
            }
            return line.replace("{ ... }", "{ }");
        }
    }

    /** Lines {@link Snippet#source()} puts before the block's first line. */
    static final int HEADER_LINES = 3;

    private DocSnippets() {
    }

    /** The {@code ```java} blocks of {@code file}, named {@code doc} in messages. */
    static List<Snippet> extract(String doc, Path file) throws IOException {
        return extract(doc, Files.readAllLines(file));
    }

    /** The {@code ```java} blocks of the Markdown {@code lines}. */
    static List<Snippet> extract(String doc, List<String> lines) {
        List<Snippet> snippets = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            if (!OPEN.matcher(lines.get(i)).matches()) {
                continue;
            }
            int first = i + 1;
            int end = first;
            while (end < lines.size() && !CLOSE.matcher(lines.get(end)).matches()) {
                end++;
            }
            if (end == lines.size()) {
                throw new IllegalArgumentException(doc + ":" + (i + 1) + ": a ```java block that is never closed");
            }
            snippets.add(new Snippet(doc, first + 1, List.copyOf(lines.subList(first, end))));
            i = end;
        }
        return snippets;
    }
}
