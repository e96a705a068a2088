package io.rota.raft.transport;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.MessageToMessageDecoder;
import io.rota.proto.RaftMessage;

import java.util.List;

/** Parses one frame (the length prefix already stripped) into a {@link RaftMessage}. */
final class RaftMessageDecoder extends MessageToMessageDecoder<ByteBuf> {

    RaftMessageDecoder() {
        super(ByteBuf.class);
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf frame, List<Object> out) throws Exception {
        int length = frame.readableBytes();
        if (frame.hasArray()) {
            out.add(RaftMessage.parser().parseFrom(frame.array(), frame.arrayOffset() + frame.readerIndex(), length));
        } else {
            out.add(RaftMessage.parseFrom(frame.nioBuffer()));
        }
    }
}
