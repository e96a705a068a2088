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
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * GET /dashboard/events: this member's {@link Dashboard} document as server-sent events, {@link #PERIOD_MS}
 * apart. One document is built per period, only while someone listens, and the same bytes go to every
 * listener. Bounded: at most {@link #MAX_SUBSCRIBERS} streams, at most {@link #MAX_PER_SOURCE} from one
 * source address (so one machine's idle connections cannot lock everyone else out, design SD12); a listener
 * whose socket is not draining (Netty's write buffer above its high-water mark) misses frames instead of
 * growing the buffer, and the port's write timeout ({@link HttpServer#WRITE_TIMEOUT_SECONDS}) closes it.
 */
final class DashboardFeed implements AutoCloseable {

    static final int MAX_SUBSCRIBERS = 16;
    /** A dashboard opens one stream per member; a few tabs of one operator fit. */
    static final int MAX_PER_SOURCE = 4;
    static final long PERIOD_MS = 250;
    /** Timeline events per frame: more than a member makes in a period; the page merges by sequence. */
    static final int EVENTS_PER_FRAME = 16;

    private final Dashboard dashboard;
    private final EventExecutor executor;
    /** Each stream's source address; guarded by itself for the caps' check-then-add. */
    private final Map<Channel, Object> subscribers = new ConcurrentHashMap<>();
    private static final Object NO_ADDRESS = new Object();
    private final AtomicBoolean building = new AtomicBoolean();
    private final ScheduledFuture<?> task;

    DashboardFeed(Dashboard dashboard, EventExecutor executor) {
        this.dashboard = dashboard;
        this.executor = executor;
        task = executor.scheduleWithFixedDelay(this::tick, PERIOD_MS, PERIOD_MS, TimeUnit.MILLISECONDS);
    }

    /**
     * Starts an event stream on {@code ch} (called on its event loop), answering with {@code allowOrigin} as
     * Access-Control-Allow-Origin unless null. Returns why not (and writes nothing) if the feed is full, or
     * this source address already holds {@link #MAX_PER_SOURCE} streams; null when started.
     */
    String subscribe(Channel ch, String allowOrigin) {
        InetAddress source = ch.remoteAddress() instanceof InetSocketAddress a ? a.getAddress() : null;
        synchronized (subscribers) {
            if (subscribers.size() >= MAX_SUBSCRIBERS) {
                return "too many dashboards are open on this member (" + MAX_SUBSCRIBERS + "); close one or open"
                        + " another member's\n";
            }
            if (subscribers.values().stream().filter(s -> Objects.equals(s, source)).count() >= MAX_PER_SOURCE) {
                return "this address already has " + MAX_PER_SOURCE + " event streams open on this member; close"
                        + " one first\n";
            }
            subscribers.put(ch, source == null ? NO_ADDRESS : source);
        }
        ch.closeFuture().addListener(f -> {
            synchronized (subscribers) {
                subscribers.remove(ch);
            }
        });
        HttpResponse response = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
        response.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/event-stream; charset=utf-8")
                .set(HttpHeaderNames.CACHE_CONTROL, "no-cache");
        if (allowOrigin != null) {
            response.headers().set(HttpHeaderNames.ACCESS_CONTROL_ALLOW_ORIGIN, allowOrigin)
                    .set(HttpHeaderNames.VARY, "Origin");
        }
        HttpUtil.setTransferEncodingChunked(response, true);
        ch.write(response);
        // Reconnect a second after the stream breaks (a restarted member, say).
        ch.writeAndFlush(new DefaultHttpContent(Unpooled.copiedBuffer("retry: 1000\n\n", StandardCharsets.UTF_8)));
        return null;
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
            for (Channel ch : subscribers.keySet()) {
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
        subscribers.keySet().forEach(Channel::close);
    }
}
