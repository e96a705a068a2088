package io.rota.server.api;

import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.ChannelPromise;
import io.netty.util.concurrent.ScheduledFuture;
import io.rota.raft.transport.LogLimiter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.TimeUnit;

/**
 * Back-pressure on a client connection's answers (issue 33, item 4): a client that sends requests but never
 * reads the answers must not make this member buffer them without limit. First in the pipeline, nearest the
 * socket. When the connection's unsent bytes pass the write buffer's high-water mark
 * ({@link ClientServer#WRITE_BUFFER_HIGH_BYTES}) Netty marks it unwritable and this handler stops reading its
 * requests (autoRead off) until the bytes drain below the low mark; the answers of calls already in flight
 * are still written. A connection paused for longer than {@link ConnectionLimits#unwritableTimeout()}, or
 * whose unsent bytes pass {@link ConnectionLimits#maxPendingBytes()} anyway (large answers of calls in
 * flight), is closed with a rate-limited log line. Watches are not this handler's business: a
 * {@code WatchStream} writes only while the connection is writable, and its own queue bounds a slow watcher.
 * One per channel.
 */
final class ClientBackPressure extends ChannelDuplexHandler {

    private static final Logger log = LoggerFactory.getLogger(ClientBackPressure.class);
    /** Any client can cause these lines at will: bounded. */
    private static final LogLimiter closes = new LogLimiter(log, 5);

    private final long maxPendingBytes;
    private final long unwritableTimeoutMillis;
    private ScheduledFuture<?> pausedTooLong;

    ClientBackPressure(ConnectionLimits limits) {
        this.maxPendingBytes = limits.maxPendingBytes();
        this.unwritableTimeoutMillis = limits.unwritableTimeout().toMillis();
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (ctx.channel().isWritable()) {
            cancelTimer();
            ctx.channel().config().setAutoRead(true);   // reads again at once (Netty asks for a read)
        } else {
            ctx.channel().config().setAutoRead(false);
            if (pausedTooLong == null) {
                pausedTooLong = ctx.executor().schedule(() -> {
                    closes.warn("Closing client connection {}: it has not read its answers for {} ms ({} bytes"
                            + " unsent; --client-unwritable-timeout)", ctx.channel().remoteAddress(),
                            unwritableTimeoutMillis, pendingBytes(ctx));
                    ctx.close();
                }, unwritableTimeoutMillis, TimeUnit.MILLISECONDS);
            }
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        ctx.write(msg, promise);
        long pending = pendingBytes(ctx);
        if (pending > maxPendingBytes && ctx.channel().isOpen()) {
            closes.warn("Closing client connection {}: {} bytes of answers unsent, over --max-client-pending-bytes"
                    + " ({}); the client does not read them", ctx.channel().remoteAddress(), pending, maxPendingBytes);
            ctx.close();
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        cancelTimer();
        ctx.fireChannelInactive();
    }

    /** Bytes written to the channel and not yet taken by the socket. */
    static long pendingBytes(ChannelHandlerContext ctx) {
        ChannelOutboundBuffer buffer = ctx.channel().unsafe().outboundBuffer();
        return buffer == null ? 0 : buffer.totalPendingWriteBytes();
    }

    private void cancelTimer() {
        if (pausedTooLong != null) {
            pausedTooLong.cancel(false);
            pausedTooLong = null;
        }
    }
}
