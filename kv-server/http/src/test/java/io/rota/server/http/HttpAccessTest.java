package io.rota.server.http;

import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpVersion;
import io.rota.proto.AuthEnableRequest;
import io.rota.proto.AuthRequest;
import io.rota.proto.AuthUserAddRequest;
import io.rota.proto.AuthUserGrantRoleRequest;
import io.rota.raft.node.Clock;
import io.rota.server.authgate.AuthGate;
import io.rota.server.auth.AuthStore;
import io.rota.server.fault.FaultClock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The HTTP port's identity rules without a member (design SD10, SD11): a root token in the Authorization
 * header (Bearer or bare) is served; another user's token, a forged one and none are refused with 403; a Host
 * this member is not known by gets 421. HttpPortProcessTest covers certificates and passwords on a process.
 */
class HttpAccessTest {

    private final AuthGate gate = new AuthGate(new AuthStore(), System::currentTimeMillis);

    @BeforeEach
    void authOn() {
        change(AuthRequest.newBuilder().setUserAdd(AuthUserAddRequest.newBuilder().setName("root").setPassword("r")));
        change(AuthRequest.newBuilder().setUserGrantRole(AuthUserGrantRoleRequest.newBuilder().setUser("root")
                .setRole("root")));
        change(AuthRequest.newBuilder().setUserAdd(AuthUserAddRequest.newBuilder().setName("alice").setPassword("a")));
        change(AuthRequest.newBuilder().setEnable(AuthEnableRequest.getDefaultInstance()));
    }

    @AfterEach
    void close() {
        gate.close();
    }

    private void change(AuthRequest.Builder request) {
        gate.store().apply(gate.command(request.build()).join());
    }

    private FullHttpResponse get(String host, String authorization) {
        HttpAccess access = new HttpAccess(gate, Set.of("localhost", "127.0.0.1"), List.of(), null);
        EmbeddedChannel ch = new EmbeddedChannel(new HttpHandler(null, new FaultClock(Clock.SYSTEM), null, null,
                false, access));
        DefaultFullHttpRequest request = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, "/fault/clock");
        request.headers().set(HttpHeaderNames.HOST, host);
        if (authorization != null) {
            request.headers().set(HttpHeaderNames.AUTHORIZATION, authorization);
        }
        ch.writeInbound(request);
        return ch.readOutbound();
    }

    private static String body(FullHttpResponse r) {
        return r.content().toString(StandardCharsets.UTF_8);
    }

    @Test
    @DisplayName("a root token, as Bearer or bare, is served")
    void rootTokenIsServed() {
        String token = gate.applied().token("root", gate.tokens());
        assertEquals(200, get("localhost:7201", "Bearer " + token).status().code());
        assertEquals(200, get("127.0.0.1:7201", token).status().code());
    }

    @Test
    @DisplayName("a non-root token, a forged token and no credentials get 403 saying a root user is needed")
    void othersAreRefused() {
        for (String authorization : new String[] {"Bearer " + gate.applied().token("alice", gate.tokens()), "Bearer v1.forged", null}) {
            FullHttpResponse r = get("localhost", authorization);
            assertEquals(403, r.status().code(), authorization);
            assertTrue(body(r).contains("needs a root user"), body(r));
        }
    }

    @Test
    @DisplayName("a Host outside the allowlist gets 421 naming --http-host-allowlist, even with a root token")
    void foreignHostIsMisdirected() {
        FullHttpResponse r = get("evil.example:7201", "Bearer " + gate.applied().token("root", gate.tokens()));
        assertEquals(421, r.status().code());
        assertTrue(body(r).contains("--http-host-allowlist"), body(r));
        assertEquals(421, get("[::2]:7201", null).status().code());
    }

    @Test
    @DisplayName("Host parsing: ports, brackets and case are ignored; an unbracketed IPv6 address is malformed")
    void hostOf() {
        assertEquals("localhost", HttpAccess.hostOf("LocalHost:80"));
        assertEquals("::1", HttpAccess.hostOf("[::1]:7201"));
        assertEquals("127.0.0.1", HttpAccess.hostOf("127.0.0.1"));
        assertEquals(null, HttpAccess.hostOf("::1:7201"));
    }
}
