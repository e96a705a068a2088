package io.rota.server.api;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.timeout.IdleStateEvent;
import io.rota.proto.Error;
import io.rota.proto.Frame;
import io.rota.raft.transport.LogLimiter;
import io.rota.server.authgate.AuthGate;
import io.rota.server.auth.AuthState;
import io.rota.server.watch.WatchAuth;
import io.rota.server.watch.WatchHub;
import io.rota.server.watch.WatchStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;

/**
 * One client connection (a new handler per channel). Calls are multiplexed by call id: each request is
 * handed to the {@link RequestRouter} and answered whenever its future completes, in any order; a typed
 * error answers only its own call. Watch requests go to the connection's {@link WatchStream}. A frame
 * that does not parse closes this connection only; a frame over the size limit is answered with
 * REQUEST_TOO_LARGE, then the connection is closed (the rest of the stream cannot be trusted).
 *
 * <p>While auth is enabled, every frame first passes the {@link AuthGate} (its user named by the frame's
 * token or the connection's TLS client certificate); Authenticate is answered here, since its failure
 * limiter counts per connection.
 *
 * <p>A connection silent both ways for the idle timeout (an {@link IdleStateEvent}) is closed when it has no
 * call in flight and no watch (issue 33: a forgotten socket is not held for ever); the SDK dials again on its
 * next call, and a client holding a lease sends keep-alives, which are calls.
 */
final class ClientHandler extends SimpleChannelInboundHandler<Frame> {

    private static final Logger log = LoggerFactory.getLogger(ClientHandler.class);
    /** Any client can cause these lines at will (a reconnect loop of bad frames): bounded. */
    private static final LogLimiter badFrames = new LogLimiter(log, 5);
    private static final LogLimiter idle = new LogLimiter(log, 5);

    private final RequestRouter router;
    /** Null only in pipeline tests without a router. */
    private final AuthGate gate;
    private final WatchHub watchHub;
    private final ServerMetrics metrics;
    private final int maxCallsInFlight;
    private WatchStream watches;
    private int callsInFlight;

    ClientHandler(RequestRouter router, WatchHub watchHub, ServerMetrics metrics, int maxCallsInFlight) {
        this.router = router;
        this.gate = router == null ? null : router.gate();
        this.watchHub = watchHub;
        this.metrics = metrics;
        this.maxCallsInFlight = maxCallsInFlight;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        metrics.connections.increment();
        watches = watchHub.open(ctx.channel());
        ctx.fireChannelActive();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        metrics.connections.decrement();
        watches.close();
        ctx.fireChannelInactive();
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (ctx.channel().isWritable()) {
            watches.drain();
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof IdleStateEvent) {
            if (callsInFlight == 0 && watches.isEmpty()) {
                idle.info("Closing client connection {}: idle (no call, no watch) for --client-idle-timeout",
                        ctx.channel().remoteAddress());
                ctx.close();
            }
            return;
        }
        super.userEventTriggered(ctx, evt);
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, Frame frame) {
        String user = null;
        AuthState seen = gate == null ? null : gate.applied();
        Frame asked = frame;
        if (seen != null && seen.enabled()) {   // auth disabled: this volatile read is all auth costs a request
            AuthGate.Verdict verdict = gate.check(frame, ctx.channel().attr(ClientTls.COMMON_NAME).get(),
                    ctx.channel().remoteAddress());
            if (verdict.error() != null) {
                ctx.writeAndFlush(Frames.error(frame.getCallId(), verdict.error()));
                return;
            }
            frame = verdict.frame();
            user = verdict.user();
        }
        if (frame.hasAuthRequest() && frame.getAuthRequest().hasAuthenticate()) {
            authenticate(ctx, frame);
            return;
        }
        if (frame.hasWatchRequest()) {
            watches.handle(frame.getCallId(), frame.getWatchRequest(), WatchAuth.of(user, seen));
            return;
        }
        if (frame.hasSnapshotRequest()) {
            // A stream of chunks (issue 18), bounded to one per member by the stream itself.
            router.snapshot(ctx.channel(), frame.getCallId());
            return;
        }
        if (callsInFlight >= maxCallsInFlight) {
            ctx.writeAndFlush(Frames.error(frame.getCallId(), Frames.error(Error.Code.UNAVAILABLE,
                    maxCallsInFlight + " calls are already in flight on this connection; wait for answers")));
            return;
        }
        callsInFlight++;
        long callId = frame.getCallId();
        router.handle(frame, user, seen == null ? 0 : seen.revision()).whenComplete((answer, e) -> ctx.executor().execute(() -> {
            callsInFlight--;
            ctx.writeAndFlush(e == null ? checkedAgain(ctx, asked, seen, answer) : Frames.error(callId, Errors.internal(e)));
        }));
    }

    /**
     * A read's answer, checked again if this member applied an auth change while the read waited for its
     * ReadIndex (auth enabled, a permission revoked: {@link AuthGate#applied}); only reads
     * ({@link AuthGate#readsAfterBarrier}).
     */
    private Frame checkedAgain(ChannelHandlerContext ctx, Frame asked, AuthState seen, Frame answer) {
        if (seen == null || !gate.changedSince(seen) || !AuthGate.readsAfterBarrier(asked)) {
            return answer;
        }
        Error refused = gate.check(asked, ctx.channel().attr(ClientTls.COMMON_NAME).get(),
                ctx.channel().remoteAddress()).error();
        return refused == null ? answer : Frames.error(asked.getCallId(), refused);
    }

    /** Log in (bcrypt on the auth worker); failures are counted for the user and for the caller's address. */
    private void authenticate(ChannelHandlerContext ctx, Frame frame) {
        var req = frame.getAuthRequest().getAuthenticate();
        long callId = frame.getCallId();
        gate.authenticate(req.getName(), req.getPassword(), ctx.channel().remoteAddress())
                .whenComplete((response, e) -> ctx.executor().execute(() -> ctx.writeAndFlush(e == null
                        ? Frame.newBuilder().setCallId(callId).setAuthResponse(response).build()
                        : Frames.error(callId, Errors.of(e, null)))));
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof TooLongFrameException) {
            badFrames.warn("{}: frame over the size limit, closing the connection: {}", ctx.channel().remoteAddress(),
                    cause.getMessage());
            ctx.writeAndFlush(Frames.error(0, Frames.error(Error.Code.REQUEST_TOO_LARGE, cause.getMessage())))
                    .addListener(f -> ctx.close());
        } else if (cause instanceof CorruptedFrameException || cause instanceof DecoderException) {
            metrics.malformedFrames.increment();
            badFrames.warn("{}: malformed frame, closing the connection: {}", ctx.channel().remoteAddress(),
                    cause.getMessage());
            ctx.close();
        } else if (cause instanceof IOException) {
            log.debug("{}: {}", ctx.channel().remoteAddress(), cause.toString());
            ctx.close();
        } else {
            log.warn("{}: closing the connection after an unexpected error", ctx.channel().remoteAddress(), cause);
            ctx.close();
        }
    }
}
