package io.rota.raft.transport;

import com.google.protobuf.InvalidProtocolBufferException;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.MessageToMessageDecoder;
import io.rota.proto.RaftMessage;

import java.util.List;

/**
 * Parses one frame (the length prefix already stripped) into a {@link RaftMessage}. A frame that does not
 * parse is an {@link InvalidFrameException} ({@code MALFORMED}), which closes the connection.
 */
final class RaftMessageDecoder extends MessageToMessageDecoder<ByteBuf> {

    RaftMessageDecoder() {
        super(ByteBuf.class);
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf frame, List<Object> out) {
        int length = frame.readableBytes();
        try {
            if (frame.hasArray()) {
                out.add(RaftMessage.parser().parseFrom(frame.array(), frame.arrayOffset() + frame.readerIndex(), length));
            } else {
                out.add(RaftMessage.parseFrom(frame.nioBuffer()));
            }
        } catch (InvalidProtocolBufferException e) {
            throw InvalidFrameException.malformed("a frame of " + length + " bytes that does not parse: "
                    + e.getMessage(), e);
        }
    }
}
