package io.rota.server.fuzz;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.Random;

/**
 * The HTTP port with well-formed HTTP/1.1 requests that are wrong: every page (/health, /status, /metrics, the
 * dashboard and its assets, /dashboard/state and /dashboard/events), /fault/clock and the lab endpoints
 * (/lab/member, /lab/partition, /lab/transfer), with wrong methods, near-miss paths, percent-encodings,
 * unicode, duplicate and malformed query parameters, bodies where none belongs, the lab's header or not, an
 * Origin of a stranger or of a member, a Host that is not loopback. Sent over raw sockets (a JDK client
 * would refuse or fix some of them), each with {@code Connection: close}.
 *
 * <p>Every request must get a status line within the deadline, and its status must not be 500 (an exception
 * the handler did not expect; the lab's script here always succeeds). What the fuzz must not do to its own
 * cluster it does not send: {@code /lab/partition?on=true} in any spelling {@code Boolean.parseBoolean}
 * accepts (a cut member is what the lab is for, not a mistake), and clock faults beyond ±10 s or
 * {@code FaultClock.MAX_RATE_PPM}, where a value is a valid number (the test resets the clock afterwards).
 * Counts: {@code http.sent/METHOD path}, {@code http.answers/path.STATUS}.
 */
public final class HttpDoor {

    private static final String[] METHODS = {"GET", "GET", "GET", "POST", "POST", "PUT", "DELETE", "HEAD", "OPTIONS",
            "PATCH", "TRACE", "FOO", "get"};
    private static final String[] PATHS = {"/health", "/status", "/metrics", "/", "/index.html", "/dashboard.js",
            "/dashboard.css", "/dashboard/state", "/dashboard/events", "/fault/clock", "/lab/member", "/lab/partition",
            "/lab/transfer", "/lab/", "/lab", "/lab/x", "/fault", "/fault/clock/", "/fault/clock/x", "//health",
            "/health/", "/HEALTH", "/status/..", "/%2e%2e/status", "/%00", "/%ZZ", "/\u00e9t\u00e9", "/dashboard/",
            "/dashboard/state/x", "/metrics?", "/lab/member/", "/./status", "*", "/lab/%2e%2e/member"};
    private static final String[] PARAMS = {"wall-offset-ms", "mono-rate-ppm", "action", "name", "on", "to", "x", "",
            "wall-offset-ms", "action"};
    private static final String[] NUMBERS = {"0", "1", "-1", "abc", "", "1e3", "9223372036854775807",
            "9223372036854775808", "-9223372036854775809", "1000", "1001", "-1000", "-1001", " 5", "5 ", "+5", "0x10",
            "1.5", "\u0665", "99999999999999999999999"};
    private static final String[] ACTIONS = {"kill", "pause", "resume", "restart", "KILL", "", "stop", "kill;id",
            "$(id)", "../kill", "kill\n", "restart restart"};
    private static final String[] NAMES = {"n1", "n2", "n3", "n4", "", "../n1", "n1;id", "$(id)", "n1 n2",
            "x".repeat(40), "\u00e9", "-rf", "--help"};
    private static final String[] ONS = {"false", "0", "no", "", "off", "tru", "true ", "1", "yes", "on"};

    private final Random random;
    private final Tally tally;
    private final Duration deadline;

    public HttpDoor(Random random, Tally tally, Duration deadline) {
        this.random = random;
        this.tally = tally;
        this.deadline = deadline;
    }

