package io.rota.client;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufInputStream;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.codec.LengthFieldPrepender;
import io.netty.handler.codec.MessageToByteEncoder;
import io.netty.handler.codec.MessageToMessageDecoder;
import io.netty.handler.ssl.SslContext;
import io.rota.proto.Frame;
import io.rota.proto.facts.HostPort;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One Netty connection to one member: calls are multiplexed by call id, each completed by the response
 * that echoes it. When the channel closes, every pending call fails with UNAVAILABLE (retryable).
 */
final class Connection {

    static final int MAX_FRAME_BYTES = 64 * 1024 * 1024;

    final String endpoint;
    private final Channel channel;
    private final Map<Long, CompletableFuture<Frame>> pending = new ConcurrentHashMap<>();
    private final Map<Long, Stream> streams = new ConcurrentHashMap<>();
    private final AtomicLong nextCallId = new AtomicLong(1);
    private volatile RotaException closeCause;
    /** Whether the member has sent any frame: until then, a close or garbage means "not a Rota client port". */
    private volatile boolean answered;
    /** Whether a request was written: a close before any was is not a sign of the wrong port. */
    private volatile boolean sent;
    /** The first bytes received, printable, for the message when they are not a Rota frame (an HTTP reply, say). */
    private volatile String firstBytes = "";

    /** Whether this connection speaks TLS: a silent close then means a refused certificate, not plaintext. */
    private final boolean tlsOn;

    /** The client's login: its current token goes on every frame sent. */
    private final AuthTokens tokens;

    private Connection(String endpoint, Channel channel, boolean tlsOn, AuthTokens tokens) {
        this.tlsOn = tlsOn;
        this.endpoint = endpoint;
        this.channel = channel;
        this.tokens = tokens;
    }

    /** Connects to {@code endpoint} ("host:port"); the future completes once the channel is active. */
    static CompletableFuture<Connection> open(Bootstrap bootstrap, String endpoint, Runnable onClose) {
        return open(bootstrap, null, endpoint, AuthTokens.NONE, onClose);
    }

    /**
     * As {@link #open(Bootstrap, String, Runnable)}, over TLS with {@code tls} when it is not null (the member's
     * certificate checked against the endpoint's host unless the options switched that off). Calls written
     * before the TLS handshake completes wait in the TLS layer.
     */
    static CompletableFuture<Connection> open(Bootstrap bootstrap, SslContext tls, String endpoint, AuthTokens tokens,
                                              Runnable onClose) {
        CompletableFuture<Connection> result = new CompletableFuture<>();
        InetSocketAddress address;
        try {
            address = parse(endpoint);
        } catch (RuntimeException e) {
            result.completeExceptionally(new RotaException(RotaException.Code.INVALID_ARGUMENT,
                    "bad endpoint '" + endpoint + "': " + e.getMessage()));
            return result;
        }
        Connection[] holder = new Connection[1];
        Bootstrap b = bootstrap.clone().handler(new ChannelInitializer<Channel>() {
            @Override
            protected void initChannel(Channel ch) {
                Connection c = new Connection(endpoint, ch, tls != null, tokens);
                holder[0] = c;
                if (tls != null) {
                    ch.pipeline().addLast(tls.newHandler(ch.alloc(), address.getHostString(), address.getPort()));
                }
                ch.pipeline().addLast(
                        c.new FirstBytes(),
                        new LengthFieldBasedFrameDecoder(MAX_FRAME_BYTES, 0, 4, 0, 4),
                        new LengthFieldPrepender(4),
                        new FrameDecoder(),
                        new FrameEncoder(),
                        c.new Dispatcher());
                ch.closeFuture().addListener(f -> {
                    c.failAll();
                    onClose.run();
                });
            }
        });
        ChannelFuture connect = b.connect(address);
        connect.addListener(f -> {
            if (f.isSuccess()) {
                result.complete(holder[0]);
            } else {
                result.completeExceptionally(new RotaException(RotaException.Code.UNAVAILABLE,
                        "cannot connect to " + endpoint + ": " + f.cause(), f.cause()));
            }
        });
        return result;
    }

    static InetSocketAddress parse(String endpoint) {
        return HostPort.parse("endpoint", endpoint.trim()).unresolved();   // the cluster's own parser (issue 30)
    }

    boolean isActive() {
        return channel.isActive();
    }

    /** Sends {@code request} with a fresh call id; the future completes with its response frame. */
    CompletableFuture<Frame> call(Frame.Builder request) {
        long callId = nextCallId.getAndIncrement();
        CompletableFuture<Frame> response = new CompletableFuture<>();
        pending.put(callId, response);
        // A late answer after a client-side timeout must not leak its entry.
        response.whenComplete((f, e) -> pending.remove(callId));
        Frame frame = withToken(request.clone().setCallId(callId)).build();
        sent = true;
        channel.writeAndFlush(frame).addListener(f -> {
            if (!f.isSuccess()) {
                response.completeExceptionally(new RotaException(RotaException.Code.UNAVAILABLE,
                        "send to " + endpoint + " failed: " + f.cause(), f.cause()));
            }
        });
        if (!channel.isActive()) {
            failAll();
        }
        return response;
    }

    /** A call answered by several frames (a watch): each goes to {@code onFrame}, a loss to {@code onLost}. */
    record Stream(java.util.function.Consumer<Frame> onFrame, java.util.function.Consumer<RotaException> onLost) {
    }

