package io.rota.server.kv;

import com.google.protobuf.InvalidProtocolBufferException;
import io.rota.proto.Event;
import io.rota.proto.KeyValue;
import io.rota.proto.StoreSnapshot;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Arrays;
import java.util.List;

/**
 * The state machine's snapshot image as a stream, so that no image is ever one message or one array
 * (a protobuf message cannot exceed 2 GiB, and an array of the whole state would double the heap):
 *
 * <pre>
 *   magic "\0RSI" | version (1) | head | part | part | ...      each head/part a length-delimited StoreSnapshot
 * </pre>
 *
 * The head carries everything but the keys and the watch history; each part carries a batch of keys, then
 * of history events, of about {@value #PART_BYTES} bytes. Read back, the parts merge into the head as
 * protobuf merges repeated fields (appending), so the result is the very message the state machine
 * captured. The leading zero byte cannot start a protobuf message (field number 0 does not exist), so an
 * image from before streaming — one StoreSnapshot message — is told apart and still read.
 */
public final class StoreImage {

    /** "\0RSI": Rota streamed image. */
    private static final byte[] MAGIC = {0, 'R', 'S', 'I'};
    private static final byte VERSION = 1;
    /** Bytes of keys or events per part: small enough to parse without a large buffer, big enough to be few. */
    static final int PART_BYTES = 1 << 20;

    private StoreImage() {
    }

    /**
     * Writes the image: {@code head} (without keys or history), then {@code kvs} and {@code history} in parts.
     * Runs on the snapshot thread; the lists must not change meanwhile (the capture copies references).
     */
    public static void write(OutputStream out, StoreSnapshot head, List<KeyValue> kvs, List<Event> history)
            throws IOException {
        out.write(MAGIC);
        out.write(VERSION);
        head.writeDelimitedTo(out);
        StoreSnapshot.Builder part = StoreSnapshot.newBuilder();
        long bytes = 0;
        for (KeyValue kv : kvs) {
            part.addKvs(kv);
            bytes += kv.getSerializedSize();
            if (bytes >= PART_BYTES) {
                part.build().writeDelimitedTo(out);
                part = StoreSnapshot.newBuilder();
                bytes = 0;
            }
        }
        for (Event e : history) {
            part.addHistory(e);
            bytes += e.getSerializedSize();
            if (bytes >= PART_BYTES) {
                part.build().writeDelimitedTo(out);
                part = StoreSnapshot.newBuilder();
                bytes = 0;
            }
        }
        if (bytes > 0) {
            part.build().writeDelimitedTo(out);
        }
    }

    /** Writes a whole image message in the streamed form. */
    public static void write(OutputStream out, StoreSnapshot image) throws IOException {
        write(out, image.toBuilder().clearKvs().clearHistory().build(), image.getKvsList(), image.getHistoryList());
    }

    /**
     * Reads an image to its end: the streamed form, or one StoreSnapshot message (images from before
     * streaming; an empty stream is the empty image).
     *
     * @throws IllegalArgumentException if it is neither
     * @throws IOException              if the stream cannot be read
     */
    public static StoreSnapshot read(InputStream in) throws IOException {
        BufferedInputStream b = new BufferedInputStream(in, 1 << 16);
        b.mark(MAGIC.length + 1);
        byte[] start = b.readNBytes(MAGIC.length + 1);
        try {
            if (start.length == 0 || start[0] != 0) {
                b.reset();
                return StoreSnapshot.parseFrom(b);
            }
            if (start.length < MAGIC.length + 1 || !Arrays.equals(Arrays.copyOf(start, MAGIC.length), MAGIC)
                    || start[MAGIC.length] != VERSION) {
                throw new IllegalArgumentException("not a coordination state machine snapshot: it starts with "
                        + java.util.HexFormat.of().formatHex(start) + ", not a version " + VERSION + " image");
            }
            StoreSnapshot head = StoreSnapshot.parseDelimitedFrom(b);
            if (head == null) {
                throw new IllegalArgumentException("not a coordination state machine snapshot: no head after the magic");
            }
            StoreSnapshot.Builder whole = head.toBuilder();
            for (StoreSnapshot part = StoreSnapshot.parseDelimitedFrom(b); part != null;
                    part = StoreSnapshot.parseDelimitedFrom(b)) {
                whole.addAllKvs(part.getKvsList()).addAllHistory(part.getHistoryList());
            }
            return whole.build();
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalArgumentException("not a coordination state machine snapshot", e);
        }
    }
}
