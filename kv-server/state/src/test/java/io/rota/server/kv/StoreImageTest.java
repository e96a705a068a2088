package io.rota.server.kv;

import io.rota.proto.StoreSnapshot;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The state machine's image as a stream of parts, and images from before streaming. */
class StoreImageTest {

    /** 3,000 keys of 1 KiB: an image of several parts. */
    private static Harness filled() {
        Harness h = new Harness(Limits.defaults());
        String value = "v".repeat(1024);
        for (int k = 0; k < 3000; k++) {
            h.put(String.format("key/%05d", k), value);
        }
        h.put("key/00001", "changed"); // history beyond the keys
        return h;
    }

    @Test
    void anImageOfManyPartsRestoresTheSameState() {
        Harness h = filled();
        byte[] image = h.sm.capture().serialize();
        assertTrue(image.length > 3 * StoreImage.PART_BYTES, "several parts: " + image.length + " bytes");

        CoordinationStateMachine copy = new CoordinationStateMachine(Harness.LIMITS);
        copy.restore(image);

        assertEquals(h.sm.image(), copy.image());
        assertArrayEquals(image, copy.capture().serialize(), "equal states give equal images");
    }

    /** Data directories from before streaming hold the image as one StoreSnapshot message. */
    @Test
    void anImageFromBeforeStreamingIsStillRestored() {
        Harness h = filled();
        StoreSnapshot whole = h.sm.image();

        CoordinationStateMachine copy = new CoordinationStateMachine(Harness.LIMITS);
        copy.restore(whole.toByteArray());

        assertEquals(whole, copy.image());
        CoordinationStateMachine empty = new CoordinationStateMachine(Harness.LIMITS);
        empty.restore(new byte[0]);
        assertEquals(0, empty.image().getKvsCount());
    }

    @Test
    void aDamagedStreamedImageIsRefusedBeforeAnythingChanges() {
        Harness h = filled();
        byte[] image = h.sm.capture().serialize();
        byte[] truncated = java.util.Arrays.copyOf(image, image.length / 2);
        CoordinationStateMachine target = new CoordinationStateMachine(Harness.LIMITS);

        assertThrows(IllegalArgumentException.class, () -> target.restore(truncated));
        assertThrows(IllegalArgumentException.class, () -> target.restore(new byte[] {0, 'X', 'Y', 'Z', 1}));
        assertEquals(0, target.image().getKvsCount());
    }
}
