package io.rota.server.http;

import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
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
import io.rota.proto.facts.HostPort;
import io.rota.server.lab.LabController;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/** The dashboard's lab buttons on the HTTP port: POST /lab/... (docs/dashboard.md#lab-mode). */
final class LabEndpoint {

    private static final Logger log = LoggerFactory.getLogger(LabEndpoint.class);
    /** Sent by the page with every lab request: a cross-origin page cannot send it without our consent. */
    static final String HEADER = "X-Rota-Lab";

    private LabEndpoint() {
    }

    /**
     * LAB MODE ONLY (off unless cluster.sh started the member with ROTA_LAB=1); 404 otherwise.
     * <ul>
     *   <li>POST /lab/member?action=kill|pause|resume|restart&amp;name=NAME — runs
     *       {@code cluster.sh ACTION NAME}</li>
     *   <li>POST /lab/partition?on=true|false — cuts (or restores) this member's Raft peer traffic</li>
     *   <li>POST /lab/transfer?to=ID — this member, if it leads, hands leadership to member ID (§3.10)</li>
     * </ul>
     * A request must carry {@value #HEADER}, and come from a loopback address with a loopback Host
     * (against DNS rebinding); a page of another origin may send it only if that origin is a member's HTTP
     * address (the CORS preflight below), so no other web page can drive the lab.
     */
    static void handle(ChannelHandlerContext ctx, boolean keepAlive, FullHttpRequest request, QueryStringDecoder uri,
                       Dashboard dashboard, NodeReport report) {
        LabController lab = dashboard == null ? null : dashboard.lab();
        if (lab == null) {
            HttpHandler.send(ctx, keepAlive, new NodeReport.Page(404, "text/plain",
                    "lab mode is off: only a local cluster started with ROTA_LAB=1 scripts/cluster.sh start has it\n"));
            return;
        }
        String origin = request.headers().get(HttpHeaderNames.ORIGIN);
        String allowed = origin != null && memberOrigin(dashboard, origin) ? origin : null;
        if (request.method() == HttpMethod.OPTIONS) {
            FullHttpResponse preflight = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
                    allowed == null ? HttpResponseStatus.FORBIDDEN : HttpResponseStatus.NO_CONTENT);
            if (allowed != null) {
                preflight.headers().set(HttpHeaderNames.ACCESS_CONTROL_ALLOW_ORIGIN, allowed)
                        .set(HttpHeaderNames.ACCESS_CONTROL_ALLOW_METHODS, "POST")
                        .set(HttpHeaderNames.ACCESS_CONTROL_ALLOW_HEADERS, HEADER)
                        .set(HttpHeaderNames.VARY, "Origin");
            }
            HttpUtil.setContentLength(preflight, 0);
            HttpUtil.setKeepAlive(preflight, false);   // say so: a client must not reuse what we close
            ctx.writeAndFlush(preflight).addListener(ChannelFutureListener.CLOSE);
            return;
        }
        if (request.method() != HttpMethod.POST || request.headers().get(HEADER) == null
                || !loopback(ctx, request) || (origin != null && allowed == null)) {
            HttpHandler.send(ctx, false, new NodeReport.Page(403, "text/plain", "lab requests are POSTs with the "
                    + HEADER + " header, from this machine, by the dashboard of a member of this cluster\n"));
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
                    long to = Long.parseLong(param(uri, "to"));
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
        page.whenComplete((p, e) -> HttpHandler.send(ctx, keepAlive, e == null ? p
                : new NodeReport.Page(500, "text/plain", "lab action failed: " + e + "\n"), allowed));
    }

    /** The origin of one of this cluster's members' HTTP ports (as published), on a loopback host. */
    private static boolean memberOrigin(Dashboard dashboard, String origin) {
        for (Member m : dashboard.members().values()) {
            if (HostPort.isValid(m.getHttpAddress())) {   // apply refuses others; an old log may hold one
                int port = HostPort.parse("http address", m.getHttpAddress()).port();
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
}
