package io.rota.server.api;

import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** ClientServer.Settings: derived, so every field must be given; a missing one is refused by name. */
class ClientServerSettingsTest {

    private static ClientServer.Settings.Builder complete() {
        return ClientServer.Settings.builder(new InetSocketAddress(0)).maxFrameBytes(1 << 20)
                .requestTimeout(Duration.ofSeconds(5)).retryInterval(Duration.ofMillis(100))
                .readAttemptTimeout(Duration.ofSeconds(2)).minLeaseTtlSeconds(2).version("v");
    }

    @Test
    void aCompleteBuilderBuilds() {
        ClientServer.Settings s = complete().build();
        assertEquals(Duration.ofSeconds(2), s.readAttemptTimeout());
        assertEquals("v", s.version());
    }

    @Test
    void aMissingFieldIsRefusedByName() {
        assertRefused("listen ", () -> ClientServer.Settings.builder(null).build());
        assertRefused("maxFrameBytes ", () -> complete().maxFrameBytes(0).build());
        assertRefused("requestTimeout ", () -> complete().requestTimeout(null).build());
        assertRefused("retryInterval ", () -> complete().retryInterval(Duration.ZERO).build());
        assertRefused("readAttemptTimeout ", () -> complete().readAttemptTimeout(null).build());
        assertRefused("minLeaseTtlSeconds ", () -> complete().minLeaseTtlSeconds(0).build());
        assertRefused("version ", () -> complete().version(null).build());
    }

    private static void assertRefused(String field, Runnable build) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, build::run);
        assertTrue(e.getMessage().startsWith(field), e.getMessage());
    }
}
