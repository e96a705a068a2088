package io.rota.client.cli;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HexFormat;

/**
 * Keys and values between bytes and the command line: read as UTF-8 text, or as hex with {@code --hex};
 * shown so that a terminal line is always one key or one value (escaped), as hex with {@code --hex}, and as
 * base64 in JSON (etcdctl's {@code -w json}).
 */
final class Bytes {

    private static final HexFormat HEX = HexFormat.of();

    private Bytes() {
    }

    /**
     * A key or value typed on the command line: its UTF-8 bytes, or with {@code hex} the bytes the hex digits
     * spell ({@code 616263} or etcdctl's output form {@code \x61\x62\x63}).
     *
     * @throws IllegalArgumentException naming what was expected
     */
    static byte[] parse(String text, boolean hex, String what) {
        if (!hex) {
            return text.getBytes(StandardCharsets.UTF_8);
        }
        String digits = text.replace("\\x", "").replace("\\X", "");
        try {
            return HEX.parseHex(digits);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(what + " '" + text + "' is not hex: with --hex give two hex digits"
                    + " per byte, e.g. 6b6579 or \\x6b\\x65\\x79 for \"key\"");
        }
    }

    /**
     * How simple and table output show a key or value. With {@code hex}: etcdctl's {@code \x61\x62}. Otherwise
     * the UTF-8 text with a backslash escape for what would break the line or the terminal: {@code \\},
     * {@code \n}, {@code \r}, {@code \t}, other ASCII control characters as {@code \xNN}, other control and
     * invisible format characters (U+202E reorders a terminal line) as <code>&#92;u{NNNN}</code>, and each
     * byte that is not valid UTF-8 as {@code \xNN} — so the output reads back unambiguously.
     */
    static String display(byte[] bytes, boolean hex) {
        if (hex) {
            StringBuilder b = new StringBuilder(bytes.length * 4);
            for (byte x : bytes) {
                b.append("\\x").append(HEX.toHexDigits(x));
            }
            return b.toString();
        }
        StringBuilder out = new StringBuilder(bytes.length + 8);
        CharsetDecoder strict = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT).onUnmappableCharacter(CodingErrorAction.REPORT);
        int i = 0;
        while (i < bytes.length) {
            int length = sequenceLength(bytes[i]);
            String decoded = length == 0 || i + length > bytes.length ? null : decode(strict, bytes, i, length);
            if (decoded == null) {
                out.append("\\x").append(HEX.toHexDigits(bytes[i]));
                i++;
            } else {
                escape(out, decoded);
                i += length;
            }
        }
        return out.toString();
    }

    /** The bytes as JSON carries them: base64, as etcdctl's {@code -w json} does. */
    static String base64(byte[] bytes) {
        return Base64.getEncoder().encodeToString(bytes);
    }

    /** The length of the UTF-8 sequence a lead byte starts, 0 if it cannot start one. */
    private static int sequenceLength(byte lead) {
        int b = lead & 0xff;
        if (b < 0x80) {
            return 1;
        }
        if (b >= 0xc2 && b <= 0xdf) {
            return 2;
        }
        if (b >= 0xe0 && b <= 0xef) {
            return 3;
        }
        if (b >= 0xf0 && b <= 0xf4) {
            return 4;
        }
        return 0;
    }

    private static String decode(CharsetDecoder decoder, byte[] bytes, int offset, int length) {
        try {
            CharBuffer chars = decoder.reset().decode(ByteBuffer.wrap(bytes, offset, length));
            return chars.toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }

    private static void escape(StringBuilder out, String codePoint) {
        int c = codePoint.codePointAt(0);
        switch (c) {
            case '\\' -> out.append("\\\\");
            case '\n' -> out.append("\\n");
            case '\r' -> out.append("\\r");
            case '\t' -> out.append("\\t");
            default -> {
                if (c < 0x20 || c == 0x7f) {
                    out.append("\\x").append(HEX.toHexDigits((byte) c));
                } else if (Character.getType(c) == Character.CONTROL || Character.getType(c) == Character.FORMAT
                        || Character.getType(c) == Character.LINE_SEPARATOR
                        || Character.getType(c) == Character.PARAGRAPH_SEPARATOR) {
                    out.append("\\u{").append(Integer.toHexString(c)).append('}');
                } else {
                    out.append(codePoint);
                }
            }
        }
    }
}
