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
 * Headers are centred; a column of numbers (cells given as {@link Number}, or "-") is right-aligned, any
 * other left-aligned. A cell's line breaks become spaces.
 */
final class Table {

    private final List<String> header;
    private final List<List<String>> rows = new ArrayList<>();
    private final List<boolean[]> numbers = new ArrayList<>();

    Table(String... header) {
        this.header = List.of(header);
    }

    /** Adds a row; it must have one cell per column. */
    Table row(Object... cells) {
        if (cells.length != header.size()) {
            throw new IllegalArgumentException("a row needs " + header.size() + " cells, got " + cells.length);
        }
        List<String> row = new ArrayList<>();
        boolean[] number = new boolean[cells.length];
        for (int i = 0; i < cells.length; i++) {
            row.add(String.valueOf(cells[i]).replace('\n', ' ').replace('\r', ' '));
            number[i] = cells[i] instanceof Number;
        }
        rows.add(row);
        numbers.add(number);
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
        boolean[] numeric = new boolean[width.length];
        for (int i = 0; i < width.length; i++) {
            boolean anyNumber = false;
            boolean allNumbersOrDash = true;
            for (int r = 0; r < rows.size(); r++) {
                boolean number = numbers.get(r)[i];
                anyNumber |= number;
                allNumbersOrDash &= number || rows.get(r).get(i).equals("-");
            }
            numeric[i] = anyNumber && allNumbersOrDash;
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
                line.append(' ').append(numeric[i] ? pad + c : c + pad).append(" |");
            }
            out.add(line.toString());
        }
        if (!rows.isEmpty()) {
            out.add(border.toString());
        }
        return out;
    }
}
