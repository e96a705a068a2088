package io.rota.raft.sim;

import io.rota.raft.core.Entry;
import io.rota.raft.core.HardState;
import io.rota.raft.core.PersistentState;
import io.rota.raft.core.Ready;
import io.rota.raft.core.Snapshot;

import java.util.ArrayList;
import java.util.List;

/**
 * What one simulated node has on stable storage: survives crashes, and is all a restart gets. It
 * follows the Ready contract's persist step exactly (snapshot, then entries, then hard state).
 */
final class SimDisk {

    HardState hardState = HardState.EMPTY;
    Snapshot snapshot;
    long compactedIndex;
    long compactedTerm;
    final List<Entry> entries = new ArrayList<>();

    void persist(Ready rd) {
        if (rd.snapshot() != null) {
            snapshot = rd.snapshot();
            entries.clear();
            compactedIndex = snapshot.index();
            compactedTerm = snapshot.term();
        }
        if (!rd.entries().isEmpty()) {
            long first = rd.entries().get(0).index();
            if (first <= compactedIndex) {
                throw new IllegalStateException("Ready writes entry " + first + " below the compaction point "
                        + compactedIndex);
            }
            if (first > compactedIndex + entries.size() + 1) {
                throw new IllegalStateException("Ready leaves a gap: writes " + first + " after "
                        + (compactedIndex + entries.size()));
            }
            entries.subList((int) (first - compactedIndex - 1), entries.size()).clear();
            entries.addAll(rd.entries());
        }
        if (rd.hardState() != null) {
            hardState = rd.hardState();
        }
    }

    /** The node compacted its log: drop what it dropped, and keep its snapshot. */
    void compact(Snapshot latest, long newFirstIndex) {
        snapshot = latest;
        int drop = (int) Math.min(entries.size(), newFirstIndex - 1 - compactedIndex);
        if (drop > 0) {
            compactedTerm = entries.get(drop - 1).term();
            entries.subList(0, drop).clear();
            compactedIndex += drop;
        }
    }

    PersistentState load() {
        return new PersistentState(hardState, snapshot, compactedIndex, compactedTerm, entries);
    }
}
