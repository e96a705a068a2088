package io.rota.examples.docs;

import io.rota.testkit.RepositoryRoot;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The decision records hold together (docs/design.md, "How a decision is recorded"): every id heads one entry
 * across docs/decisions/*.md, the index in docs/design.md has one row per entry and no row without one, each row
 * points at the file that holds its entry, docs/design.md itself holds no entry, and every citation in code and
 * docs ("design D2", "docs/design.md MF4", "design.md M1–M9") names an id that exists.
 * {@link #aPlantedDuplicateIsReported()} and its neighbours show each check failing on planted text.
 */
class DecisionRecordsTest {

    /** An entry opens a line: {@code **D2. Title.**} or {@code **SD1 — Title.**}. */
    private static final Pattern ENTRY = Pattern.compile("^\\*\\*([A-Z]{1,3}[0-9]+[a-z]?)(?:\\.|\\s—|:)");
    /** A row of the index: {@code | D2 | title | status | [core.md](decisions/core.md#...) |}. */
    private static final Pattern ROW =
            Pattern.compile("^\\| ([A-Z]{1,3}[0-9]+[a-z]?) \\|.*\\]\\(decisions/([a-z0-9-]+\\.md)(?:#[^)]*)?\\) \\|\\s*$");
    private static final String ID = "[A-Z]{1,3}[0-9]+[a-z]?";
    /** "design D2", "design.md, H2", "design MF4, MF10", "design.md M1–M9", "design J4 and J5". */
    private static final Pattern CITATION = Pattern.compile(
            "\\bdesign(?:\\.md)?,? (" + ID + "(?:(?:, | and | or |–|-|/)" + ID + ")*)\\b");
    private static final Pattern ONE_ID = Pattern.compile(ID);
    private static final Set<String> CITING = Set.of(".java", ".md", ".sh", ".xml", ".properties", ".mjs", ".yaml",
            ".yml", ".service", ".proto", ".js", ".html");
    private static final Set<String> SKIPPED_DIRS = Set.of("target", ".git", "node_modules");

    @Test
    void theProjectsDecisionRecordsHoldTogether() throws IOException {
        Path root = RepositoryRoot.find();
        Map<String, String> areas = new TreeMap<>();
        try (Stream<Path> files = Files.list(root.resolve("docs").resolve("decisions"))) {
            for (Path f : files.filter(p -> p.toString().endsWith(".md")).toList()) {
                areas.put(f.getFileName().toString(), Files.readString(f, StandardCharsets.UTF_8));
            }
        }
        assertTrue(areas.size() >= 5, "expected the area files in docs/decisions, found " + areas.keySet());
        String index = Files.readString(root.resolve("docs").resolve("design.md"), StandardCharsets.UTF_8);
        Map<String, String> citing = new TreeMap<>();
        try (Stream<Path> walk = Files.walk(root)) {
            for (Path f : walk.filter(Files::isRegularFile).filter(p -> citable(root, p)).toList()) {
                // new String, not readString: a file that is not UTF-8 is read with replacements, not refused
                citing.put(root.relativize(f).toString(), new String(Files.readAllBytes(f), StandardCharsets.UTF_8));
            }
        }
        List<String> problems = problems(areas, index, citing);
        assertEquals(List.of(), problems, "the decision records do not hold together:\n" + String.join("\n", problems));
        assertTrue(entries(areas).size() >= 300, "expected the project's 300-odd decisions");
    }

    @Test
    void aPlantedDuplicateIsReported() {
        Map<String, String> areas = Map.of("core.md", "# Core\n\n**D1. One.** Text.\n\n**D2. Two.** Text.\n",
                "sdk.md", "# SDK\n\n**D2 — Two again.** Text.\n");
        String index = "| D1 | One | accepted | [core.md](decisions/core.md#x) |\n"
                + "| D2 | Two | accepted | [core.md](decisions/core.md#x) |\n";
        assertEquals(List.of("D2 heads an entry in more than one place: core.md, sdk.md"),
                problems(areas, index, Map.of()));
    }

