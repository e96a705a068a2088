package io.rota.server.kv;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Limits: named defaults, a builder, and validation whose errors name the field. */
class LimitsTest {

    @Test
    void theDefaultsAreTheNamedConstantsWithTheirHistoricValues() {
        Limits l = Limits.defaults();
        // The values before the builder existed (issue 12 changes no default).
        assertEquals(new Limits(8 * 1024, 1024 * 1024, 128, 1_000_000, 10_000, 100_000, 365L * 24 * 3600, 10_000,
                10 * 60_000L, 256, 1024 * 1024, 64L * 1024 * 1024), l);
        assertEquals(l, Limits.builder().build());
        assertEquals(l, l.toBuilder().build());
        assertEquals(2, l.toBuilder().maxKeys(2).build().maxKeys());
    }

    @Test
    void anInvalidFieldIsRefusedByName() {
        assertRefused("maxKeyBytes ", () -> Limits.builder().maxKeyBytes(0).build());
        assertRefused("maxValueBytes ", () -> Limits.builder().maxValueBytes(-1).build());
        assertRefused("maxTxnOps ", () -> Limits.builder().maxTxnOps(0).build());
        assertRefused("maxKeys ", () -> Limits.builder().maxKeys(0).build());
        assertRefused("maxHistoryEvents ", () -> Limits.builder().maxHistoryEvents(0).build());
        assertRefused("maxLeases ", () -> Limits.builder().maxLeases(0).build());
        assertRefused("maxLeaseTtlSeconds ", () -> Limits.builder().maxLeaseTtlSeconds(0).build());
        assertRefused("maxSessions ", () -> Limits.builder().maxSessions(0).build());
        assertRefused("sessionTtlMs ", () -> Limits.builder().sessionTtlMs(0).build());
        assertRefused("rememberedResponsesPerSession ", () -> Limits.builder().rememberedResponsesPerSession(0).build());
    }

    private static void assertRefused(String field, Runnable build) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, build::run);
        assertTrue(e.getMessage().startsWith(field), e.getMessage());
    }
}
