package io.rota.server.http;

import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.AttributeKey;
import io.rota.proto.Member;
import io.rota.proto.facts.HostPort;
import io.rota.raft.transport.LogLimiter;
import io.rota.raft.transport.TlsContexts;
import io.rota.server.auth.AuthException;
import io.rota.server.authgate.AuthGate;
import io.rota.server.auth.AuthState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.net.ssl.SSLPeerUnverifiedException;
import java.nio.charset.StandardCharsets;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.Base64;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * The HTTP port's access rules beyond /health and /metrics (design SD10–SD12): the Host header must name this
 * member (against DNS rebinding), and with auth enabled the caller must be root — by a verified client
 * certificate whose CN is a root user, an {@code Authorization} header with a root user's Rota token, or HTTP
 * Basic with a root user's password. Also decides which browser origins may read the dashboard's data.
 */
final class HttpAccess {

    private static final Logger log = LoggerFactory.getLogger(HttpAccess.class);
    /** Anyone may cause refusals: their log lines are bounded. */
    private static final LogLimiter refusals = new LogLimiter(log, 10);
    /** The user a connection's Basic credentials named, and under which auth state: bcrypt once per connection. */
    private static final AttributeKey<Login> LOGIN = AttributeKey.valueOf("rota.http.login");

    /** What {@link #identify} found: a refusal (null if allowed). */
    record Decision(String refusal) {
        static final Decision ALLOW = new Decision(null);
        static final CompletableFuture<Decision> ALLOWED = CompletableFuture.completedFuture(ALLOW);
    }

    private record Login(String header, AuthState state, String user) {
    }

    /** Open: no auth gate, no Host check, no extra origins (the unit tests' handler). */
    static final HttpAccess OPEN = new HttpAccess(null, null, List.of(), null);

    private final AuthGate gate;
    private final Set<String> hosts;
    private final List<String> corsOrigins;
    private final Dashboard dashboard;

    /**
     * @param gate        the client port's auth gate (its state says whether auth is on), or null for none
     * @param hosts       the Host names accepted ({@link HttpPolicy#hosts}), or null for any
     * @param corsOrigins origins besides the members' own that may read the dashboard's data
     * @param dashboard   the dashboard (its member list gives the members' origins), or null
     */
    HttpAccess(AuthGate gate, Set<String> hosts, List<String> corsOrigins, Dashboard dashboard) {
        this.gate = gate;
        this.hosts = hosts;
        this.corsOrigins = List.copyOf(corsOrigins);
        this.dashboard = dashboard;
    }

    /** Why this request's Host header is refused (a name this member is not known by), or null. */
    String hostRefusal(ChannelHandlerContext ctx, FullHttpRequest request) {
        if (hosts == null) {
            return null;
        }
        String header = request.headers().get(HttpHeaderNames.HOST);
        String host = header == null ? null : hostOf(header);
        if (host != null && hosts.contains(host)) {
            return null;
        }
        refusals.info("HTTP {}: refused Host '{}' (not in --http-host-allowlist)", ctx.channel().remoteAddress(),
                header == null ? "" : sanitize(header));
        return "this member does not answer to Host '" + (header == null ? "" : sanitize(header)) + "' (a DNS"
                + " rebinding defence): it answers to " + hosts + "; add the name with --http-host-allowlist"
                + " (or '*' to turn the check off)\n";
    }

    /** The host part of a Host header, lower case and without brackets; null if it is malformed. */
    static String hostOf(String header) {
        String h = header.strip();
        if (h.startsWith("[")) {
            int close = h.indexOf(']');
            return close < 0 ? null : HttpPolicy.bare(h.substring(0, close + 1));
        }
        int colon = h.indexOf(':');
        if (colon >= 0 && h.indexOf(':', colon + 1) >= 0) {
            return null;   // an IPv6 address must be bracketed
        }
        return HttpPolicy.bare(colon < 0 ? h : h.substring(0, colon));
    }

    /**
     * Whether the caller may see {@code path}: allowed when auth is off; otherwise only a root identity, checked
     * without blocking the event loop (a password is verified with bcrypt on the auth worker).
     */
    CompletableFuture<Decision> identify(ChannelHandlerContext ctx, FullHttpRequest request, String path) {
        if (gate == null || !gate.enabled()) {
            return Decision.ALLOWED;
        }
        AuthState s = gate.applied();
        String header = request.headers().get(HttpHeaderNames.AUTHORIZATION);
        if (header != null) {
            header = header.strip();
            if (header.regionMatches(true, 0, "Basic ", 0, 6)) {
                return basic(ctx, header, path, s);
            }
            String token = header.regionMatches(true, 0, "Bearer ", 0, 7) ? header.substring(7).strip() : header;
            String user = s.userOf(token, gate.tokens());
            if (user == null) {
                return refuse(ctx, path, "the token in the Authorization header is refused: "
                        + s.whyInvalid(token, gate.tokens()) + "; log in again");
            }
            return CompletableFuture.completedFuture(root(ctx, s, user, path, "token"));
        }
        String cn = commonName(ctx);
        if (cn != null && s.isRoot(cn)) {
            return Decision.ALLOWED;
        }
        return refuse(ctx, path, cn == null ? "the request names no user"
                : "the client certificate's CN '" + sanitize(cn) + "' is not a root user");
    }

