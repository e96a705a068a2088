package io.rota.server.api;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.UnknownFieldSet;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.rota.proto.Error;
import io.rota.proto.Frame;
import io.rota.proto.WatchCancelRequest;
import io.rota.proto.WatchRequest;
import io.rota.server.watch.WatchHub;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The client pipeline ({@link ClientInitializer}: length-field framing, {@link FrameCodec},
 * {@link ClientHandler}) on Netty's EmbeddedChannel, without a network or a Raft node. Only requests that
 * the handler answers without the router are sent (watch requests with typed errors); requests that need
 * Raft are covered over real sockets by ServerClusterTest.
 */
class ClientPipelineTest {

    private static final int MAX_FRAME = 1024;

    private final ServerMetrics metrics = new ServerMetrics();
    private final ClientInitializer initializer = new ClientInitializer(MAX_FRAME, null,
            new WatchHub(1, () -> 1, 100, 10), metrics, 16);

    private EmbeddedChannel channel() {
        return new EmbeddedChannel(initializer);
    }

    private static ByteBuf framed(byte[] payload) {
        return Unpooled.buffer().writeInt(payload.length).writeBytes(payload);
    }

    /** A request the handler answers itself with INVALID_ARGUMENT: a watch request with nothing in it. */
    private static Frame emptyWatch(long callId) {
        return Frame.newBuilder().setCallId(callId).setWatchRequest(WatchRequest.getDefaultInstance()).build();
    }

    /** {@link #emptyWatch} padded with an unknown field to exactly {@code size} serialized bytes. */
    private static Frame emptyWatchOfSize(long callId, int size) {
        for (int pad = Math.max(0, size - 32); pad <= size; pad++) {
            Frame f = emptyWatch(callId).toBuilder().setUnknownFields(UnknownFieldSet.newBuilder().addField(999,
                    UnknownFieldSet.Field.newBuilder().addLengthDelimited(ByteString.copyFrom(new byte[pad])).build())
                    .build()).build();
            if (f.getSerializedSize() == size) {
                return f;
            }
        }
        throw new AssertionError("cannot pad to " + size);
    }

    /** Everything the channel wrote, parsed back into frames (the prepender writes prefix and body apart). */
    private static List<Frame> written(EmbeddedChannel ch) throws InvalidProtocolBufferException {
        ByteBuf all = Unpooled.buffer();
        for (Object o; (o = ch.readOutbound()) != null; ) {
            ByteBuf b = (ByteBuf) o;
            all.writeBytes(b);
            b.release();
        }
        List<Frame> frames = new ArrayList<>();
        while (all.readableBytes() >= 4) {
            byte[] payload = new byte[all.readInt()];
            all.readBytes(payload);
            frames.add(Frame.parseFrom(payload));
        }
        assertEquals(0, all.readableBytes(), "no partial frame written");
        return frames;
    }

    @Test
    @DisplayName("Client protocol framing: a typed error (INVALID_ARGUMENT) answers only its call; the same "
            + "channel keeps answering (etcd: errors are per request, not per connection)")
    void aTypedErrorLeavesTheChannelOpenAndAnswering() throws Exception {
        EmbeddedChannel ch = channel();
        ch.writeInbound(framed(emptyWatch(7).toByteArray()));
        List<Frame> first = written(ch);
        assertEquals(1, first.size());
        assertEquals(7, first.get(0).getCallId());
        assertEquals(Error.Code.INVALID_ARGUMENT, first.get(0).getError().getCode());
        assertFalse(first.get(0).getError().getMessage().isEmpty(), "a human message");
        assertTrue(ch.isOpen());

        ch.writeInbound(framed(Frame.newBuilder().setCallId(8).setWatchRequest(WatchRequest.newBuilder()
                .setCancelRequest(WatchCancelRequest.newBuilder().setWatchId(5))).build().toByteArray()));
        Frame second = written(ch).get(0);
        assertEquals(8, second.getCallId());
        assertTrue(second.getError().getMessage().contains("no watch 5"), second.toString());
        assertTrue(ch.isOpen());
        ch.finishAndReleaseAll();
    }

