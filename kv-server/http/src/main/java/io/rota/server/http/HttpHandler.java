package io.rota.server.http;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.handler.ssl.SslHandler;

import io.rota.server.fault.FaultClock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.net.ssl.SSLPeerUnverifiedException;
import java.net.InetSocketAddress;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * GET /health, /status (JSON), /metrics (Prometheus text). Answers come from {@link NodeReport}, async.
 * The dashboard (docs/dashboard.md): GET / and its two assets, /dashboard/state (JSON) and
 * /dashboard/events (server-sent events). In lab mode only: POST /lab/... ({@link LabEndpoint}).
 * With {@code --unsafe-fault-injection} only: GET and POST /fault/clock (the chaos clock nemesis).
 * Behind HTTPS with client certificates required ({@link HttpServer}), every page but /health and /metrics
 * answers 403 to a caller without a verified client certificate. Every page but those two also needs a Host
 * this member answers to and, with auth enabled, a root caller ({@link HttpAccess}); /fault/clock answers
 * loopback connections only.
 */
final class HttpHandler extends SimpleChannelInboundHandler<FullHttpRequest> {

    private static final Logger log = LoggerFactory.getLogger(HttpHandler.class);

    /** The page and its assets, from the jar: no build step, no CDN. */
    private static final Map<String, NodeReport.Page> ASSETS = Map.of(
            "/", asset("index.html", "text/html"),
            "/dashboard.js", asset("dashboard.js", "text/javascript"),
            "/dashboard.css", asset("dashboard.css", "text/css"));

    private final NodeReport report;
    private final FaultClock faultClock;
    private final Dashboard dashboard;
    private final DashboardFeed feed;
    /** Pages other than /health and /metrics need a verified client certificate (HTTPS, --client-cert-auth). */
    private final boolean clientCertRequired;
    private final HttpAccess access;

    HttpHandler(NodeReport report, FaultClock faultClock) {
        this(report, faultClock, null, null, false, HttpAccess.OPEN);
    }

    /** @param dashboard this member's dashboard, or null for none (then {@code feed} is null too) */
    HttpHandler(NodeReport report, FaultClock faultClock, Dashboard dashboard, DashboardFeed feed,
                boolean clientCertRequired, HttpAccess access) {
        this.access = access;
        this.report = report;
        this.faultClock = faultClock;
        this.dashboard = dashboard;
        this.feed = feed;
        this.clientCertRequired = clientCertRequired;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
        boolean keepAlive = HttpUtil.isKeepAlive(request);
        QueryStringDecoder uri = new QueryStringDecoder(request.uri());
        try {
            uri.path();         // both decode lazily and throw on a bad escape (/%ZZ): answer it, once, here
            uri.parameters();
        } catch (IllegalArgumentException e) {
            send(ctx, keepAlive, new NodeReport.Page(400, "text/plain", "bad request: the URI is not valid"
                    + " percent-encoding (" + e.getMessage() + ")\n"));
            return;
        }
        if ("/health".equals(uri.path()) || "/metrics".equals(uri.path())) {
            route(ctx, keepAlive, request, uri);   // probes and scrapers: open, by pod IP (design SD11)
            return;
        }
        String wrongHost = access.hostRefusal(ctx, request);
        if (wrongHost != null) {
            send(ctx, false, new NodeReport.Page(421, "text/plain", wrongHost));
            return;
        }
        if (clientCertRequired && !hasClientCertificate(ctx)) {
            send(ctx, keepAlive, new NodeReport.Page(403, "text/plain", uri.path() + " needs a client certificate of"
                    + " the cluster's CA (this member requires them: --client-cert-auth); /health and /metrics"
                    + " answer without one. E.g. curl --cacert CA --cert CERT --key KEY https://...\n"));
            return;
        }
        CompletableFuture<HttpAccess.Decision> decision = access.identify(ctx, request, uri.path());
        if (decision.isDone()) {
            decided(ctx, keepAlive, request, uri, decision.join());
            return;
        }
        request.retain();   // a password is checked on the auth worker: answer on this loop when it is done
        decision.whenComplete((d, e) -> ctx.executor().execute(() -> {
            try {
                decided(ctx, keepAlive, request, uri, e == null ? d
                        : new HttpAccess.Decision("the login check failed: " + e + "\n"));
            } finally {
                request.release();
            }
        }));
    }

    private void decided(ChannelHandlerContext ctx, boolean keepAlive, FullHttpRequest request,
                         QueryStringDecoder uri, HttpAccess.Decision decision) {
        if (decision.refusal() != null) {
            send(ctx, keepAlive, new NodeReport.Page(403, "text/plain", decision.refusal()));
            return;
        }
        route(ctx, keepAlive, request, uri);
    }

    private void route(ChannelHandlerContext ctx, boolean keepAlive, FullHttpRequest request, QueryStringDecoder uri) {
        if ("/fault/clock".equals(uri.path())) {
            send(ctx, keepAlive, faultClock == null || loopbackSource(ctx) ? faultClock(request.method(), uri)
                    : new NodeReport.Page(403, "text/plain", "/fault/clock answers only connections from this"
                    + " machine (loopback), like the lab endpoints\n"));
            return;
        }
        if (uri.path().startsWith("/lab/")) {
            LabEndpoint.handle(ctx, keepAlive, request, uri, dashboard, report);
            return;
        }
        if (dashboard != null && request.method() == HttpMethod.GET && dashboardGet(ctx, keepAlive, request, uri.path())) {
            return;
        }
        if (request.method() != HttpMethod.GET) {
            send(ctx, keepAlive, new NodeReport.Page(405, "text/plain", "only GET is supported\n"));
            return;
        }
        CompletableFuture<NodeReport.Page> page = switch (uri.path()) {
            case "/health" -> report.health();
            case "/status" -> report.status();
            case "/metrics" -> report.metrics();
            default -> CompletableFuture.completedFuture(new NodeReport.Page(404, "text/plain",
                    "not found; try /health, /status or /metrics" + (dashboard == null ? "" : ", or / (the dashboard)")
                            + "\n"));
        };
        page.whenComplete((p, e) -> send(ctx, keepAlive, e == null ? p
                : new NodeReport.Page(503, "text/plain", "unavailable: " + e.getMessage() + "\n")));
    }

