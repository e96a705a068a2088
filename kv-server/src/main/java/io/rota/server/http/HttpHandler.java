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

import io.rota.proto.Member;
import io.rota.server.fault.FaultClock;
import io.rota.server.lab.LabController;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * GET /health, /status (JSON), /metrics (Prometheus text). Answers come from {@link NodeReport}, async.
 * The dashboard (docs/dashboard.md): GET / and its two assets, /dashboard/state (JSON) and
 * /dashboard/events (server-sent events). In lab mode only: POST /lab/... (see {@link #lab}).
 * With {@code --unsafe-fault-injection} only: GET and POST /fault/clock (the chaos clock nemesis).
 */
final class HttpHandler extends SimpleChannelInboundHandler<FullHttpRequest> {

    private static final Logger log = LoggerFactory.getLogger(HttpHandler.class);
    private static final String ANY_ORIGIN = "*";

    /** The page and its assets, from the jar: no build step, no CDN. */
    private static final Map<String, NodeReport.Page> ASSETS = Map.of(
            "/", asset("index.html", "text/html"),
            "/dashboard.js", asset("dashboard.js", "text/javascript"),
            "/dashboard.css", asset("dashboard.css", "text/css"));
    /** Sent by the page with every lab request: a cross-origin page cannot send it without our consent. */
    static final String LAB_HEADER = "X-Rota-Lab";

    private final NodeReport report;
    private final FaultClock faultClock;
    private final Dashboard dashboard;
    private final DashboardFeed feed;

    HttpHandler(NodeReport report, FaultClock faultClock) {
        this(report, faultClock, null, null);
    }

    /** @param dashboard this member's dashboard, or null for none (then {@code feed} is null too) */
    HttpHandler(NodeReport report, FaultClock faultClock, Dashboard dashboard, DashboardFeed feed) {
        this.report = report;
        this.faultClock = faultClock;
        this.dashboard = dashboard;
        this.feed = feed;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
        boolean keepAlive = HttpUtil.isKeepAlive(request);
        QueryStringDecoder uri = new QueryStringDecoder(request.uri());
        if ("/fault/clock".equals(uri.path())) {
            send(ctx, keepAlive, faultClock(request.method(), uri));
            return;
        }
        if (uri.path().startsWith("/lab/")) {
            lab(ctx, keepAlive, request, uri);
            return;
        }
        if (dashboard != null && request.method() == HttpMethod.GET && dashboardGet(ctx, keepAlive, uri.path())) {
            return;
        }
        if (request.method() != HttpMethod.GET) {
            send(ctx, keepAlive, new NodeReport.Page(405, "text/plain", "only GET is supported\n"));
            return;
        }
        String path = new QueryStringDecoder(request.uri()).path();
        CompletableFuture<NodeReport.Page> page = switch (path) {
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

    /**
     * LAB MODE ONLY (off unless cluster.sh started the member with ROTA_LAB=1); 404 otherwise.
     * <ul>
     *   <li>POST /lab/member?action=kill|pause|resume|restart&amp;name=NAME — runs {@code cluster.sh ACTION NAME}</li>
     *   <li>POST /lab/partition?on=true|false — cuts (or restores) this member's Raft peer traffic</li>
     *   <li>POST /lab/transfer?to=ID — this member, if it leads, hands leadership to member ID (§3.10)</li>
     * </ul>
     * A request must carry {@value #LAB_HEADER}, and come from a loopback address with a loopback Host
     * (against DNS rebinding); a page of another origin may send it only if that origin is a member's HTTP
     * address (the CORS preflight below), so no other web page can drive the lab.
     */
    private void lab(ChannelHandlerContext ctx, boolean keepAlive, FullHttpRequest request, QueryStringDecoder uri) {
        LabController lab = dashboard == null ? null : dashboard.lab();
        if (lab == null) {
            send(ctx, keepAlive, new NodeReport.Page(404, "text/plain", "lab mode is off: only a local cluster started"
                    + " with ROTA_LAB=1 scripts/cluster.sh start has it\n"));
            return;
        }
        String origin = request.headers().get(HttpHeaderNames.ORIGIN);
        String allowed = origin != null && memberOrigin(origin) ? origin : null;
        if (request.method() == HttpMethod.OPTIONS) {
            FullHttpResponse preflight = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
                    allowed == null ? HttpResponseStatus.FORBIDDEN : HttpResponseStatus.NO_CONTENT);
            if (allowed != null) {
                preflight.headers().set(HttpHeaderNames.ACCESS_CONTROL_ALLOW_ORIGIN, allowed)
                        .set(HttpHeaderNames.ACCESS_CONTROL_ALLOW_METHODS, "POST")
                        .set(HttpHeaderNames.ACCESS_CONTROL_ALLOW_HEADERS, LAB_HEADER)
                        .set(HttpHeaderNames.VARY, "Origin");
            }
            HttpUtil.setContentLength(preflight, 0);
            ctx.writeAndFlush(preflight).addListener(ChannelFutureListener.CLOSE);
            return;
        }
        if (request.method() != HttpMethod.POST || request.headers().get(LAB_HEADER) == null
                || !loopback(ctx, request) || (origin != null && allowed == null)) {
            send(ctx, false, new NodeReport.Page(403, "text/plain", "lab requests are POSTs with the " + LAB_HEADER
                    + " header, from this machine, by the dashboard of a member of this cluster\n"));
            return;
        }
        CompletableFuture<NodeReport.Page> page;
        try {
            page = switch (uri.path()) {
                case "/lab/member" -> {
                    String action = param(uri, "action");
                    String name = param(uri, "name");
                    dashboard.note("lab", "lab: " + action + " " + name + " requested");
                    yield lab.member(action, name).thenApply(r -> new NodeReport.Page(r.exitCode() == 0 ? 200 : 500,
                            "text/plain", r.output()));
                }
                case "/lab/partition" -> {
                    boolean on = Boolean.parseBoolean(param(uri, "on"));
                    lab.partition().cut(on);
                    log.warn("LAB MODE: peer traffic {}", on ? "CUT (partitioned away)" : "restored");
                    dashboard.note("lab", on ? "lab: partitioned away (peer traffic cut)" : "lab: partition healed");
                    yield CompletableFuture.completedFuture(new NodeReport.Page(200, "text/plain",
                            on ? "partitioned: Raft peer traffic to and from this member is dropped\n"
                                    : "healed: peer traffic flows again\n"));
                }
                case "/lab/transfer" -> {
                    long to = longParam(uri, "to", 0);
                    dashboard.note("lab", "lab: leadership transfer to member " + to + " requested");
                    yield report.transferLeadership(to).thenApply(ok -> ok
                            ? new NodeReport.Page(200, "text/plain", "transferring leadership to member " + to + "\n")
                            : new NodeReport.Page(409, "text/plain", "not transferred: this member does not lead,"
                            + " or member " + to + " is not a follower\n"));
                }
                default -> CompletableFuture.completedFuture(new NodeReport.Page(404, "text/plain",
                        "lab: try /lab/member, /lab/partition or /lab/transfer\n"));
            };
        } catch (IllegalArgumentException e) {
            page = CompletableFuture.completedFuture(new NodeReport.Page(400, "text/plain", e.getMessage() + "\n"));
        } catch (IllegalStateException e) {
            page = CompletableFuture.completedFuture(new NodeReport.Page(429, "text/plain", e.getMessage() + "\n"));
        }
        page.whenComplete((p, e) -> send(ctx, keepAlive, e == null ? p
                : new NodeReport.Page(500, "text/plain", "lab action failed: " + e + "\n"), allowed));
    }

    /** The origin of one of this cluster's members' HTTP ports (as published), on a loopback host. */
    private boolean memberOrigin(String origin) {
        for (Member m : dashboard.members().values()) {
            String http = m.getHttpAddress();
            int colon = http.lastIndexOf(':');
            if (!http.isEmpty() && colon > 0) {
                String port = http.substring(colon + 1);
                if (origin.equals("http://127.0.0.1:" + port) || origin.equals("http://localhost:" + port)) {
                    return true;
                }
            }
        }
        return false;
    }

    private static boolean loopback(ChannelHandlerContext ctx, FullHttpRequest request) {
        String host = request.headers().get(HttpHeaderNames.HOST, "");
        return ctx.channel().remoteAddress() instanceof InetSocketAddress a && a.getAddress().isLoopbackAddress()
                && (host.startsWith("127.0.0.1:") || host.startsWith("localhost:") || host.startsWith("[::1]:"));
    }

    private static String param(QueryStringDecoder uri, String name) {
        List<String> values = uri.parameters().get(name);
        if (values == null || values.isEmpty()) {
            throw new IllegalArgumentException("missing parameter " + name);
        }
        return values.get(0);
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

    private static void send(ChannelHandlerContext ctx, boolean keepAlive, NodeReport.Page page) {
        send(ctx, keepAlive, page, null);
    }

    /** @param allowOrigin the Access-Control-Allow-Origin to send, or null for none */
    private static void send(ChannelHandlerContext ctx, boolean keepAlive, NodeReport.Page page, String allowOrigin) {
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