    @Test
    @DisplayName("Length-prefixed framing reassembles a frame that arrives one byte at a time")
    void aFrameSplitIntoSingleBytesIsReassembled() throws Exception {
        EmbeddedChannel ch = channel();
        ByteBuf whole = framed(emptyWatch(3).toByteArray());
        while (whole.isReadable()) {
            ch.writeInbound(whole.readRetainedSlice(1));
        }
        whole.release();
        List<Frame> out = written(ch);
        assertEquals(1, out.size());
        assertEquals(3, out.get(0).getCallId());
        ch.finishAndReleaseAll();
    }

    @Test
    @DisplayName("A frame that does not parse closes that connection only, and is counted as malformed")
    void aGarbageFrameClosesOnlyItsChannel() throws Exception {
        EmbeddedChannel bad = channel();
        EmbeddedChannel good = channel();
        bad.writeInbound(framed(new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff, 0x01, 0x02}));
        assertFalse(bad.isOpen(), "the garbage channel is closed");
        assertTrue(written(bad).isEmpty(), "nothing is answered on a stream that cannot be trusted");
        assertEquals(1, metrics.malformedFrames.sum());

        good.writeInbound(framed(emptyWatch(1).toByteArray()));
        assertEquals(Error.Code.INVALID_ARGUMENT, written(good).get(0).getError().getCode());
        assertTrue(good.isOpen());
        good.finishAndReleaseAll();
    }

    @Test
    @DisplayName("An absurd length prefix (2 GiB) is refused as soon as it is read: REQUEST_TOO_LARGE on call 0, "
            + "then close; nothing is buffered")
    void anAbsurdLengthPrefixGetsRequestTooLargeThenClose() throws Exception {
        EmbeddedChannel ch = channel();
        ch.writeInbound(Unpooled.buffer().writeInt(Integer.MAX_VALUE));
        List<Frame> out = written(ch);
        assertEquals(1, out.size());
        assertEquals(0, out.get(0).getCallId());
        assertEquals(Error.Code.REQUEST_TOO_LARGE, out.get(0).getError().getCode());
        String message = out.get(0).getError().getMessage();
        assertTrue(message.startsWith("a request of " + (Integer.MAX_VALUE + 4L) + " bytes is over this member's limit of "
                + MAX_FRAME + " bytes per request (its --max-request-bytes plus a small envelope)"), message);
        assertFalse(message.contains("Adjusted frame length"), "no Netty wording: " + message);
        assertFalse(ch.isOpen());
    }

    @Test
    @DisplayName("The length prefix is unsigned: 0xFFFFFFFF is a 4 GiB frame, refused like any other oversized one")
    void anAllOnesLengthPrefixIsTooLargeNotNegative() throws Exception {
        EmbeddedChannel ch = channel();
        ch.writeInbound(Unpooled.buffer().writeInt(-1).writeInt(0));
        List<Frame> out = written(ch);
        assertEquals(1, out.size());
        assertEquals(Error.Code.REQUEST_TOO_LARGE, out.get(0).getError().getCode());
        assertFalse(ch.isOpen());
    }

    @Test
    @DisplayName("The frame limit (--max-request-bytes + envelope) counts the 4-byte prefix: a body of limit − 4 "
            + "bytes is served, one more byte gets REQUEST_TOO_LARGE, then close")
    void theFrameLimitIsExactAndOneByteOverIsRefused() throws Exception {
        EmbeddedChannel ch = channel();
        ch.writeInbound(framed(emptyWatchOfSize(11, MAX_FRAME - 4).toByteArray()));
        Frame served = written(ch).get(0);
        assertEquals(11, served.getCallId());
        assertEquals(Error.Code.INVALID_ARGUMENT, served.getError().getCode(), "reached the handler");
        assertTrue(ch.isOpen());

        ch.writeInbound(framed(emptyWatchOfSize(12, MAX_FRAME - 3).toByteArray()));
        List<Frame> out = written(ch);
        assertEquals(1, out.size());
        assertEquals(0, out.get(0).getCallId());
        assertEquals(Error.Code.REQUEST_TOO_LARGE, out.get(0).getError().getCode());
        assertFalse(ch.isOpen());
    }
}
