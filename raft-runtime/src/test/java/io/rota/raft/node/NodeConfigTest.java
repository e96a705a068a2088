package io.rota.raft.node;

import io.rota.raft.core.Configuration;
import io.rota.raft.core.RaftOptions;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** NodeConfig: named defaults, a builder, and validation whose errors name the field. */
class NodeConfigTest {

    private static final RaftOptions RAFT = RaftOptions.defaults(1, Configuration.of(1L, 2L, 3L));

    @Test
    void theDefaultsAreTheNamedConstantsWithTheirHistoricValues() {
        NodeConfig c = NodeConfig.defaults(1, Configuration.of(1L, 2L, 3L), Map.of(2L, "b:1"));
        assertEquals(NodeConfig.builder(RAFT).memberAddresses(Map.of(2L, "b:1")).build(), c);
        // The values before the builder existed (issue 12 changes no default).
        assertEquals(Duration.ofMillis(100), c.tick());
        assertEquals(10_000, c.snapshotCount());
        assertEquals(65_536, c.inboxCapacity());
        assertEquals(4_096, c.maxBatch());
    }

    @Test
    void toBuilderChangesOnlyWhatItIsTold() {
        NodeConfig c = NodeConfig.builder(RAFT).tick(Duration.ofMillis(20)).snapshotCount(250).build();
        assertEquals(c, c.toBuilder().build());
        NodeConfig changed = c.toBuilder().maxBatch(16).build();
        assertEquals(16, changed.maxBatch());
        assertEquals(Duration.ofMillis(20), changed.tick());
        assertEquals(250, changed.snapshotCount());
    }

    @Test
    void aBatchLargerThanTheInboxIsRefusedNamingBoth() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> NodeConfig.builder(RAFT).inboxCapacity(100).maxBatch(101).build());
        assertTrue(e.getMessage().startsWith("maxBatch (101) must not exceed inboxCapacity (100)"), e.getMessage());
    }

    @Test
    void moreCatchUpEntriesThanTheSnapshotIntervalIsAllowed() {
        // Not a rule: the log merely stays longer (RaftClusterTest.wholeClusterRestart runs 1,000 behind 250).
        assertDoesNotThrow(() -> NodeConfig.builder(RAFT).snapshotCount(250).build());
    }

    @Test
    void anInvalidFieldIsRefusedByName() {
        assertRefused("tick ", () -> NodeConfig.builder(RAFT).tick(Duration.ZERO).build());
        assertRefused("snapshotCount ", () -> NodeConfig.builder(RAFT).snapshotCount(0).build());
        assertRefused("inboxCapacity ", () -> NodeConfig.builder(RAFT).inboxCapacity(0).build());
        assertRefused("maxBatch ", () -> NodeConfig.builder(RAFT).maxBatch(0).build());
    }

    private static void assertRefused(String field, Runnable build) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, build::run);
        assertTrue(e.getMessage().startsWith(field), e.getMessage());
    }
}
