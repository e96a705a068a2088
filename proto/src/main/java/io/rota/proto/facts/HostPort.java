package io.rota.proto.facts;

import java.net.InetSocketAddress;

/**
 * A member's address as the protocol carries it: {@code host:port}, the host a DNS name or an IPv4 address,
 * or an IPv6 address in brackets ({@code [::1]:7101}); the port 1–65535 (0 only where a process binds,
 * {@link #parseBind}). An etcd-style URL ({@code http://host:port}, {@code https://host:port}) is accepted
 * and its scheme kept apart. This is the one parser of the fact (issue 30): rotactl, the SDK, the request
 * router, the etcd door, the restore command and apply all ask it, so what a door accepts, apply accepts.
 * Pure: no name is looked up here (apply does no I/O); an unresolved address is looked up at each dial.
 *
 * @param scheme "http" or "https" when the text was a URL, else the empty string
 * @param host   a DNS name, an IPv4 address, or an IPv6 address without its brackets
 * @param port   1–65535 (0 only from {@link #parseBind})
 */
public record HostPort(String scheme, String host, int port) {

    /** RFC 1035's bound on a whole name. */
    private static final int MAX_HOST = 253;

    /**
     * Parses {@code text} as an address others dial; {@code field} names it in the refusal, e.g. "peer URL".
     *
     * @throws BadValueException with a one-line message naming {@code field} and what is wrong
     */
    public static HostPort parse(String field, String text) {
        return parse(field, text, 1);
    }

    /** As {@link #parse}, but port 0 is allowed: an address a process binds, 0 asking for any free port. */
    public static HostPort parseBind(String field, String text) {
        return parse(field, text, 0);
    }

    /** Whether {@code text} is an address others can dial ({@link #parse} would accept it). */
    public static boolean isValid(String text) {
        try {
            parse("address", text);
            return true;
        } catch (BadValueException e) {
            return false;
        }
    }

    private static HostPort parse(String field, String text, int minPort) {
        if (text == null || text.isEmpty()) {
            throw bad(field, text, "it is empty; give HOST:PORT");
        }
        String rest = text;
        String scheme = "";
        int sep = rest.indexOf("://");
        if (sep >= 0) {
            scheme = rest.substring(0, sep);
            if (!scheme.equals("http") && !scheme.equals("https")) {
                throw bad(field, text, "the scheme must be http:// or https://, or none");
            }
            rest = rest.substring(sep + 3);
            if (rest.endsWith("/")) {
                rest = rest.substring(0, rest.length() - 1);   // etcd prints URLs with and without it
            }
        }
        for (int i = 0; i < rest.length(); i++) {
            char c = rest.charAt(i);
            if (c <= ' ' || c == ',' || c == '/' || c == '@' || c == '?' || c == '#' || c >= 0x7f) {
                throw bad(field, text, c == ',' ? "it holds a comma; give one HOST:PORT"
                        : c >= 0x7f ? "it holds a character outside ASCII (write an international name in punycode)"
                        : "it holds '" + printable(c) + "', which no HOST:PORT has");
            }
        }
        int colon = rest.lastIndexOf(':');
        if (colon < 0) {
            throw bad(field, text, "it has no port; give HOST:PORT");
        }
        String host = rest.substring(0, colon);
        String digits = rest.substring(colon + 1);
        if (host.startsWith("[") && host.endsWith("]") && host.length() > 2) {
            host = host.substring(1, host.length() - 1);
            if (!host.chars().allMatch(c -> c == ':' || c == '.' || Character.digit(c, 16) >= 0) || host.indexOf(':') < 0) {
                throw bad(field, text, "'[" + host + "]' is not an IPv6 address");
            }
        } else if (host.isEmpty()) {
            throw bad(field, text, "the host is missing; give HOST:PORT");
        } else if (host.indexOf(':') >= 0 || host.indexOf('[') >= 0 || host.indexOf(']') >= 0) {
            throw bad(field, text, "an IPv6 host goes in brackets, e.g. [::1]:7101");
        } else if (host.length() > MAX_HOST) {
            throw bad(field, text, "the host is " + host.length() + " characters long, over " + MAX_HOST);
        } else if (!host.chars().allMatch(c -> c == '.' || c == '-' || c == '_' || Character.isLetterOrDigit(c))
                || host.startsWith(".") || host.startsWith("-") || host.contains("..")) {
            throw bad(field, text, "'" + host + "' is not a host name (letters, digits, '.', '-', '_')");
        }
        return new HostPort(scheme, host, port(field, text, digits, minPort));
    }

    private static int port(String field, String text, String digits, int minPort) {
        if (digits.isEmpty()) {
            throw bad(field, text, "the port is missing; give HOST:PORT");
        }
        if (!digits.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw bad(field, text, "the port '" + digits + "' is not a number");
        }
        if (digits.length() > 1 && digits.charAt(0) == '0') {
            throw bad(field, text, "the port '" + digits + "' has a leading zero");
        }
        if (digits.length() > 5 || Integer.parseInt(digits) > 65_535 || Integer.parseInt(digits) < minPort) {
            throw bad(field, text, "port " + digits + " is out of range " + minPort + "–65535");
        }
        return Integer.parseInt(digits);
    }

    private static String printable(char c) {
        return c < ' ' ? String.format("\\u%04x", (int) c) : String.valueOf(c);
    }

    private static BadValueException bad(String field, String text, String why) {
        return new BadValueException(field + " '" + (text == null ? "" : text) + "': " + why);
    }

    /** {@code host:port}, the host bracketed when it is IPv6: the form the member tables keep. */
    @Override
    public String toString() {
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }

    /** An address looked up at each dial, so a member whose name moves to a new IP is found again. */
    public InetSocketAddress unresolved() {
        return InetSocketAddress.createUnresolved(host, port);
    }
}