    /** One request to the HTTP port at {@code address}; {@code memberHttpPorts} make a member's Origin. */
    public void request(InetSocketAddress address, int[] memberHttpPorts) {
        String method = METHODS[random.nextInt(METHODS.length)];
        String path = PATHS[random.nextInt(PATHS.length)];
        StringBuilder query = new StringBuilder();
        for (int i = random.nextInt(4); i > 0; i--) {
            String p = PARAMS[random.nextInt(PARAMS.length)];
            query.append(query.length() == 0 ? "?" : "&").append(p);
            if (random.nextInt(8) != 0) {
                query.append('=').append(URLEncoder.encode(value(p), StandardCharsets.UTF_8));
            }
        }
        if (random.nextInt(20) == 0) {
            query.append(query.length() == 0 ? "?" : "&").append("x=").append("y".repeat(3000 + random.nextInt(5000)));
        }
        String target = path + query;
        StringBuilder head = new StringBuilder(method).append(' ').append(target).append(" HTTP/1.1\r\n");
        String host = random.nextInt(6) == 0 ? "evil.example:80" : "127.0.0.1:" + address.getPort();
        head.append("Host: ").append(host).append("\r\n");
        if (random.nextBoolean()) {
            head.append("X-Rota-Lab: ").append(random.nextInt(4) == 0 ? "" : "1").append("\r\n");
        }
        if (random.nextInt(3) == 0) {
            String[] origins = {"http://evil.example", "null", "http://127.0.0.1:"
                    + memberHttpPorts[random.nextInt(memberHttpPorts.length)], "http://localhost:1", ""};
            head.append("Origin: ").append(origins[random.nextInt(origins.length)]).append("\r\n");
        }
        byte[] body = new byte[0];
        if (random.nextInt(4) == 0) {
            body = random.nextInt(10) == 0 ? new byte[64 * 1024 + random.nextInt(2 << 20)]
                    : ("{\"action\":\"kill\",\"name\":\"n1\",\"x\":\"" + "\u00e9".repeat(random.nextInt(100)) + "\"}")
                    .getBytes(StandardCharsets.UTF_8);
            head.append("Content-Type: ").append(random.nextBoolean() ? "application/json" : "text/plain; charset=x")
                    .append("\r\n");
        }
        if (body.length > 0 || random.nextInt(4) == 0) {
            head.append("Content-Length: ").append(body.length).append("\r\n");
        }
        head.append("Connection: close\r\n\r\n");
        String bucket = path.length() > 24 ? path.substring(0, 24) : path;
        tally.add("http.sent/" + method.toUpperCase(Locale.ROOT));
        try (Socket socket = new Socket()) {
            socket.connect(address, 5_000);
            socket.setSoTimeout((int) deadline.toMillis());
            OutputStream out = socket.getOutputStream();
            out.write(head.toString().getBytes(StandardCharsets.UTF_8));
            try {
                out.write(body);
                out.flush();
            } catch (IOException e) {
                // The server may answer (413) and close before a large body is read: its right; read its answer.
            }
            String status = statusLine(socket.getInputStream());
            if (status == null) {
                tally.problem("http: " + method + " " + abbreviated(target) + " was closed without an answer");
                return;
            }
            String[] parts = status.split(" ", 3);
            if (parts.length < 2 || !parts[0].startsWith("HTTP/1.")) {
                tally.problem("http: " + method + " " + abbreviated(target) + " answered '" + status + "'");
                return;
            }
            tally.add("http.answers/" + parts[1]);
            tally.add("http.answers-by-path/" + bucket + "." + parts[1]);
            if (parts[1].equals("500") || parts[1].startsWith("0")) {
                tally.problem("http: " + method + " " + abbreviated(target) + " answered " + status);
            }
        } catch (SocketTimeoutException e) {
            tally.problem("http: " + method + " " + abbreviated(target) + " not answered within " + deadline);
        } catch (IOException e) {
            tally.problem("http: " + method + " " + abbreviated(target) + ": " + e);
        }
    }

    private String value(String param) {
        return switch (param) {
            case "wall-offset-ms" -> clockValue(10_000);
            case "mono-rate-ppm" -> clockValue(2_000);
            case "action" -> ACTIONS[random.nextInt(ACTIONS.length)];
            case "name" -> NAMES[random.nextInt(NAMES.length)];
            case "on" -> ONS[random.nextInt(ONS.length)];
            case "to" -> NUMBERS[random.nextInt(NUMBERS.length)];
            default -> random.nextBoolean() ? "" : "\u00e9=&?%";
        };
    }

    /** A clock fault: malformed, or a valid number within ±{@code bound} (a larger one is refused or not sent). */
    private String clockValue(long bound) {
        String v = NUMBERS[random.nextInt(NUMBERS.length)];
        try {
            long n = Long.parseLong(v);
            return Math.abs(n) <= bound ? v : "x" + v;
        } catch (NumberFormatException e) {
            return v;
        }
    }

    private static String abbreviated(String s) {
        return s.length() > 80 ? s.substring(0, 80) + "..." : s;
    }

    /** The first line of the answer, or null if the server closed without one. */
    private static String statusLine(InputStream in) throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        for (int c = in.read(); c >= 0; c = in.read()) {
            if (c == '\n') {
                return line.toString(StandardCharsets.ISO_8859_1).strip();
            }
            line.write(c);
            if (line.size() > 1000) {
                break;
            }
        }
        return line.size() == 0 ? null : line.toString(StandardCharsets.ISO_8859_1);
    }
}
