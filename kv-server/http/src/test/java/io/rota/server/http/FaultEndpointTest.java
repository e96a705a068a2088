package io.rota.server.http;

import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpVersion;
import io.rota.raft.node.Clock;
import io.rota.server.fault.FaultClock;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** /fault/clock: off (404) unless the member runs with --unsafe-fault-injection; then it sets the clock. */
class FaultEndpointTest {

    private static FullHttpResponse send(FaultClock clock, HttpMethod method, String uri) {
        EmbeddedChannel ch = new EmbeddedChannel(new HttpHandler(null, clock));
        ch.writeInbound(new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, method, uri));
        return ch.readOutbound();
    }

    private static String body(FullHttpResponse r) {
        return r.content().toString(StandardCharsets.UTF_8);
    }

    @Test
    void offByDefault() {
        FullHttpResponse r = send(null, HttpMethod.POST, "/fault/clock?wall-offset-ms=1000");
        assertEquals(404, r.status().code());
        assertTrue(body(r).contains("--unsafe-fault-injection"), body(r));
    }

    @Test
    void setsAndReportsTheFaults() {
        FaultClock clock = new FaultClock(Clock.SYSTEM);
        FullHttpResponse r = send(clock, HttpMethod.POST, "/fault/clock?wall-offset-ms=-3600000&mono-rate-ppm=200");
        assertEquals(200, r.status().code());
        assertEquals("{\"wallOffsetMs\":-3600000,\"monoRatePpm\":200}", body(r).strip());
        assertEquals(-3_600_000, clock.wallOffsetMs());
        assertEquals("{\"wallOffsetMs\":-3600000,\"monoRatePpm\":200}",
                body(send(clock, HttpMethod.GET, "/fault/clock")).strip());
        FullHttpResponse bad = send(clock, HttpMethod.POST, "/fault/clock?mono-rate-ppm=50000");
        assertEquals(400, bad.status().code());
        assertTrue(body(bad).contains("±1000"), body(bad));
        assertEquals(400, send(clock, HttpMethod.POST, "/fault/clock?wall-offset-ms=soon").status().code());
    }
}
