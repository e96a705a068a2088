package io.rota.raft.node;

import io.rota.raft.core.Configuration;
import io.rota.raft.core.Entry;
import io.rota.raft.core.PersistentState;
import io.rota.raft.core.RaftNode;
import io.rota.raft.core.RaftOptions;
import io.rota.raft.core.Ready;
import io.rota.raft.core.Role;
import io.rota.raft.storage.MemoryLogStore;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.Optional;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The bootstrap configuration in the log, and the forced single-voter configuration (docs/design.md MF4,
 * MF10): what a node starting on such a log does with its election timer, alone.
 */
class BootstrapTest {

    private static final Configuration THREE = Configuration.of(1L, 2L, 3L);

    /** Node {@code id} with {@code options} as its bootstrap, started on {@code store}'s data and ticked alone. */
    private static RaftNode runAlone(MemoryLogStore store, long id, Configuration options) {
        RaftNode node = new RaftNode(RaftOptions.builder(id, options).build(), store.load(), new SplittableRandom(7));
        for (int tick = 0; tick < 10 * RaftOptions.DEFAULT_ELECTION_TICKS; tick++) {
            node.tick();
            while (node.hasReady()) {
                Ready ready = node.ready();
                store.persist(ready);
                node.advance(ready);
            }
        }
        return node;
    }

    @Test
    @DisplayName("§4.1: the configuration comes from the log — a bootstrap entry {1,2,3} outweighs options that say {1}")
    void theBootstrapEntryOutweighsTheOptions() {
        MemoryLogStore bootstrapped = new MemoryLogStore();
        assertTrue(Bootstrap.writeInitialConfiguration(bootstrapped, THREE));
        RaftNode node = runAlone(bootstrapped, 1, Configuration.of(1L));
        assertNotEquals(Role.LEADER, node.role(), "one of three voters must not elect itself alone");
        assertEquals(THREE, node.configuration());

        // The same options on an empty log: the node is a cluster of one and leads (what the entry prevents).
        assertEquals(Role.LEADER, runAlone(new MemoryLogStore(), 1, Configuration.of(1L)).role());
    }

    @Test
    @DisplayName("the bootstrap entry is index 1, term 1, written once: a log that holds anything is left alone")
    void theBootstrapEntryIsWrittenOnceOnAnEmptyLog() {
        MemoryLogStore store = new MemoryLogStore();
        assertTrue(Bootstrap.writeInitialConfiguration(store, THREE));
        PersistentState state = store.load();
        assertEquals(1, state.hardState().currentTerm());
        assertEquals(1, state.entries().size());
        Entry first = state.entries().get(0);
        assertEquals(1, first.index());
        assertEquals(1, first.term());
        assertEquals(Entry.Type.CONFIGURATION, first.type());
        assertEquals(THREE, Configuration.decode(first.data()));
        assertTrue(Bootstrap.holdsAtMostTheInitialConfiguration(state));

        assertFalse(Bootstrap.writeInitialConfiguration(store, Configuration.of(1L)));
        assertEquals(THREE, Bootstrap.configurationInData(store.load()).orElseThrow());
    }

    @Test
    @DisplayName("--force-new-cluster: one member of three, alone, becomes the sole voter in a new term and commits its log")
    void aForcedSingleVoterElectsItselfAndCommitsTheLog() {
        MemoryLogStore store = new MemoryLogStore();
        Bootstrap.writeInitialConfiguration(store, THREE);
        RaftNode stuck = runAlone(store, 3, THREE);
        assertNotEquals(Role.LEADER, stuck.role());
        long termSeen = stuck.currentTerm();

        Optional<Entry> forced = Bootstrap.forceSingleVoter(store, 3, THREE);
        assertTrue(forced.isPresent());
        assertEquals(2, forced.get().index());
        assertTrue(forced.get().term() > termSeen, "above every term the member has seen");
        RaftNode alone = runAlone(store, 3, THREE);
        assertEquals(Role.LEADER, alone.role());
        assertEquals(Configuration.of(3L), alone.configuration());
        assertTrue(alone.commitIndex() >= forced.get().index(), "its first commit commits the forced entry");

        // The flag left on at the next start: the data is already single-voter, nothing is rewritten.
        long last = store.load().entries().size();
        assertEquals(Optional.empty(), Bootstrap.forceSingleVoter(store, 3, THREE));
        assertEquals(last, store.load().entries().size());
        assertThrows(IllegalStateException.class, () -> Bootstrap.forceSingleVoter(new MemoryLogStore(), 3, THREE));
    }
}
