package io.rota.server;

import io.rota.client.RotaClient;
import io.rota.client.recipes.Lock;
import io.rota.client.recipes.LockHandle;
import io.rota.testkit.Await;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The dashboard's endpoints without a browser, over real sockets on a live in-JVM cluster: the page and its
 * assets come from the jar; /dashboard/state shows the leader, its followers' progress, the log tail, the
 * election in the timeline and a lock taken with the SDK's Lock recipe; /dashboard/events streams
 * server-sent events a few times a second and refuses listeners beyond its bound; lab mode is off.
 */
@Tag("cluster")
class DashboardTest {

    @RegisterExtension
    static final SharedCluster CLUSTER = new SharedCluster(Duration.ofSeconds(10));
    private final HttpClient http = HttpClient.newHttpClient();

    private HttpResponse<String> get(int member, String path) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(uri(member, path)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static URI uri(int member, String path) {
        return CLUSTER.get().httpUri(member, path);
    }

    @Test
    void thePageAndItsAssetsComeFromTheJar() throws Exception {
        HttpResponse<String> page = get(0, "/");
        assertEquals(200, page.statusCode());
        assertEquals("text/html; charset=utf-8", page.headers().firstValue("content-type").orElse(""));
        assertTrue(page.body().contains("<script src=\"/dashboard.js\">"), page.body());
        assertTrue(get(0, "/dashboard.js").body().contains("new EventSource("));
        assertEquals("text/css; charset=utf-8", get(0, "/dashboard.css").headers().firstValue("content-type").orElse(""));
        assertTrue(get(0, "/nothing-here").body().contains("/ (the dashboard)"));
    }

    @Test
    void theStateShowsTheLeaderItsFollowersTheLogTheElectionAndALock() throws Exception {
        int leader = CLUSTER.get().awaitLeader();
        try (RotaClient rota = RotaClient.connect(CLUSTER.get().endpoints());
             LockHandle held = Lock.of(rota, "dash").acquire(Duration.ofSeconds(10))) {
            String lease = Long.toHexString(held.leaseId());   // the client's session lease (the key adds a sequence)
            String[] state = new String[1];
            Await.until(TestCluster.TIMEOUT, () -> {
                state[0] = body(leader, "/dashboard/state");
                return state[0].contains("{\"name\":\"dash\",\"holder\":\"" + lease + "\"");
            }, "the lock in the leader's state");
            String s = state[0];
            assertTrue(s.contains("\"role\":\"leader\""), s);
            assertTrue(s.contains("\"key\":\"" + held.key() + "\",\"token\":" + held.fencingToken()), s);
            assertTrue(s.contains("\"lab\":false"), s);
            assertTrue(s.contains("\"cluster_id\":\"" + CLUSTER.get().config(leader).clusterId() + "\""),
                    "the cluster's id, shown on the page (issue 32): " + s);
            assertEquals(2, count(s.substring(s.indexOf("\"progress\":"), s.indexOf("\"log\":")), "\"match\":"), s);
            assertTrue(s.contains(",\"no-op\"]") || s.contains("\"first\":"), s);
            assertTrue(Pattern.compile("\"kind\":\"role\",\"term\":\\d+,\"role\":\"leader\"").matcher(s).find(),
                    "the election in the timeline: " + s);
            for (int i = 0; i < 3; i++) {
                assertTrue(s.contains("\"http\":\"127.0.0.1:" + CLUSTER.get().http(i).getPort() + "\""),
                        "every member's HTTP address, for the page's streams: " + s);
            }
            assertTrue(Pattern.compile("\"log\":\\[(\\[\\d+,\\d+,\"[a-z_-]+\"],?)+]").matcher(s).find(), s);
        }
    }

    @Test
    void eventsAreServerSentAFewTimesASecond() throws Exception {
        try (Socket socket = stream(1)) {
            BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
            List<String> head = new ArrayList<>();
            for (String line = in.readLine(); !line.isEmpty(); line = in.readLine()) {
                head.add(line.toLowerCase());
            }
            assertEquals("http/1.1 200 ok", head.get(0));
            assertTrue(head.contains("content-type: text/event-stream; charset=utf-8"), head.toString());
            assertTrue(head.stream().noneMatch(h -> h.startsWith("access-control-allow-origin")),
                    "no wildcard CORS: a request without an Origin gets no Access-Control-Allow-Origin: " + head);
            long start = System.nanoTime();
            int frames = 0;
            while (frames < 4) {
                String line = in.readLine();
                if (line.contains("data: {\"name\":\"n2\"")) {
                    frames++;
                }
            }
            long ms = (System.nanoTime() - start) / 1_000_000;
            assertTrue(ms < 3_000, "4 frames took " + ms + " ms; the feed sends one every 250 ms");
        }
    }

    @Test
    void theFeedRefusesListenersBeyondItsBound() throws Exception {
        List<Socket> open = new ArrayList<>();
        try {
            // Four sources of four streams fill the feed; a fifth source is refused, as is a fifth stream of one.
            for (int source = 1; source <= 4; source++) {
                for (int i = 0; i < STREAMS_PER_SOURCE; i++) {
                    Socket s = stream(2, "127.0.0." + source);
                    open.add(s);
                    assertEquals("HTTP/1.1 200 OK", firstLine(s), "stream " + (i + 1) + " from 127.0.0." + source);
                }
            }
            Socket fifthOfOne = stream(2, "127.0.0.1");
            open.add(fifthOfOne);
            assertEquals("HTTP/1.1 503 Service Unavailable", firstLine(fifthOfOne), "a fifth stream from one address");
            Socket seventeenth = stream(2, "127.0.0.5");
            open.add(seventeenth);
            assertEquals("HTTP/1.1 503 Service Unavailable", firstLine(seventeenth), "16 listeners, the 17th refused");
        } finally {
            for (Socket s : open) {
                s.close();
            }
        }
    }

    @Test
    void labModeIsOffUnlessClusterShAskedForIt() throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(uri(0, "/lab/member?action=kill&name=n2"))
                .header("X-Rota-Lab", "yes").POST(HttpRequest.BodyPublishers.noBody()).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(404, r.statusCode());
        assertTrue(r.body().startsWith("lab mode is off"), r.body());
    }

    private String body(int member, String path) {
        try {
            return get(member, path).body();
        } catch (IOException e) {
            return "";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** DashboardFeed.MAX_PER_SOURCE (package-private there): streams one source address may hold. */
    private static final int STREAMS_PER_SOURCE = 4;

    private static String firstLine(Socket s) throws IOException {
        return new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8)).readLine();
    }

    /** A raw GET /dashboard/events: a socket that times out rather than hang the test. */
    private static Socket stream(int member) throws IOException {
        return stream(member, "127.0.0.1");
    }

    /** An event stream opened from {@code source}, a loopback address (all of 127/8 is this machine's). */
    private static Socket stream(int member, String source) throws IOException {
        Socket s = new Socket();
        s.bind(new InetSocketAddress(source, 0));
        s.connect(new InetSocketAddress("127.0.0.1", CLUSTER.get().http(member).getPort()), 5_000);
        s.setSoTimeout(5_000);
        OutputStream out = s.getOutputStream();
        out.write("GET /dashboard/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        out.flush();
        return s;
    }

    private static int count(String s, String what) {
        int n = 0;
        for (int i = s.indexOf(what); i >= 0; i = s.indexOf(what, i + 1)) {
            n++;
        }
        return n;
    }
}