    private CompletableFuture<Decision> basic(ChannelHandlerContext ctx, String header, String path, AuthState s) {
        Login cached = ctx.channel().attr(LOGIN).get();
        if (cached != null && cached.header().equals(header) && cached.state() == s) {
            return CompletableFuture.completedFuture(root(ctx, s, cached.user(), path, "password"));
        }
        String decoded;
        try {
            decoded = new String(Base64.getDecoder().decode(header.substring(6).strip()), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return refuse(ctx, path, "the Basic credentials are not valid base64");
        }
        int colon = decoded.indexOf(':');
        if (colon < 0) {
            return refuse(ctx, path, "the Basic credentials are not user:password");
        }
        String user = decoded.substring(0, colon);
        return gate.authenticate(user, decoded.substring(colon + 1), "http " + ctx.channel().remoteAddress())
                .handle((answer, e) -> {
                    if (e != null) {
                        Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
                        String why = cause instanceof AuthException a ? a.error().getMessage() : cause.toString();
                        return refused(ctx, path, why);
                    }
                    AuthState now = gate.applied();
                    ctx.channel().attr(LOGIN).set(new Login(header, now, user));
                    return root(ctx, now, user, path, "password");
                });
    }

    private Decision root(ChannelHandlerContext ctx, AuthState s, String user, String path, String how) {
        return s.isRoot(user) ? Decision.ALLOW
                : refused(ctx, path, "user '" + sanitize(user) + "' (by " + how + ") is not root");
    }

    private CompletableFuture<Decision> refuse(ChannelHandlerContext ctx, String path, String why) {
        return CompletableFuture.completedFuture(refused(ctx, path, why));
    }

    private Decision refused(ChannelHandlerContext ctx, String path, String why) {
        refusals.info("HTTP {}: refused {}: {}", ctx.channel().remoteAddress(), path, why);
        return new Decision("auth is enabled: " + path + " needs a root user (" + why + "). Present a client"
                + " certificate whose CN is a root user, a root user's token (Authorization: Bearer TOKEN), or"
                + " HTTP Basic (curl -u root:PASSWORD); /health and /metrics answer anyone\n");
    }

    /** The verified client certificate's CN, or null (no TLS, no certificate). */
    static String commonName(ChannelHandlerContext ctx) {
        SslHandler tls = ctx.pipeline().get(SslHandler.class);
        if (tls == null) {
            return null;
        }
        try {
            Certificate[] chain = tls.engine().getSession().getPeerCertificates();
            return chain.length == 0 ? null : TlsContexts.commonName((X509Certificate) chain[0]);
        } catch (SSLPeerUnverifiedException none) {
            return null;
        }
    }

    /**
     * The Access-Control-Allow-Origin to answer a data request with: its Origin if that is a member of this
     * cluster's HTTP address (the dashboard reads every member's state) or listed in --http-cors-origin; else
     * null, and a browser keeps the answer from the page.
     */
    String allowedOrigin(FullHttpRequest request) {
        String origin = request.headers().get(HttpHeaderNames.ORIGIN);
        if (origin == null) {
            return null;
        }
        if (corsOrigins.contains(origin)) {
            return origin;
        }
        if (dashboard != null) {
            for (Member m : dashboard.members().values()) {
                if (HostPort.isValid(m.getHttpAddress())
                        && (origin.equals("http://" + m.getHttpAddress()) || origin.equals("https://" + m.getHttpAddress())
                        || loopbackOrigin(origin, HostPort.parse("http address", m.getHttpAddress()).port()))) {
                    return origin;
                }
            }
        }
        return null;
    }

    private static boolean loopbackOrigin(String origin, int port) {
        for (String scheme : List.of("http://", "https://")) {
            for (String host : List.of("127.0.0.1", "localhost", "[::1]")) {
                if (origin.equals(scheme + host + ":" + port)) {
                    return true;
                }
            }
        }
        return false;
    }

    /** A client's string as a log line or answer may carry it: no line breaks or control characters. */
    private static String sanitize(String s) {
        StringBuilder out = new StringBuilder(Math.min(s.length(), 128));
        for (int i = 0; i < s.length() && i < 128; i++) {
            char c = s.charAt(i);
            out.append(Character.isISOControl(c) ? '?' : c);
        }
        return out.toString();
    }
}
