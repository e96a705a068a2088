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

import io.rota.server.fault.FaultClock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * GET /health, /status (JSON), /metrics (Prometheus text). Answers come from {@link NodeReport}, async.
 * With {@code --unsafe-fault-injection} only: GET and POST /fault/clock (the chaos clock nemesis).
 */
final class HttpHandler extends SimpleChannelInboundHandler<FullHttpRequest> {

    private static final Logger log = LoggerFactory.getLogger(HttpHandler.class);

    private final NodeReport report;
    private final FaultClock faultClock;

    HttpHandler(NodeReport report, FaultClock faultClock) {
        this.report = report;
        this.faultClock = faultClock;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
        boolean keepAlive = HttpUtil.isKeepAlive(request);
        QueryStringDecoder uri = new QueryStringDecoder(request.uri());
        if ("/fault/clock".equals(uri.path())) {
            send(ctx, keepAlive, faultClock(request.method(), uri));
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
                    "not found; try /health, /status or /metrics\n"));
        };
        page.whenComplete((p, e) -> send(ctx, keepAlive, e == null ? p
                : new NodeReport.Page(503, "text/plain", "unavailable: " + e.getMessage() + "\n")));
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
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
                HttpResponseStatus.valueOf(page.status()),
                Unpooled.copiedBuffer(page.body(), StandardCharsets.UTF_8));
        response.headers().set(HttpHeaderNames.CONTENT_TYPE, page.contentType() + "; charset=utf-8");
        HttpUtil.setContentLength(response, response.content().readableBytes());
        HttpUtil.setKeepAlive(response, keepAlive);
        var written = ctx.writeAndFlush(response);
        if (!keepAlive) {
            written.addListener(ChannelFutureListener.CLOSE);
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close();
    }
}