    /**
     * Opens a stream call: sends {@code request} with a fresh call id; every frame echoing it goes to the
     * stream (on the event loop, in order) until {@link #endStream}; the channel's loss is reported once.
     *
     * @return the call id
     */
    long stream(Frame.Builder request, Stream stream) {
        long callId = nextCallId.getAndIncrement();
        streams.put(callId, stream);
        channel.writeAndFlush(withToken(request.clone().setCallId(callId)).build()).addListener(f -> {
            if (!f.isSuccess()) {
                channel.close();
            }
        });
        if (!channel.isActive()) {
            failAll();
        }
        return callId;
    }

    /**
     * The frame with the client's current token; before the first login, a client with credentials names its
     * user instead (issue 33), so a member with auth enabled asks it to log in rather than take its
     * certificate's CN for it.
     */
    private Frame.Builder withToken(Frame.Builder frame) {
        String token = tokens.current();
        if (!token.isEmpty()) {
            return frame.setAuthToken(token);
        }
        return tokens.hasCredentials() ? frame.setClaimedUser(tokens.user()) : frame;
    }

    /** Stops routing frames of {@code callId} to its stream (later frames are dropped). */
    void endStream(long callId) {
        streams.remove(callId);
    }

    void close() {
        channel.close();
    }

    private void failAll() {
        if (closeCause == null && sent && !answered && !channel.isActive()) {
            // A member answers every request, or keeps the connection; a peer port closes it on a client's frame.
            closeCause = notAClientPort("it closed the connection on our first request without answering (a member's"
                    + " peer port does; or the member is stopping; or its client port needs TLS"
                    + (tlsOn ? " and refused this client's certificate, or its lack of one (rotactl --cert, --key)"
                    : ": give a CA (rotactl --cacert)") + ")", true);
        }
        RotaException cause = closeCause != null ? closeCause
                : new RotaException(RotaException.Code.UNAVAILABLE, "connection to " + endpoint + " lost");
        for (Long id : pending.keySet()) {
            CompletableFuture<Frame> f = pending.remove(id);
            if (f != null) {
                f.completeExceptionally(cause);
            }
        }
        for (Long id : streams.keySet()) {
            Stream s = streams.remove(id);
            if (s != null) {
                s.onLost().accept(cause);
            }
        }
    }

    /** Completes the call whose id the response echoes. */
    private final class Dispatcher extends SimpleChannelInboundHandler<Frame> {
        @Override
        protected void channelRead0(ChannelHandlerContext ctx, Frame frame) {
            answered = true;
            if (frame.getCallId() == 0 && frame.hasError()) {
                // A connection-level error (e.g. a frame too large): the server closes the channel next.
                closeCause = Errors.of(frame.getError());
                return;
            }
            Stream s = streams.get(frame.getCallId());
            if (s != null) {
                s.onFrame().accept(frame);
                return;
            }
            CompletableFuture<Frame> f = pending.remove(frame.getCallId());
            if (f != null) {
                f.complete(frame);
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            javax.net.ssl.SSLException tls = sslCause(cause);
            if (tls != null && closeCause == null) {
                closeCause = new RotaException(RotaException.Code.UNAVAILABLE, endpoint + ": TLS handshake failed: "
                        + tls.getMessage() + (tls instanceof io.netty.handler.ssl.NotSslRecordException
                        ? " (the member answered without TLS: is its client port plaintext? then drop the TLS settings)"
                        : " (check the CA (--cacert), the client certificate (--cert, --key) and that the member's"
                        + " certificate names this host)"), tls);
            } else if (!answered && closeCause == null) {
                // The first bytes were no Rota frame (too long a length prefix, or no protobuf): an HTTP port, say.
                closeCause = notAClientPort("it answered with bytes that are not a Rota frame ('" + firstBytes
                        + "...': an HTTP port?)", false);
            }
            ctx.close();
        }
    }

    private static javax.net.ssl.SSLException sslCause(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof javax.net.ssl.SSLException) {
                return (javax.net.ssl.SSLException) t;
            }
        }
        return null;
    }

    private RotaException notAClientPort(String why, boolean mayHaveReachedAMember) {
        String what = Unreachable.NOT_A_CLIENT_PORT.text() + ": " + why;
        return new RotaException(RotaException.Code.UNAVAILABLE, endpoint + ": " + what
                + "; give the members' client addresses (host:client-port)",
                new Unreachable.NotAClientPort(what, mayHaveReachedAMember));
    }

    /** Keeps the first bytes the member sends, then leaves the pipeline. */
    private final class FirstBytes extends io.netty.channel.ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof ByteBuf) {
                ByteBuf buf = (ByteBuf) msg;
                StringBuilder text = new StringBuilder();
                for (int i = 0; i < Math.min(16, buf.readableBytes()); i++) {
                    char ch = (char) buf.getUnsignedByte(buf.readerIndex() + i);
                    text.append(ch >= 0x20 && ch < 0x7f ? ch : '.');
                }
                firstBytes = text.toString();
                ctx.pipeline().remove(this);
            }
            ctx.fireChannelRead(msg);
        }
    }

    private static final class FrameDecoder extends MessageToMessageDecoder<ByteBuf> {
        @Override
        protected void decode(ChannelHandlerContext ctx, ByteBuf msg, List<Object> out) throws IOException {
            try (ByteBufInputStream in = new ByteBufInputStream(msg)) {
                out.add(Frame.parseFrom(in));
            }
        }
    }

    private static final class FrameEncoder extends MessageToByteEncoder<Frame> {
        @Override
        protected void encode(ChannelHandlerContext ctx, Frame msg, ByteBuf out) {
            out.writeBytes(msg.toByteArray());
        }
    }
}
