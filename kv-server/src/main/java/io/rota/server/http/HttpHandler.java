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
 * answers 403 to a caller without a verified client certificate.
 */
final class HttpHandler extends SimpleChannelInboundHandler<FullHttpRequest> {

    private static final Logger log = LoggerFactory.getLogger(HttpHandler.class);
    private static final String ANY_ORIGIN = "*";

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

    HttpHandler(NodeReport report, FaultClock faultClock) {
        this(report, faultClock, null, null, false);
    }

    /** @param dashboard this member's dashboard, or null for none (then {@code feed} is null too) */
    HttpHandler(NodeReport report, FaultClock faultClock, Dashboard dashboard, DashboardFeed feed,
                boolean clientCertRequired) {
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
        if (clientCertRequired && !"/health".equals(uri.path()) && !"/metrics".equals(uri.path())
                && !hasClientCertificate(ctx)) {
            send(ctx, keepAlive, new NodeReport.Page(403, "text/plain", uri.path() + " needs a client certificate of"
                    + " the cluster's CA (this member requires them: --client-cert-auth); /health and /metrics"
                    + " answer without one. E.g. curl --cacert CA --cert CERT --key KEY https://...\n"));
            return;
        }
        if ("/fault/clock".equals(uri.path())) {
            send(ctx, keepAlive, faultClock(request.method(), uri));
            return;
        }
        if (uri.path().startsWith("/lab/")) {
            LabEndpoint.handle(ctx, keepAlive, request, uri, dashboard, report);
            return;
        }
        if (dashboard != null && request.method() == HttpMethod.GET && dashboardGet(ctx, keepAlive, uri.path())) {
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
    private boolean dashboardGet(ChannelHandlerContext ctx, boolean keepAlive, String path) {
        NodeReport.Page asset = ASSETS.get("/index.html".equals(path) ? "/" : path);
        if (asset != null) {
            send(ctx, keepAlive, asset);
        } else if ("/dashboard/state".equals(path)) {
            dashboard.state(256, ctx.executor()).whenComplete((json, e) -> send(ctx, keepAlive, e == null
                    ? new NodeReport.Page(200, "application/json", json + "\n")
                    : new NodeReport.Page(503, "text/plain", "unavailable: " + e.getMessage() + "\n"), ANY_ORIGIN));
        } else if ("/dashboard/events".equals(path)) {
            if (!feed.subscribe(ctx.channel())) {
                send(ctx, false, new NodeReport.Page(503, "text/plain", "too many dashboards are open on this member ("
                        + DashboardFeed.MAX_SUBSCRIBERS + "); close one or open another member's\n"), ANY_ORIGIN);
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
            response.headers().set(HttpHeaderNames.ACCESS_CONTROL_ALLOW_ORIGIN, allowOrigin);
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
