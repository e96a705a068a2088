package io.rota.raft.transport;

/**
 * Text that came from outside (a user name, a peer's claim, a certificate's name) made safe for one log line
 * (issue 33): control characters, including newlines, are written as escapes, so no caller can forge a line of
 * the member's log or hide one; and it is cut at {@link #MAX_CHARS}, so no caller can fill the log.
 */
public final class LogText {

    /** Longer input is cut, with a note of how much was left out. */
    public static final int MAX_CHARS = 256;

    private LogText() {
    }

    /** {@code text} with every control character (and DEL) escaped as {@code \n}, {@code \r}, {@code \t} or {@code \\u00XX}. */
    public static String escape(String text) {
        if (text == null) {
            return "null";
        }
        int n = Math.min(text.length(), MAX_CHARS);
        StringBuilder out = null;
        for (int i = 0; i < n; i++) {
            char c = text.charAt(i);
            boolean control = c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) || c == '\u2028' || c == '\u2029';
            if (control && out == null) {
                out = new StringBuilder(n + 16).append(text, 0, i);
            }
            if (out != null) {
                if (!control) {
                    out.append(c);
                } else if (c == '\n') {
                    out.append("\\n");
                } else if (c == '\r') {
                    out.append("\\r");
                } else if (c == '\t') {
                    out.append("\\t");
                } else {
                    out.append(String.format("\\u%04x", (int) c));
                }
            }
        }
        String escaped = out == null ? text.substring(0, n) : out.toString();
        return text.length() > n ? escaped + "...(" + (text.length() - n) + " more chars)" : escaped;
    }
}
