package io.rota.examples.reminders;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.rota.client.recipes.FenceGuard;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Executors;

/**
 * The demo's "mail server": a local HTTP sink that delivers reminders and, like a well-made external
 * resource, checks the two things that make double work harmless.
 * <ul>
 *   <li><b>Fencing token</b> ({@link FenceGuard}): a send carrying a token lower than the highest one seen
 *       comes from a job runner that lost its lock (it was paused past its lease, say) and is rejected
 *       with 409 — a stale write.</li>
 *   <li><b>Idempotency key</b> ({@code reminder/<day>/<student>}): a second send with a key already
 *       delivered is answered "already-delivered" and not delivered again. This closes the one gap a
 *       once-record cannot: a runner that delivered and died before it recorded DONE.</li>
 * </ul>
 * A send without a token and key (the uncoordinated app servers' plain cron) is delivered unchecked, as a
 * mail server that trusts its callers would. It counts, per day, what each student actually received, so
 * the demo can prove "exactly one" — or show three.
 *
 * <p>Endpoints: {@code POST /send?day=&student=&instance=[&token=&key=]} and
 * {@code POST /run?event=ready|start|end|stopped&day=&token=&instance=&pid=[&detail=]} (who is up, who runs
 * which day, how a run ended), and {@code GET /clock} (the demo's shared clock origin, once the driver has
 * set it).
 */
final class MailSink implements AutoCloseable {

    /** A job run as the app reported it; {@code detail} says why a run stopped (empty otherwise). */
    record RunEvent(String event, String day, long token, String instance, long pid, String detail) {
    }

    /** A send refused for its stale fencing token: who sent it, with which token, and the newer token seen. */
    record StaleSend(String day, int student, String instance, long token, long highest) {
    }

    /**
     * The demo's fault injection for fencing (a failpoint, as etcd's gofail): the first fenced send of
     * {@code day} once {@code afterDelivered} students have their reminder is reported to {@code onCaught}
     * (which freezes the sender), then held back until {@code release} says so and a newer token has been
     * seen, as a slow network would delay it; only then is it checked — and refused as stale.
     */
    record InFlightTrap(String day, int afterDelivered, java.util.function.BiConsumer<String, Long> onCaught,
                        java.util.function.BooleanSupplier release, long holdMs) {
    }

    /**
     * What one day looks like from the mail server; {@code fewest} and {@code most} are the least and the
     * most reminders any one student received.
     */
    record DayReport(String day, int sent, int duplicates, int missing, int staleRejected, int repeatsAbsorbed,
                     int fewest, int most) {
    }

    private final HttpServer server;
    private final int latencyMs;
    private final FenceGuard fence = new FenceGuard();
    /** day → student → deliveries (a value above 1 is a duplicate reminder). */
    private final Map<String, Map<Integer, Integer>> deliveries = new TreeMap<>();
    private final Set<String> deliveredKeys = new HashSet<>();
    private final Map<String, Integer> stale = new HashMap<>();
    private final Map<String, Integer> absorbed = new HashMap<>();
    private final List<RunEvent> runs = new ArrayList<>();
    private final List<StaleSend> staleSends = new ArrayList<>();
    private String clock;
    private InFlightTrap trap;

    /**
     * Starts the sink on an ephemeral port of 127.0.0.1.
     *
     * @param latencyMs how long one delivery takes (an SMTP round trip), so runs last long enough to fail in
     */
    MailSink(int latencyMs) throws IOException {
        this.latencyMs = latencyMs;
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
        server.createContext("/send", this::send);
        server.createContext("/run", this::run);
        server.createContext("/clock", this::clock);
        server.setExecutor(Executors.newFixedThreadPool(8, r -> {
            Thread t = new Thread(r, "mail-sink");
            t.setDaemon(true);
            return t;
        }));
        server.start();
    }

    /** The sink's base URL, {@code http://127.0.0.1:PORT}. */
    String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    private void send(HttpExchange ex) throws IOException {
        Map<String, String> q = query(ex);
        String day = q.get("day");
        String key = q.get("key");
        String instance = q.getOrDefault("instance", "?");
        long token;
        int student;
        try {
            token = q.containsKey("token") ? Long.parseLong(q.get("token")) : -1;
            student = Integer.parseInt(q.get("student"));
        } catch (NumberFormatException e) {
            reply(ex, 400, "bad request: token and student must be numbers: " + e.getMessage());
            return;
        }
        if (day == null || (token < 0) != (key == null)) {
            reply(ex, 400, "bad request: day is required, and token and key go together");
            return;
        }
        sleepQuietly(latencyMs);
        if (token >= 0) {
            holdIfTrapped(day, instance, token);
        }
        int status;
        String body;
        synchronized (this) {
            if (token < 0) {
                deliver(day, student);   // plain cron: nothing to check with
                status = 200;
                body = "sent";
            } else if (!fence.admit(token)) {
                stale.merge(day, 1, Integer::sum);
                staleSends.add(new StaleSend(day, student, instance, token, fence.highest()));
                status = 409;
                body = "stale fencing token " + token + ": a runner with token " + fence.highest()
                        + " has taken over; this sender lost its lock";
            } else if (!deliveredKeys.add(key)) {
                absorbed.merge(day, 1, Integer::sum);
                status = 200;
                body = "already-delivered";
            } else {
                deliver(day, student);
                status = 200;
                body = "sent";
            }
        }
        reply(ex, status, body);
    }

