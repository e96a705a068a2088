package io.rota.raft.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.function.UnaryOperator;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** RaftOptions: named defaults, a builder, and validation whose errors name the field. */
class RaftOptionsTest {

    private static final Configuration THREE = Configuration.of(1L, 2L, 3L);

    @Test
    void theDefaultsAreTheNamedConstantsWithTheirHistoricValues() {
        RaftOptions o = RaftOptions.defaults(1, THREE);
        assertEquals(RaftOptions.builder(1, THREE).build(), o);
        // The values before the builder existed (issue 12 changes no default).
        assertEquals(10, o.electionTicks());
        assertEquals(1, o.heartbeatTicks());
        assertTrue(o.preVote() && o.checkQuorum());
        assertEquals(1 << 20, o.maxEntriesBytesPerMessage());
        assertEquals(256, o.maxInflightMessages());
        assertEquals(16L << 20, o.maxInflightBytes());
        assertEquals(64L << 20, o.maxUncommittedBytes());
        assertEquals(16L << 20, o.maxCommittedBytesPerReady());
        assertEquals(1_000, o.snapshotCatchUpEntries());
        assertEquals(50, o.snapshotRetryTicks());
        assertEquals(100_000, o.maxSnapshotPinEntries());
    }

    @Test
    void toBuilderChangesOnlyWhatItIsTold() {
        RaftOptions o = RaftOptions.builder(2, THREE).electionTicks(20).heartbeatTicks(2).preVote(false)
                .maxInflightBytes(600).snapshotCatchUpEntries(0).build();
        assertEquals(o, o.toBuilder().build());
        RaftOptions changed = o.toBuilder().checkQuorum(false).build();
        assertEquals(o.toBuilder().checkQuorum(false).build(), changed);
        assertEquals(20, changed.electionTicks());
        assertEquals(600, changed.maxInflightBytes());
    }

    @Test
    void aMessageLargerThanTheInflightBytesIsAllowed() {
        // Not a rule: an empty in-flight window admits one message of any size (Inflights.full), and the
        // simulator draws 1 MiB messages against 600 in-flight bytes on purpose.
        assertDoesNotThrow(() -> RaftOptions.builder(1, THREE).maxEntriesBytesPerMessage(1 << 20)
                .maxInflightBytes(600).build());
    }

    @Test
    void theHeartbeatMustBeShorterThanTheElectionTimeout() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> RaftOptions.builder(1, THREE).electionTicks(3).heartbeatTicks(3).build());
        assertTrue(e.getMessage().startsWith("heartbeatTicks (3) must be less than electionTicks (3)"), e.getMessage());
    }

    static Stream<Arguments> invalidFields() {
        return Stream.of(
                Arguments.of("heartbeatTicks", (UnaryOperator<RaftOptions.Builder>) b -> b.heartbeatTicks(0)),
                Arguments.of("maxEntriesBytesPerMessage",
                        (UnaryOperator<RaftOptions.Builder>) b -> b.maxEntriesBytesPerMessage(0)),
                Arguments.of("maxInflightMessages", (UnaryOperator<RaftOptions.Builder>) b -> b.maxInflightMessages(0)),
                Arguments.of("maxInflightBytes", (UnaryOperator<RaftOptions.Builder>) b -> b.maxInflightBytes(0)),
                Arguments.of("maxUncommittedBytes", (UnaryOperator<RaftOptions.Builder>) b -> b.maxUncommittedBytes(0)),
                Arguments.of("maxCommittedBytesPerReady",
                        (UnaryOperator<RaftOptions.Builder>) b -> b.maxCommittedBytesPerReady(0)),
                Arguments.of("snapshotCatchUpEntries",
                        (UnaryOperator<RaftOptions.Builder>) b -> b.snapshotCatchUpEntries(-1)),
                Arguments.of("snapshotRetryTicks", (UnaryOperator<RaftOptions.Builder>) b -> b.snapshotRetryTicks(0)),
                Arguments.of("maxSnapshotPinEntries",
                        (UnaryOperator<RaftOptions.Builder>) b -> b.maxSnapshotPinEntries(-1)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("invalidFields")
    void anInvalidFieldIsRefusedByName(String field, UnaryOperator<RaftOptions.Builder> change) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> change.apply(RaftOptions.builder(1, THREE)).build());
        assertTrue(e.getMessage().startsWith(field + " "), e.getMessage());
    }

    @Test
    void idNoneIsRefusedByName() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> RaftOptions.builder(RaftNode.NONE, THREE).build());
        assertTrue(e.getMessage().startsWith("id 0 is reserved"), e.getMessage());
    }
}