    /** A loopback connection, or an in-process one (no IP address: an embedded or local channel). */
    private static boolean loopbackSource(ChannelHandlerContext ctx) {
        return !(ctx.channel().remoteAddress() instanceof InetSocketAddress a)
                || (a.getAddress() != null && a.getAddress().isLoopbackAddress());
    }

    /** Whether the TLS handshake verified a client certificate (the SslHandler asked for one, OPTIONAL). */
    private static boolean hasClientCertificate(ChannelHandlerContext ctx) {
        SslHandler tls = ctx.pipeline().get(SslHandler.class);
        try {
            return tls != null && tls.engine().getSession().getPeerCertificates().length > 0;
        } catch (SSLPeerUnverifiedException none) {
            return false;
        }
    }

    /** The dashboard's GETs; false if {@code path} is none of them. */
    private boolean dashboardGet(ChannelHandlerContext ctx, boolean keepAlive, FullHttpRequest request, String path) {
        NodeReport.Page asset = ASSETS.get("/index.html".equals(path) ? "/" : path);
        if (asset != null) {
            send(ctx, keepAlive, asset);
        } else if ("/dashboard/state".equals(path)) {
            String origin = access.allowedOrigin(request);
            dashboard.state(256, ctx.executor()).whenComplete((json, e) -> send(ctx, keepAlive, e == null
                    ? new NodeReport.Page(200, "application/json", json + "\n")
                    : new NodeReport.Page(503, "text/plain", "unavailable: " + e.getMessage() + "\n"), origin));
        } else if ("/dashboard/events".equals(path)) {
            String origin = access.allowedOrigin(request);
            String full = feed.subscribe(ctx.channel(), origin);
            if (full != null) {
                send(ctx, false, new NodeReport.Page(503, "text/plain", full), origin);
            }
        } else {
            return false;
        }
        return true;
    }

    /** GET reads the clock faults; POST sets them: {@code ?wall-offset-ms=N&mono-rate-ppm=N} (absolute). */
    private NodeReport.Page faultClock(HttpMethod method, QueryStringDecoder uri) {
        if (faultClock == null) {
            return new NodeReport.Page(404, "text/plain",
                    "fault injection is off; start the member with --unsafe-fault-injection (chaos tests only)\n");
        }
        if (method == HttpMethod.POST) {
            try {
                long offset = longParam(uri, "wall-offset-ms", faultClock.wallOffsetMs());
                long rate = longParam(uri, "mono-rate-ppm", faultClock.ratePpm());
                faultClock.set(offset, rate);
                log.warn("FAULT INJECTION: wall clock offset now {} ms, monotonic rate error {} ppm", offset, rate);
            } catch (IllegalArgumentException e) {
                return new NodeReport.Page(400, "text/plain", e.getMessage() + "\n");
            }
        } else if (method != HttpMethod.GET) {
            return new NodeReport.Page(405, "text/plain", "GET or POST /fault/clock\n");
        }
        return new NodeReport.Page(200, "application/json", "{\"wallOffsetMs\":" + faultClock.wallOffsetMs()
                + ",\"monoRatePpm\":" + faultClock.ratePpm() + "}\n");
    }

    private static long longParam(QueryStringDecoder uri, String name, long absent) {
        List<String> values = uri.parameters().get(name);
        if (values == null || values.isEmpty()) {
            return absent;
        }
        try {
            return Long.parseLong(values.get(0));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be a whole number, got '" + values.get(0) + "'");
        }
    }

    static void send(ChannelHandlerContext ctx, boolean keepAlive, NodeReport.Page page) {
        send(ctx, keepAlive, page, null);
    }

    /** @param allowOrigin the Access-Control-Allow-Origin to send, or null for none */
    static void send(ChannelHandlerContext ctx, boolean keepAlive, NodeReport.Page page, String allowOrigin) {
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
                HttpResponseStatus.valueOf(page.status()),
                Unpooled.copiedBuffer(page.body(), StandardCharsets.UTF_8));
        response.headers().set(HttpHeaderNames.CONTENT_TYPE, page.contentType() + "; charset=utf-8");
        HttpUtil.setContentLength(response, response.content().readableBytes());
        HttpUtil.setKeepAlive(response, keepAlive);
        if (allowOrigin != null) {
            response.headers().set(HttpHeaderNames.ACCESS_CONTROL_ALLOW_ORIGIN, allowOrigin)
                    .set(HttpHeaderNames.VARY, "Origin");
        }
        var written = ctx.writeAndFlush(response);
        if (!keepAlive) {
            written.addListener(ChannelFutureListener.CLOSE);
        }
    }

    private static NodeReport.Page asset(String file, String contentType) {
        try (InputStream in = HttpHandler.class.getResourceAsStream("/dashboard/" + file)) {
            if (in == null) {
                throw new IllegalStateException("the jar lacks dashboard/" + file);
            }
            return new NodeReport.Page(200, contentType, new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close();
    }
}