    private void deliver(String day, int student) {
        deliveries.computeIfAbsent(day, d -> new TreeMap<>()).merge(student, 1, Integer::sum);
    }

    /** Arms the in-flight trap (see {@link InFlightTrap}); it fires once. */
    synchronized void arm(InFlightTrap trap) {
        this.trap = trap;
    }

    /** If this send is the trap's, freezes its sender and holds the send until released and overtaken. */
    private void holdIfTrapped(String day, String instance, long token) {
        InFlightTrap t;
        synchronized (this) {
            if (trap == null || !trap.day().equals(day) || delivered(day) < trap.afterDelivered()) {
                return;
            }
            t = trap;
            trap = null;
        }
        t.onCaught().accept(instance, token);
        long deadline = System.currentTimeMillis() + t.holdMs();
        while (System.currentTimeMillis() < deadline && !(t.release().getAsBoolean() && highestToken() > token)) {
            sleepQuietly(20);
        }
    }

    private synchronized long highestToken() {
        return fence.highest();
    }

    private void run(HttpExchange ex) throws IOException {
        Map<String, String> q = query(ex);
        RunEvent e;
        try {
            e = new RunEvent(q.get("event"), q.get("day"), Long.parseLong(q.get("token")), q.get("instance"),
                    Long.parseLong(q.get("pid")), q.getOrDefault("detail", ""));
        } catch (NumberFormatException bad) {
            reply(ex, 400, "bad request: token and pid must be numbers: " + bad.getMessage());
            return;
        }
        synchronized (this) {
            runs.add(e);
        }
        reply(ex, 200, "ok");
    }

    /**
     * Sets the demo's shared clock origin; app servers waiting in {@code GET /clock} get it at once.
     *
     * @param origin "realOriginMs simOriginIso speed"
     */
    synchronized void setClock(String origin) {
        clock = origin;
        notifyAll();
    }

    /** App servers fetch the clock origin here, waiting until the driver has set it (so all share it). */
    private void clock(HttpExchange ex) throws IOException {
        String origin;
        synchronized (this) {
            long deadline = System.currentTimeMillis() + 60_000;
            while (clock == null && System.currentTimeMillis() < deadline) {
                try {
                    wait(1_000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
            origin = clock;
        }
        if (origin == null) {
            reply(ex, 503, "the demo driver has not started the clock yet; retry");
        } else {
            reply(ex, 200, origin);
        }
    }

    /** Every run event so far, oldest first. */
    synchronized List<RunEvent> runs() {
        return List.copyOf(runs);
    }

    /** Every send refused as stale so far, oldest first. */
    synchronized List<StaleSend> staleSends() {
        return List.copyOf(staleSends);
    }

    /** Students of {@code day} who have received a reminder. */
    synchronized int delivered(String day) {
        return deliveries.getOrDefault(day, Map.of()).size();
    }

    /** The day's figures for {@code students} students (numbered 1..students). */
    synchronized DayReport report(String day, int students) {
        Map<Integer, Integer> got = deliveries.getOrDefault(day, Map.of());
        int duplicates = 0;
        int missing = 0;
        int fewest = Integer.MAX_VALUE;
        int most = 0;
        for (int s = 1; s <= students; s++) {
            int n = got.getOrDefault(s, 0);
            duplicates += Math.max(0, n - 1);
            missing += n == 0 ? 1 : 0;
            fewest = Math.min(fewest, n);
            most = Math.max(most, n);
        }
        int sent = got.values().stream().mapToInt(Integer::intValue).sum();
        return new DayReport(day, sent, duplicates, missing, stale.getOrDefault(day, 0), absorbed.getOrDefault(day, 0),
                fewest, most);
    }

    @Override
    public void close() {
        server.stop(0);
    }

    private static Map<String, String> query(HttpExchange ex) {
        Map<String, String> q = new HashMap<>();
        String raw = ex.getRequestURI().getRawQuery();
        if (raw != null) {
            for (String pair : raw.split("&")) {
                int eq = pair.indexOf('=');
                if (eq > 0) {
                    q.put(pair.substring(0, eq), URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
                }
            }
        }
        return q;
    }

    private static void reply(HttpExchange ex, int status, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        ex.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(bytes);
        }
    }

    private static void sleepQuietly(int ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
