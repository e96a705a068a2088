package io.rota.raft.transport;

import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TransportConfigTest {

    private static final InetSocketAddress ANY_PORT = new InetSocketAddress("127.0.0.1", 0);

    @Test
    void defaults() {
        TransportConfig config = TransportConfig.builder("c", 1, ANY_PORT).build();
        assertEquals(8 << 20, config.maxFrameBytes());
        assertEquals(4096, config.perPeerQueueLimit());
        assertEquals(1 << 20, config.snapshotChunkBytes());
        assertEquals(1L << 40, config.maxSnapshotBytes());
        assertEquals(Duration.ofMillis(50), config.reconnectBackoffMin());
        assertEquals(Duration.ofSeconds(2), config.reconnectBackoffMax());
        assertTrue(config.peers().isEmpty());
    }

    @Test
    void peersMayBeAddedAfterConstruction() {
        TransportConfig config = TransportConfig.builder("c", 1, ANY_PORT).peers(Map.of(2L, ANY_PORT)).build();
        config.peers().put(3L, ANY_PORT);
        assertEquals(2, config.peers().size());
    }

    @Test
    void invalidSettingsAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> TransportConfig.builder(" ", 1, ANY_PORT).build());
        assertThrows(IllegalArgumentException.class, () -> TransportConfig.builder("c", 0, ANY_PORT).build());
        assertThrows(IllegalArgumentException.class,
                () -> TransportConfig.builder("c", 1, ANY_PORT).peers(Map.of(1L, ANY_PORT)).build());
        assertThrows(IllegalArgumentException.class,
                () -> TransportConfig.builder("c", 1, ANY_PORT).perPeerQueueLimit(0).build());
        assertThrows(IllegalArgumentException.class,
                () -> TransportConfig.builder("c", 1, ANY_PORT).maxFrameBytes(1 << 20).snapshotChunkBytes(1 << 20).build());
        assertThrows(IllegalArgumentException.class,
                () -> TransportConfig.builder("c", 1, ANY_PORT).maxSnapshotBytes(0).build());
        assertThrows(IllegalArgumentException.class, () -> TransportConfig.builder("c", 1, ANY_PORT)
                .reconnectBackoff(Duration.ofSeconds(2), Duration.ofMillis(50)).build());
        assertThrows(IllegalArgumentException.class,
                () -> TransportConfig.builder("c", 1, ANY_PORT).writeBufferWaterMarks(10, 5).build());
    }

    @Test
    void crossFieldRulesNameBothFields() {
        assertRefused("snapshotChunkBytes (1048576) must be at most maxFrameBytes (1048576) - 1024",
                () -> TransportConfig.builder("c", 1, ANY_PORT).maxFrameBytes(1 << 20).snapshotChunkBytes(1 << 20).build());
        assertRefused("reconnectBackoffMax (PT0.05S) must be at least reconnectBackoffMin (PT2S)",
                () -> TransportConfig.builder("c", 1, ANY_PORT)
                        .reconnectBackoff(Duration.ofSeconds(2), Duration.ofMillis(50)).build());
        assertRefused("writeBufferLowBytes (10) must be at most writeBufferHighBytes (5)",
                () -> TransportConfig.builder("c", 1, ANY_PORT).writeBufferWaterMarks(10, 5).build());
    }

    @Test
    void toBuilderChangesOnlyWhatItIsTold() {
        TransportConfig config = TransportConfig.builder("c", 1, ANY_PORT).peers(Map.of(2L, ANY_PORT))
                .maxFrameBytes(16 << 20).ioThreads(1).build();
        TransportConfig copy = config.toBuilder().build();
        assertEquals(config.peers(), copy.peers());
        assertEquals(16 << 20, copy.maxFrameBytes());
        assertEquals(1, copy.ioThreads());
        assertEquals(4, config.toBuilder().ioThreads(4).build().ioThreads());
    }

    private static void assertRefused(String message, Runnable build) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, build::run);
        assertTrue(e.getMessage().startsWith(message), e.getMessage());
    }
}
