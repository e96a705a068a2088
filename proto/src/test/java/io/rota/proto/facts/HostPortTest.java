package io.rota.proto.facts;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The one parser of a member's address (issue 30): what it accepts, what it refuses, and how it says so. */
class HostPortTest {

    @Test
    @DisplayName("issue 30: the operator's typo n4:71010 is refused with the port named, in one line")
    void theTypoIsRefused() {
        BadValueException e = assertThrows(BadValueException.class, () -> HostPort.parse("--peer-urls", "n4:71010"));
        assertEquals("--peer-urls 'n4:71010': port 71010 is out of range 1–65535", e.getMessage());
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "n4", "n4:", ":7101", "h:0", "h:-1", "h:65536", "h:99999999999", "h:080", "h:7a",
            "a,b:1", "h :1", "h:1 ", "::1:7101", "[zz]:1", "[]:1", "ftp://h:1", "h/x:1", "user@h:1", "hé:1", ".h:1",
            "-h:1", "a..b:1", "h:\u00b9"})
    void refusesWhatNoMemberCanBeDialledAt(String text) {
        BadValueException e = assertThrows(BadValueException.class, () -> HostPort.parse("peer URL", text));
        assertTrue(e.getMessage().startsWith("peer URL '"), e.getMessage());
        assertFalse(e.getMessage().contains("\n"));
        assertFalse(HostPort.isValid(text));
    }

    @ParameterizedTest
    @ValueSource(strings = {"n4:7101", "127.0.0.1:1", "h:65535", "rota-0.rota.default.svc:7101", "[::1]:7101",
            "[fe80::1]:2380", "http://n4:7101", "https://n4:7101/", "a_b:7101"})
    void acceptsWhatMembersAreDialledAt(String text) {
        assertTrue(HostPort.isValid(text), text);
    }

    @Test
    void keepsTheSchemeApartAndPrintsTheTablesForm() {
        HostPort url = HostPort.parse("peer URL", "https://[::1]:2380/");
        assertEquals("https", url.scheme());
        assertEquals("::1", url.host());
        assertEquals(2380, url.port());
        assertEquals("[::1]:2380", url.toString());
        assertEquals("n4:7101", HostPort.parse("x", "http://n4:7101").toString());
    }

    @Test
    void aBindAddressMayAskForAnyPort() {
        assertEquals(0, HostPort.parseBind("--listen-peer", "127.0.0.1:0").port());
        assertThrows(BadValueException.class, () -> HostPort.parse("--advertise-peer", "127.0.0.1:0"));
    }

    @Test
    void memberNames() {
        assertEquals("n4", MemberName.check("name", "n4"));
        for (String bad : new String[] {"", "n 4", "n4,n5", "ñ", "a".repeat(64), "n4\n"}) {
            BadValueException e = assertThrows(BadValueException.class, () -> MemberName.check("member name", bad));
            assertTrue(e.getMessage().startsWith("member name"), e.getMessage());
        }
    }
}
