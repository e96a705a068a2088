package io.rota.raft.transport;

import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.codec.TooLongFrameException;

import java.nio.ByteOrder;

/**
 * The peer port's frame decoder: a 4-byte big-endian length, then that many bytes. Until the handshake
 * completes it accepts only {@link #HANDSHAKE_MAX_FRAME_BYTES} — a handshake is a few dozen bytes — so a
 * stranger who reaches the port cannot make this member buffer a full-size frame (8 MiB by default) before
 * saying who it is; a longer length closes the connection as soon as it is read, nothing buffered. After
 * {@link #handshakeCompleted()} the transport's {@link TransportConfig#maxFrameBytes()} applies.
 */
final class PeerFrameDecoder extends LengthFieldBasedFrameDecoder {

    /** 64 KiB: far above any handshake (cluster id, node id, a refusal sentence), far below a full frame. */
    static final int HANDSHAKE_MAX_FRAME_BYTES = 64 << 10;

    private static final int LENGTH_BYTES = 4;

    private int limit = HANDSHAKE_MAX_FRAME_BYTES;
    private final int maxFrameBytes;

    PeerFrameDecoder(int maxFrameBytes) {
        super(maxFrameBytes + LENGTH_BYTES, 0, LENGTH_BYTES, 0, LENGTH_BYTES);
        this.maxFrameBytes = maxFrameBytes;
    }

    /** The peer is authenticated: frames up to the transport's limit from now on. Called on the event loop. */
    void handshakeCompleted() {
        limit = maxFrameBytes;
    }

    @Override
    protected long getUnadjustedFrameLength(ByteBuf buf, int offset, int length, ByteOrder order) {
        long frameLength = super.getUnadjustedFrameLength(buf, offset, length, order);
        if (frameLength > limit && limit < maxFrameBytes) {
            throw new TooLongFrameException("a frame of " + frameLength + " bytes before the handshake completed;"
                    + " at most " + limit + " bytes until it has");
        }
        return frameLength;
    }
}
