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

import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;

/** GET /health, /status (JSON), /metrics (Prometheus text). Answers come from {@link NodeReport}, async. */
final class HttpHandler extends SimpleChannelInboundHandler<FullHttpRequest> {

    private final NodeReport report;

    HttpHandler(NodeReport report) {
        this.report = report;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
        boolean keepAlive = HttpUtil.isKeepAlive(request);
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
