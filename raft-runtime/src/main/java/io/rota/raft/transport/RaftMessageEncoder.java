package io.rota.raft.transport;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufOutputStream;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.MessageToByteEncoder;
import io.netty.handler.codec.TooLongFrameException;
import io.rota.proto.RaftMessage;

/**
 * Serialises a {@link RaftMessage} into a frame body; the length prefix is added after it. Refuses frames
 * larger than the maximum, the same limit the receiver enforces (the sender checks first and drops such
 * messages, so this is a guard against programming errors).
 */
final class RaftMessageEncoder extends MessageToByteEncoder<RaftMessage> {

    private final int maxFrameBytes;

    RaftMessageEncoder(int maxFrameBytes) {
        super(RaftMessage.class);
        this.maxFrameBytes = maxFrameBytes;
    }

    @Override
    protected ByteBuf allocateBuffer(ChannelHandlerContext ctx, RaftMessage message, boolean preferDirect) {
        return ctx.alloc().ioBuffer(message.getSerializedSize());
    }

    @Override
    protected void encode(ChannelHandlerContext ctx, RaftMessage message, ByteBuf out) throws Exception {
        int size = message.getSerializedSize();
        if (size > maxFrameBytes) {
            throw new TooLongFrameException("outbound frame of " + size + " bytes exceeds the maximum of "
                    + maxFrameBytes + " bytes");
        }
        try (ByteBufOutputStream stream = new ByteBufOutputStream(out)) {
            message.writeTo(stream);
        }
    }
}