    @Test
    void aRowWithoutAnEntryAnEntryWithoutARowAndARowPointingElsewhereAreReported() {
        Map<String, String> areas = Map.of("core.md", "**D1. One.** Text.\n", "sdk.md", "**C1. SDK.** Text.\n");
        String index = "| D1 | One | accepted | [sdk.md](decisions/sdk.md#x) |\n"
                + "| D9 | Gone | accepted | [core.md](decisions/core.md) |\n";
        assertEquals(List.of("the index row of D1 points at sdk.md, but the entry is in core.md",
                        "the index row of D9 names no entry in docs/decisions",
                        "C1 (sdk.md) has no row in the index, docs/design.md"),
                problems(areas, index, Map.of()));
    }

    @Test
    void aCitationOfAMissingIdAndAnEntryLeftInTheIndexAreReported() {
        Map<String, String> areas = Map.of("core.md", "**D1. One.** Text.\n\n**D2. Two.** Text.\n");
        String index = "**H1. Left behind.** Text.\n\n| D1 | One | accepted | [core.md](decisions/core.md) |\n"
                + "| D2 | Two | accepted | [core.md](decisions/core.md) |\n";
        Map<String, String> citing = Map.of("A.java", "// see design D1, D2 and docs/design.md D1–D7; by design (no)\n");
        assertEquals(List.of("docs/design.md holds the entry H1: entries belong in docs/decisions/*.md",
                        "A.java:1 cites \"design.md D1–D7\", and D7 is no decision"),
                problems(areas, index, citing));
    }

    /** What is wrong with the records, one line each; empty when they hold together. */
    static List<String> problems(Map<String, String> areaFiles, String index, Map<String, String> citingFiles) {
        List<String> problems = new ArrayList<>();
        Map<String, List<String>> entries = entries(areaFiles);
        entries.forEach((id, files) -> {
            if (files.size() > 1) {
                problems.add(id + " heads an entry in more than one place: " + String.join(", ", files));
            }
        });
        for (String line : lines(index)) {
            Matcher m = ENTRY.matcher(line);
            if (m.find()) {
                problems.add("docs/design.md holds the entry " + m.group(1) + ": entries belong in docs/decisions/*.md");
            }
        }
        Map<String, String> rows = new LinkedHashMap<>();
        for (String line : lines(index)) {
            Matcher m = ROW.matcher(line);
            if (!m.matches()) {
                continue;
            }
            String id = m.group(1);
            if (rows.put(id, m.group(2)) != null) {
                problems.add("the index has two rows for " + id);
            } else if (!entries.containsKey(id)) {
                problems.add("the index row of " + id + " names no entry in docs/decisions");
            } else if (!entries.get(id).contains(m.group(2))) {
                problems.add("the index row of " + id + " points at " + m.group(2) + ", but the entry is in "
                        + String.join(", ", entries.get(id)));
            }
        }
        entries.forEach((id, files) -> {
            if (!rows.containsKey(id)) {
                problems.add(id + " (" + String.join(", ", files) + ") has no row in the index, docs/design.md");
            }
        });
        citingFiles.forEach((file, text) -> {
            List<String> ls = lines(text);
            for (int i = 0; i < ls.size(); i++) {
                Matcher m = CITATION.matcher(ls.get(i));
                while (m.find()) {
                    Matcher id = ONE_ID.matcher(m.group(1));
                    while (id.find()) {
                        if (!entries.containsKey(id.group())) {
                            problems.add(file + ":" + (i + 1) + " cites \"" + m.group() + "\", and " + id.group()
                                    + " is no decision");
                        }
                    }
                }
            }
        });
        return problems;
    }

    /** Each entry's id and the files whose entries it heads (outside code fences), in file order. */
    static Map<String, List<String>> entries(Map<String, String> areaFiles) {
        Map<String, List<String>> entries = new TreeMap<>();
        new TreeMap<>(areaFiles).forEach((file, text) -> {
            boolean fence = false;
            for (String line : lines(text)) {
                if (line.startsWith("```")) {
                    fence = !fence;
                }
                Matcher m = ENTRY.matcher(line);
                if (!fence && m.find()) {
                    entries.computeIfAbsent(m.group(1), k -> new ArrayList<>()).add(file);
                }
            }
        });
        return entries;
    }

    private static List<String> lines(String text) {
        return List.of(text.split("\n", -1));
    }

    private static boolean citable(Path root, Path file) {
        for (Path part : root.relativize(file)) {
            if (SKIPPED_DIRS.contains(part.toString())) {
                return false;
            }
        }
        String name = file.getFileName().toString();
        int dot = name.lastIndexOf('.');
        return dot > 0 && CITING.contains(name.substring(dot));
    }
}
