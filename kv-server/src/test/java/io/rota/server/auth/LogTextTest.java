package io.rota.server.auth;

import io.rota.raft.transport.LogText;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Issue 33: a user name cannot forge a log line. */
class LogTextTest {

    @Test
    void controlCharactersAreEscapedAndLongTextIsCut() {
        String forged = "bob\n2026-12-07 INFO AuthGate - user 'root' logged in\r\t\u0000\u001b[31m";
        String escaped = LogText.escape(forged);
        assertFalse(escaped.contains("\n") || escaped.contains("\r") || escaped.contains("\u001b"), escaped);
        assertEquals("bob\\n2026-12-07 INFO AuthGate - user 'root' logged in\\r\\t\\u0000\\u001b[31m", escaped);
        assertEquals("plain-name", LogText.escape("plain-name"));
        String longName = "x".repeat(1000);
        assertTrue(LogText.escape(longName).endsWith("...(744 more chars)"), LogText.escape(longName));
    }
}
