package io.rota.server.api;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.codec.TooLongFrameException;

/**
 * The client port's length-prefix decoder: Netty's, except that a frame over the limit is refused as soon as its
 * 4-byte length is read, with a message a user can act on (the size, the limit, the setting) instead of Netty's
 * "Adjusted frame length exceeds ...". Everything after it on the connection is discarded: the stream cannot be
 * trusted any more, and ClientHandler closes the connection after answering REQUEST_TOO_LARGE.
 */
final class RequestFrameDecoder extends LengthFieldBasedFrameDecoder {

    private static final int LENGTH_BYTES = 4;

    private final int maxFrameBytes;
    private boolean discarding;

    /** @param maxFrameBytes the largest frame accepted, length prefix included (--max-request-bytes + envelope) */
    RequestFrameDecoder(int maxFrameBytes) {
        super(maxFrameBytes, 0, LENGTH_BYTES, 0, LENGTH_BYTES, true);
        this.maxFrameBytes = maxFrameBytes;
    }

    @Override
    protected Object decode(ChannelHandlerContext ctx, ByteBuf in) throws Exception {
        if (discarding) {
            in.skipBytes(in.readableBytes());
            return null;
        }
        if (in.readableBytes() >= LENGTH_BYTES) {
            long frameBytes = in.getUnsignedInt(in.readerIndex()) + LENGTH_BYTES;
            if (frameBytes > maxFrameBytes) {
                discarding = true;
                in.skipBytes(in.readableBytes());
                throw new TooLongFrameException("a request of " + frameBytes + " bytes is over this member's limit of "
                        + maxFrameBytes + " bytes per request (its --max-request-bytes plus a small envelope); keep"
                        + " values small (a value may have at most 1 MiB), or raise --max-request-bytes on every member");
            }
        }
        return super.decode(ctx, in);
    }
}
