package io.rota.client.recipes;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The text form of the recipes' records: one {@code name=value} per line, readable with {@code rotactl get}.
 * Values are single-line (line breaks become spaces) and at most {@link #MAX_VALUE_CHARS} characters.
 */
final class Fields {

    /** Longest value kept: records hold short results, not payloads. */
    static final int MAX_VALUE_CHARS = 512;

    private Fields() {
    }

    /** Encodes the fields in order; null values are left out. */
    static String encode(Map<String, String> fields) {
        StringBuilder b = new StringBuilder();
        for (Map.Entry<String, String> e : fields.entrySet()) {
            if (e.getValue() != null) {
                b.append(e.getKey()).append('=').append(clean(e.getValue())).append('\n');
            }
        }
        return b.toString();
    }

    /** Decodes what {@link #encode} wrote; lines without '=' are ignored. */
    static Map<String, String> decode(String text) {
        Map<String, String> fields = new LinkedHashMap<>();
        for (String line : text.split("\n")) {
            int eq = line.indexOf('=');
            if (eq > 0) {
                fields.put(line.substring(0, eq), line.substring(eq + 1));
            }
        }
        return fields;
    }

    /** A value made single-line and cut to the bound. */
    static String clean(String value) {
        String oneLine = value.replace('\r', ' ').replace('\n', ' ');
        return oneLine.length() <= MAX_VALUE_CHARS ? oneLine : oneLine.substring(0, MAX_VALUE_CHARS);
    }
}
