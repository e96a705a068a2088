package io.rota.server.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ScheduledFuture;

import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * GET /dashboard/events: this member's {@link Dashboard} document as server-sent events, {@link #PERIOD_MS}
 * apart. One document is built per period, only while someone listens, and the same bytes go to every
 * listener. Bounded: at most {@link #MAX_SUBSCRIBERS} streams; a listener whose socket is not draining
 * (Netty's write buffer above its high-water mark) misses frames instead of growing the buffer.
 */
final class DashboardFeed implements AutoCloseable {

    static final int MAX_SUBSCRIBERS = 16;
    static final long PERIOD_MS = 250;
    /** Timeline events per frame: more than a member makes in a period; the page merges by sequence. */
    static final int EVENTS_PER_FRAME = 16;

    private final Dashboard dashboard;
    private final EventExecutor executor;
    private final Set<Channel> subscribers = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean building = new AtomicBoolean();
    private final ScheduledFuture<?> task;

    DashboardFeed(Dashboard dashboard, EventExecutor executor) {
        this.dashboard = dashboard;
        this.executor = executor;
        task = executor.scheduleWithFixedDelay(this::tick, PERIOD_MS, PERIOD_MS, TimeUnit.MILLISECONDS);
    }

    /** Starts an event stream on {@code ch}; false (and nothing written) if the feed is full. */
    boolean subscribe(Channel ch) {
        if (subscribers.size() >= MAX_SUBSCRIBERS) {
            return false;
        }
        subscribers.add(ch);
        ch.closeFuture().addListener(f -> subscribers.remove(ch));
        HttpResponse response = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
        response.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/event-stream; charset=utf-8")
                .set(HttpHeaderNames.CACHE_CONTROL, "no-cache")
                .set(HttpHeaderNames.ACCESS_CONTROL_ALLOW_ORIGIN, "*");
        HttpUtil.setTransferEncodingChunked(response, true);
        ch.write(response);
        // Reconnect a second after the stream breaks (a restarted member, say).
        ch.writeAndFlush(new DefaultHttpContent(Unpooled.copiedBuffer("retry: 1000\n\n", StandardCharsets.UTF_8)));
        return true;
    }

    int subscribers() {
        return subscribers.size();
    }

    private void tick() {
        if (subscribers.isEmpty() || !building.compareAndSet(false, true)) {
            return;
        }
        dashboard.state(EVENTS_PER_FRAME, executor).whenComplete((json, e) -> {
            building.set(false);
            if (e == null) {
                broadcast("data: " + json + "\n\n");
            }
        });
    }

    private void broadcast(String frame) {
        ByteBuf bytes = Unpooled.copiedBuffer(frame, StandardCharsets.UTF_8);
        try {
            for (Channel ch : subscribers) {
                if (ch.isActive() && ch.isWritable()) {
                    ch.writeAndFlush(new DefaultHttpContent(bytes.retainedDuplicate()));
                }
            }
        } finally {
            bytes.release();
        }
    }

    @Override
    public void close() {
        task.cancel(false);
        subscribers.forEach(Channel::close);
    }
}
