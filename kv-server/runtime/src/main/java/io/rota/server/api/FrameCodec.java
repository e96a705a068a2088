package io.rota.server.api;

import com.google.protobuf.InvalidProtocolBufferException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufInputStream;
import io.netty.buffer.ByteBufOutputStream;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.MessageToMessageCodec;
import io.rota.proto.Frame;

import java.io.IOException;
import java.util.List;

/**
 * One length-delimited chunk ⇄ one {@link Frame}. The length prefix itself is handled by the
 * LengthFieldBasedFrameDecoder / LengthFieldPrepender before and after this codec.
 */
final class FrameCodec extends MessageToMessageCodec<ByteBuf, Frame> {

    @Override
    protected void encode(ChannelHandlerContext ctx, Frame frame, List<Object> out) throws IOException {
        ByteBuf buf = ctx.alloc().buffer(frame.getSerializedSize());
        try (ByteBufOutputStream stream = new ByteBufOutputStream(buf)) {
            frame.writeTo(stream);
        }
        out.add(buf);
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf buf, List<Object> out) throws IOException {
        try (ByteBufInputStream stream = new ByteBufInputStream(buf)) {
            out.add(Frame.parseFrom(stream));
        } catch (InvalidProtocolBufferException e) {
            throw new CorruptedFrameException("malformed frame of " + buf.capacity() + " bytes: " + e.getMessage(), e);
        }
    }
}
