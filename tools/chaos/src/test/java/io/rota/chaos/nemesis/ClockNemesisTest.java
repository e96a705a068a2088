package io.rota.chaos.nemesis;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The clock nemesis against fake members that implement the server's fault-injection contract:
 * {@code POST /fault/clock?wall-offset-ms=N&mono-rate-ppm=N} sets both (absolute), answers 200 with
 * {@code {"wallOffsetMs":N,"monoRatePpm":N}}; {@code GET} answers the same; without the flag, 404 and a line.
 */
class ClockNemesisTest {

    /** One fake member's HTTP port. */
    private static final class FakeMember {
        final HttpServer server;
        final boolean enabled;
        volatile long wallOffsetMs;
        volatile long monoRatePpm;
        volatile int posts;

        FakeMember(boolean enabled) throws IOException {
            this.enabled = enabled;
            server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
            server.createContext("/fault/clock", this::handle);
            server.start();
        }

        String address() {
            return "127.0.0.1:" + server.getAddress().getPort();
        }

        private void handle(HttpExchange x) throws IOException {
            if (!enabled) {
                answer(x, 404, "fault injection is off: start the member with --unsafe-fault-injection\n");
                return;
            }
            if (x.getRequestMethod().equals("POST")) {
                String query = x.getRequestURI().getQuery();
                Matcher wall = Pattern.compile("wall-offset-ms=(-?\\d+)").matcher(query);
                Matcher mono = Pattern.compile("mono-rate-ppm=(-?\\d+)").matcher(query);
                if (!wall.find() || !mono.find() || Math.abs(Long.parseLong(mono.group(1))) > 1_000) {
                    answer(x, 400, "bad query " + query + "\n");
                    return;
                }
                wallOffsetMs = Long.parseLong(wall.group(1));
                monoRatePpm = Long.parseLong(mono.group(1));
                posts++;
            }
            answer(x, 200, "{\"wallOffsetMs\":" + wallOffsetMs + ",\"monoRatePpm\":" + monoRatePpm + "}");
        }

        private static void answer(HttpExchange x, int status, String body) throws IOException {
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            x.sendResponseHeaders(status, bytes.length);
            x.getResponseBody().write(bytes);
            x.close();
        }
    }

    private final List<FakeMember> members = new ArrayList<>();

    private ClockControl control(boolean... enabled) throws IOException {
        List<String> addresses = new ArrayList<>();
        for (boolean on : enabled) {
            FakeMember m = new FakeMember(on);
            members.add(m);
            addresses.add(m.address());
        }
        return new ClockControl(addresses);
    }

    @AfterEach
    void stop() {
        members.forEach(m -> m.server.stop(0));
    }

    @Test
    void faultsSetEachTouchedMemberAndHealResetsThemAll() throws IOException {
        ClockControl clocks = control(true, true, true);
        ClockNemesis nemesis = new ClockNemesis(clocks, () -> 1);
        long seed = new Random().nextLong();
        Random random = new Random(seed);
        int leaderHit = 0;
        for (int round = 0; round < 12; round++) {
            String what = nemesis.fault(random);
            assertTrue(what.startsWith("clock n"), what);
            leaderHit += what.contains("n2 (leader) wall") ? 1 : 0;
            int touched = 0;
            for (int i = 0; i < 3; i++) {
                ClockControl.Setting s = clocks.get(i);
                if (!s.equals(ClockControl.Setting.NONE)) {
                    touched++;
                    assertTrue(what.contains("n" + (i + 1)), what);
                }
            }
            assertTrue(touched >= 1 && what.split(";").length == touched, "seed " + seed + ": " + what);
            String healed = nemesis.heal();
            assertTrue(healed.startsWith("clocks reset on n"), healed);
            for (int i = 0; i < 3; i++) {
                assertEquals(ClockControl.Setting.NONE, clocks.get(i), "seed " + seed + " after " + what);
            }
        }
        assertTrue(leaderHit >= 3, "the leader is a frequent target, seed " + seed + ": " + leaderHit);
        assertEquals("clocks already true", nemesis.heal());
    }

    @Test
    void offsetsGoBothWaysFromATenthOfASecondToAnHourAndDriftStaysWithinTwoHundredPpm() {
        long seed = new Random().nextLong();
        Random random = new Random(seed);
        long smallest = Long.MAX_VALUE;
        long largest = 0;
        int forward = 0;
        int fast = 0;
        for (int i = 0; i < 2_000; i++) {
            ClockControl.Setting s = ClockNemesis.draw(random);
            long abs = Math.abs(s.wallOffsetMs());
            assertTrue(abs >= ClockNemesis.MIN_JUMP_MS && abs <= ClockNemesis.MAX_JUMP_MS, "seed " + seed + ": " + s);
            assertTrue(Math.abs(s.monoRatePpm()) <= ClockNemesis.MAX_DRIFT_PPM, "seed " + seed + ": " + s);
            smallest = Math.min(smallest, abs);
            largest = Math.max(largest, abs);
            forward += s.wallOffsetMs() > 0 ? 1 : 0;
            fast += s.monoRatePpm() > 0 ? 1 : 0;
        }
        assertTrue(forward > 800 && forward < 1_200, "jumps both ways, seed " + seed + ": " + forward + " forward");
        assertTrue(fast > 800 && fast < 1_200, "drift both ways, seed " + seed + ": " + fast + " fast");
        assertTrue(smallest < 200 && largest > 1_800_000, "from a tenth of a second to half an hour and more, seed "
                + seed + ": " + smallest + " .. " + largest);
    }

    @Test
    void settingsAreAbsoluteNotCumulative() throws IOException {
        ClockControl clocks = control(true);
        clocks.set(0, new ClockControl.Setting(5_000, 100));
        clocks.set(0, new ClockControl.Setting(-200, -50));
        assertEquals(new ClockControl.Setting(-200, -50), clocks.get(0));
        assertEquals(2, members.get(0).posts);
    }

    @Test
    void aMemberStartedWithoutFaultInjectionIsNamedPlainly() throws IOException {
        ClockControl clocks = control(true, false);
        clocks.set(0, new ClockControl.Setting(1_000, 10));
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> clocks.set(1, new ClockControl.Setting(1_000, 10)));
        assertTrue(e.getMessage().contains("member 2 answered 404") && e.getMessage().contains("--unsafe-fault-injection"),
                e.getMessage());
    }

    @Test
    void aRateBeyondTheServersBoundIsRefusedBeforeAsking() throws IOException {
        ClockControl clocks = control(true);
        assertThrows(IllegalArgumentException.class, () -> clocks.set(0, new ClockControl.Setting(0, 1_001)));
        assertEquals(0, members.get(0).posts);
    }

    @Test
    void offsetsAreShownInReadableUnits() {
        assertEquals("+250 ms", ClockNemesis.offset(250));
        assertEquals("-42.5 s", ClockNemesis.offset(-42_500));
        assertEquals("+58.3 min", ClockNemesis.offset(3_498_000));
    }
}
