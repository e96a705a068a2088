package io.rota.server.api;

import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.handler.codec.LengthFieldPrepender;
import io.rota.server.watch.WatchHub;

/**
 * The client pipeline: 4-byte length prefix, Frame codec, then one {@link ClientHandler} per channel. Any
 * {@link Channel} type, so tests can run the same pipeline on an EmbeddedChannel.
 */
final class ClientInitializer extends ChannelInitializer<Channel> {

    private final int maxFrameBytes;
    private final RequestRouter router;
    private final WatchHub watchHub;
    private final ServerMetrics metrics;
    private final int maxCallsInFlight;

    ClientInitializer(int maxFrameBytes, RequestRouter router, WatchHub watchHub, ServerMetrics metrics,
                      int maxCallsInFlight) {
        this.maxFrameBytes = maxFrameBytes;
        this.router = router;
        this.watchHub = watchHub;
        this.metrics = metrics;
        this.maxCallsInFlight = maxCallsInFlight;
    }

    @Override
    protected void initChannel(Channel ch) {
        ch.pipeline().addLast(
                // Rejects as soon as the length is read, before buffering the oversized frame.
                new RequestFrameDecoder(maxFrameBytes),
                new LengthFieldPrepender(4),
                new FrameCodec(),
                new ClientHandler(router, watchHub, metrics, maxCallsInFlight));
    }
}
