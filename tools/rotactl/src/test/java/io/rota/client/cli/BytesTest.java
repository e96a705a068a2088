package io.rota.client.cli;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Keys and values between bytes and the command line: --hex in both forms, and the escaped display. */
class BytesTest {

    @Test
    void hexIsReadInBothFormsAndWrittenAsEtcdctlDoes() {
        assertArrayEquals(new byte[] {'k', 'e', 'y'}, Bytes.parse("6b6579", true, "KEY"));
        assertArrayEquals(new byte[] {'k', 'e', 'y'}, Bytes.parse("\\x6b\\x65\\x79", true, "KEY"));
        assertArrayEquals(new byte[] {(byte) 0xff, 0}, Bytes.parse("FF00", true, "KEY"));
        assertEquals("\\x6b\\x65\\x79", Bytes.display("key".getBytes(StandardCharsets.UTF_8), true));
        byte[] any = {0, (byte) 0x80, (byte) 0xff, '\n'};
        assertArrayEquals(any, Bytes.parse(Bytes.display(any, true), true, "VALUE"), "hex output reads back");
        IllegalArgumentException odd = assertThrows(IllegalArgumentException.class, () -> Bytes.parse("abc", true, "KEY"));
        assertTrue(odd.getMessage().startsWith("KEY 'abc' is not hex"), odd.getMessage());
        assertArrayEquals("abc".getBytes(StandardCharsets.UTF_8), Bytes.parse("abc", false, "KEY"));
    }

    @Test
    void displayKeepsEachKeyAndValueOnOneLineAndIsUnambiguous() {
        assertEquals("plain text, é and 日本", Bytes.display("plain text, é and 日本".getBytes(StandardCharsets.UTF_8), false));
        assertEquals("a\\nb\\r\\tc\\\\d", Bytes.display("a\nb\r\tc\\d".getBytes(StandardCharsets.UTF_8), false));
        assertEquals("\\x00\\x1b\\x7f", Bytes.display(new byte[] {0, 0x1b, 0x7f}, false));
        assertEquals("\\u{202e}evil", Bytes.display("\u202eevil".getBytes(StandardCharsets.UTF_8), false),
                "a right-to-left override would reorder the terminal line");
        assertEquals("\\xffok\\xc3", Bytes.display(new byte[] {(byte) 0xff, 'o', 'k', (byte) 0xc3}, false),
                "bytes that are not UTF-8, a truncated sequence too, are shown one by one");
        assertEquals("\\xed\\xa0\\x80", Bytes.display(new byte[] {(byte) 0xed, (byte) 0xa0, (byte) 0x80}, false),
                "an encoded surrogate is not UTF-8");
        assertEquals("", Bytes.display(new byte[0], false));
    }

    @Test
    void jsonCarriesBase64() {
        assertEquals("/wA=", Bytes.base64(new byte[] {(byte) 0xff, 0}));
    }
}
