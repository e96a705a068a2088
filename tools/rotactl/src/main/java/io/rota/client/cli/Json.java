package io.rota.client.cli;

import java.util.List;

/**
 * A minimal JSON object writer for rotactl's {@code -w json} (the client has no JSON library, and one
 * object per command does not need one). Fields are written in call order; strings are escaped per
 * RFC 8259.
 */
final class Json {

    private final StringBuilder out = new StringBuilder("{");
    private boolean first = true;

    /** Adds a string field. */
    Json field(String name, String value) {
        return raw(name, quote(value));
    }

    /** Adds a number field. */
    Json field(String name, long value) {
        return raw(name, Long.toString(value));
    }

    /** Adds a boolean field. */
    Json field(String name, boolean value) {
        return raw(name, Boolean.toString(value));
    }

    /** Adds an object field. */
    Json field(String name, Json value) {
        return raw(name, value.toString());
    }

    /** Adds an array of strings. */
    Json strings(String name, List<String> values) {
        return raw(name, array(values.stream().map(Json::quote).toList()));
    }

    /** Adds an array of objects. */
    Json objects(String name, List<Json> values) {
        return raw(name, array(values.stream().map(Json::toString).toList()));
    }

    private Json raw(String name, String json) {
        if (!first) {
            out.append(',');
        }
        first = false;
        out.append(quote(name)).append(':').append(json);
        return this;
    }

    private static String array(List<String> elements) {
        return "[" + String.join(",", elements) + "]";
    }

    /** The object's text, on one line. */
    @Override
    public String toString() {
        return out + "}";
    }

    /** {@code s} as a JSON string literal. */
    static String quote(String s) {
        StringBuilder b = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                case '\b' -> b.append("\\b");
                case '\f' -> b.append("\\f");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }
}
