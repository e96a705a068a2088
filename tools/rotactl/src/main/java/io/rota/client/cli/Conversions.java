package io.rota.client.cli;

import picocli.CommandLine;

import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Command-line value formats: durations as etcdctl writes them, lease ids in hex as etcdctl prints them. */
final class Conversions {

    private static final Pattern DURATION = Pattern.compile("(\\d+(?:\\.\\d+)?)(ms|s|m|h)");

    private Conversions() {
    }

    /** Parses {@code 5s}, {@code 500ms}, {@code 1.5s}, {@code 2m}, {@code 1h}; must be positive. */
    static Duration duration(String text) {
        Matcher m = DURATION.matcher(text.trim().toLowerCase(Locale.ROOT));
        if (!m.matches()) {
            throw new IllegalArgumentException("invalid duration '" + text + "': use e.g. 5s, 500ms or 1m");
        }
        double amount = Double.parseDouble(m.group(1));
        double millis = switch (m.group(2)) {
            case "ms" -> amount;
            case "s" -> amount * 1_000;
            case "m" -> amount * 60_000;
            default -> amount * 3_600_000;
        };
        if (millis < 1) {
            throw new IllegalArgumentException("invalid duration '" + text + "': must be at least 1ms");
        }
        return Duration.ofMillis((long) millis);
    }

    /** Formats a duration compactly: {@code 5s}, {@code 500ms}, {@code 2.5s}. */
    static String format(Duration d) {
        long ms = d.toMillis();
        if (ms < 1_000) {
            return ms + "ms";
        }
        return ms % 1_000 == 0 ? ms / 1_000 + "s" : String.format(Locale.ROOT, "%.3fs", ms / 1_000.0)
                .replaceAll("0+s$", "s");
    }

    /**
     * Parses a lease id in hexadecimal (an optional {@code 0x} prefix is allowed), as etcdctl does.
     *
     * @throws IllegalArgumentException saying what was expected
     */
    static long leaseId(String text) {
        String hex = text.trim();
        if (hex.startsWith("0x") || hex.startsWith("0X")) {
            hex = hex.substring(2);
        }
        long id;
        try {
            id = hex.isEmpty() || hex.length() > 16 ? 0 : Long.parseUnsignedLong(hex, 16);
        } catch (NumberFormatException e) {
            id = 0;
        }
        if (id <= 0) {
            throw new IllegalArgumentException("invalid lease ID '" + text
                    + "': expected the hexadecimal ID that 'rotactl lease grant' printed, e.g. 694d5a7b1f2d0c04");
        }
        return id;
    }

    /** A lease id as rotactl prints and reads it: 16 hex digits. */
    static String leaseHex(long id) {
        return String.format("%016x", id);
    }

    /** picocli converter for {@link #duration}. */
    static final class DurationConverter implements CommandLine.ITypeConverter<Duration> {
        @Override
        public Duration convert(String value) {
            try {
                return duration(value);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException(e.getMessage());
            }
        }
    }

    /** picocli converter for {@link #leaseId}. */
    static final class LeaseIdConverter implements CommandLine.ITypeConverter<Long> {
        @Override
        public Long convert(String value) {
            try {
                return leaseId(value);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException(e.getMessage());
            }
        }
    }
}
