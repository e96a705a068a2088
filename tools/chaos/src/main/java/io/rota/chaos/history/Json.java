package io.rota.chaos.history;

/**
 * The little JSON the history and the reports need: writing strings. Reading it back is
 * {@link io.rota.testkit.JsonText#parseObject}, shared with the tests that read rotactl's {@code -w json}.
 */
final class Json {

    private Json() {
    }

    /** {@code s} as a JSON string literal, or {@code null}. */
    static String quote(String s) {
        if (s == null) {
            return "null";
        }
        StringBuilder b = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
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
