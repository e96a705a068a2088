package io.rota.server.http;

/**
 * Hand-written JSON for the HTTP port: a few flat objects and lists do not justify a library. Appends to
 * a {@link StringBuilder}; the caller places the commas.
 */
final class Json {

    private Json() {
    }

    /** {@code "key":} followed by {@code value} as given (a number, or an already quoted string). */
    static StringBuilder field(StringBuilder json, String key, String value) {
        return json.append('"').append(key).append("\":").append(value);
    }

    static StringBuilder field(StringBuilder json, String key, long value) {
        return field(json, key, Long.toString(value));
    }

    static String quote(String s) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                default -> {
                    if (c < 0x20 || c == 0x2028 || c == 0x2029) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        return out.append('"').toString();
    }
}
