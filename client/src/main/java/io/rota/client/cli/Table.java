package io.rota.client.cli;

import java.util.ArrayList;
import java.util.List;

/**
 * A text table with a header and borders, as etcdctl's {@code -w table} draws it:
 * <pre>
 * +----------------+----+
 * |    ENDPOINT    | ID |
 * +----------------+----+
 * | 127.0.0.1:7001 |  1 |
 * +----------------+----+
 * </pre>
 * Headers are centred, cells left-aligned (numbers right-aligned). A cell's line breaks become spaces.
 */
final class Table {

    private final List<String> header;
    private final List<List<String>> rows = new ArrayList<>();

    Table(String... header) {
        this.header = List.of(header);
    }

    /** Adds a row; it must have one cell per column. */
    Table row(Object... cells) {
        if (cells.length != header.size()) {
            throw new IllegalArgumentException("a row needs " + header.size() + " cells, got " + cells.length);
        }
        List<String> row = new ArrayList<>();
        for (Object c : cells) {
            row.add(String.valueOf(c).replace('\n', ' ').replace('\r', ' '));
        }
        rows.add(row);
        return this;
    }

    /** The table, one line per element. */
    List<String> lines() {
        int[] width = new int[header.size()];
        for (int i = 0; i < width.length; i++) {
            width[i] = header.get(i).length();
            for (List<String> r : rows) {
                width[i] = Math.max(width[i], r.get(i).length());
            }
        }
        StringBuilder border = new StringBuilder("+");
        for (int w : width) {
            border.append("-".repeat(w + 2)).append('+');
        }
        List<String> out = new ArrayList<>();
        out.add(border.toString());
        StringBuilder head = new StringBuilder("|");
        for (int i = 0; i < width.length; i++) {
            String h = header.get(i);
            int left = (width[i] - h.length()) / 2;
            head.append(' ').append(" ".repeat(left)).append(h).append(" ".repeat(width[i] - h.length() - left))
                    .append(" |");
        }
        out.add(head.toString());
        out.add(border.toString());
        for (List<String> r : rows) {
            StringBuilder line = new StringBuilder("|");
            for (int i = 0; i < width.length; i++) {
                String c = r.get(i);
                String pad = " ".repeat(width[i] - c.length());
                line.append(' ').append(isNumber(c) ? pad + c : c + pad).append(" |");
            }
            out.add(line.toString());
        }
        if (!rows.isEmpty()) {
            out.add(border.toString());
        }
        return out;
    }

    private static boolean isNumber(String s) {
        return !s.isEmpty() && s.chars().allMatch(Character::isDigit);
    }
}
