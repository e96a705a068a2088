package io.rota.chaos.nemesis;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Sets the members' clocks through their fault-injection endpoint (a server started with
 * {@code --unsafe-fault-injection}): {@code POST /fault/clock?wall-offset-ms=N&mono-rate-ppm=N} on a member's
 * HTTP port sets its wall clock's offset from the real clock (absolute, not cumulative) and its monotonic
 * clock's rate offset, and answers 200 with {@code {"wallOffsetMs":N,"monoRatePpm":N}}; {@code GET /fault/clock}
 * answers the same JSON. Without the flag both answer 404.
 */
public final class ClockControl {

    /** The largest monotonic-rate offset the server accepts, in parts per million. */
    public static final long MAX_PPM = 1_000;

    /**
     * A member's clock faults.
     *
     * @param wallOffsetMs the wall clock's offset from the real one, milliseconds
     * @param monoRatePpm  the monotonic clock's rate offset, parts per million
     */
    public record Setting(long wallOffsetMs, long monoRatePpm) {
        /** No fault. */
        public static final Setting NONE = new Setting(0, 0);
    }

    private static final Duration TIMEOUT = Duration.ofSeconds(2);
    private static final Pattern WALL = Pattern.compile("\"wallOffsetMs\"\\s*:\\s*(-?\\d+)");
    private static final Pattern MONO = Pattern.compile("\"monoRatePpm\"\\s*:\\s*(-?\\d+)");

    private final List<String> httpAddresses;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(TIMEOUT)
            .build();

    /**
     * @param httpAddresses each member's HTTP address, {@code host:port}, in member order
     */
    public ClockControl(List<String> httpAddresses) {
        this.httpAddresses = List.copyOf(httpAddresses);
    }

    /** HTTP Basic credentials for /fault/clock, or null: with auth enabled it answers root only. */
    private volatile String authorization;

    /**
     * Sends {@code user}'s password with every request from now on (a run with auth enabled).
     *
     * @param user     a root user
     * @param password its password
     */
    public void credentials(String user, String password) {
        authorization = io.rota.testkit.ProcessCluster.basicAuthorization(user, password);
    }

    /**
     * How many members there are.
     *
     * @return the count
     */
    public int size() {
        return httpAddresses.size();
    }

    /**
     * Sets member {@code i}'s clock faults and checks the member's answer.
     *
     * @param i the member
     * @param s the setting
     * @throws IllegalStateException if the member does not answer 200 with the setting (e.g. 404: started
     *                               without {@code --unsafe-fault-injection})
     */
    public void set(int i, Setting s) {
        if (Math.abs(s.monoRatePpm()) > MAX_PPM) {
            throw new IllegalArgumentException("|mono-rate-ppm| must be at most " + MAX_PPM + ": " + s);
        }
        Setting answered = call(i, HttpRequest.newBuilder(uri(i, "?wall-offset-ms=" + s.wallOffsetMs()
                + "&mono-rate-ppm=" + s.monoRatePpm())).POST(HttpRequest.BodyPublishers.noBody()));
        if (!answered.equals(s)) {
            throw new IllegalStateException("member " + (i + 1) + " set its clock to " + answered + ", not " + s);
        }
    }

    /**
     * Member {@code i}'s clock faults as it reports them.
     *
     * @param i the member
     * @return the setting
     */
    public Setting get(int i) {
        return call(i, HttpRequest.newBuilder(uri(i, "")).GET());
    }

    private URI uri(int i, String query) {
        return URI.create("http://" + httpAddresses.get(i) + "/fault/clock" + query);
    }

    private Setting call(int i, HttpRequest.Builder request) {
        HttpResponse<String> r;
        try {
            String auth = authorization;
            r = http.send((auth == null ? request : request.header("Authorization", auth)).timeout(TIMEOUT).build(),
                    HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new IllegalStateException("member " + (i + 1) + "'s fault endpoint did not answer: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while setting member " + (i + 1) + "'s clock", e);
        }
        if (r.statusCode() != 200) {
            throw new IllegalStateException("member " + (i + 1) + " answered " + r.statusCode() + " on /fault/clock"
                    + (r.statusCode() == 404 ? " (started without --unsafe-fault-injection?)" : "") + ": "
                    + r.body().strip());
        }
        Matcher wall = WALL.matcher(r.body());
        Matcher mono = MONO.matcher(r.body());
        if (!wall.find() || !mono.find()) {
            throw new IllegalStateException("member " + (i + 1) + "'s /fault/clock answer is not the expected JSON: "
                    + r.body());
        }
        return new Setting(Long.parseLong(wall.group(1)), Long.parseLong(mono.group(1)));
    }
}
