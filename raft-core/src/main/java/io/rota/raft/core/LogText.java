package io.rota.raft.core;

/**
 * Text from the other side of a connection — a peer's cluster id or refusal, a certificate's CN or SANs, a
 * client's user name — made safe to write into a log line. Control characters become escapes ({@code \n},
 * {@code \r}, {@code \t}, {@code \\u00XX}) and a backslash becomes {@code \\}, so such a string can never
 * start a line of its own (a forged log entry) nor hide what it says. Shared by every port that logs what a
 * stranger sent.
 */
public final class LogText {

    /** Longest escaped text written; the rest is cut with a count, so one string cannot flood a line. */
    public static final int MAX_CHARS = 512;

    private LogText() {
    }

    /** {@code text} with control characters and backslashes escaped; "null" for null; cut at {@link #MAX_CHARS}. */
    public static String escape(String text) {
        if (text == null) {
            return "null";
        }
        StringBuilder out = new StringBuilder(Math.min(text.length(), MAX_CHARS) + 8);
        int shown = Math.min(text.length(), MAX_CHARS);
        for (int i = 0; i < shown; i++) {
            char c = text.charAt(i);
            switch (c) {
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                case '\\' -> out.append("\\\\");
                default -> {
                    if (c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) || c == '\u2028' || c == '\u2029') {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        if (text.length() > shown) {
            out.append("...(").append(text.length() - shown).append(" more chars)");
        }
        return out.toString();
    }
}
