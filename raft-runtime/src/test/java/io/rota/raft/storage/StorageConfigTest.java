package io.rota.raft.storage;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** StorageConfig: named defaults, a builder, and validation whose errors name the field. */
class StorageConfigTest {

    private static final Path DIR = Path.of("data");

    @Test
    void theDefaultsAreTheNamedConstantsWithTheirHistoricValues() {
        StorageConfig c = StorageConfig.defaults(DIR);
        assertEquals(StorageConfig.builder(DIR).build(), c);
        // The values before the builder existed (issue 12 changes no default).
        assertEquals(16L << 20, c.writeBufferBytes());
        assertEquals(64L << 20, c.maxWalBytes());
        assertEquals(3, c.keepInfoLogFiles());
        assertEquals(c, c.toBuilder().build());
    }

    @Test
    void aWalLimitBelowOneMemtableIsRefusedNamingBoth() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> StorageConfig.builder(DIR).writeBufferBytes(32L << 20).maxWalBytes(16L << 20).build());
        assertTrue(e.getMessage().startsWith("maxWalBytes (16777216) must be at least writeBufferBytes (33554432)"),
                e.getMessage());
    }

    @Test
    void anInvalidFieldIsRefusedByName() {
        IllegalArgumentException small = assertThrows(IllegalArgumentException.class,
                () -> StorageConfig.builder(DIR).writeBufferBytes(1024).build());
        assertTrue(small.getMessage().startsWith("writeBufferBytes "), small.getMessage());
        IllegalArgumentException none = assertThrows(IllegalArgumentException.class,
                () -> StorageConfig.builder(DIR).keepInfoLogFiles(0).build());
        assertTrue(none.getMessage().startsWith("keepInfoLogFiles "), none.getMessage());
    }
}
