package io.rota.raft.core;

import java.util.List;
import java.util.Objects;

/**
 * What a node finds on its disk when it starts: the input of {@link RaftNode#RaftNode(RaftOptions,
 * PersistentState, java.util.random.RandomGenerator)}.
 *
 * @param hardState      the last persisted {@link HardState}
 * @param snapshot       the latest snapshot, or {@code null}
 * @param compactedIndex index of the last entry removed from the front of the log (0 if none)
 * @param compactedTerm  term of that entry (0 if none)
 * @param entries        the log after {@code compactedIndex}, contiguous
 */
public record PersistentState(HardState hardState, Snapshot snapshot, long compactedIndex, long compactedTerm,
                              List<Entry> entries) {

    public static final PersistentState EMPTY = new PersistentState(HardState.EMPTY, null, 0, 0, List.of());

    public PersistentState {
        Objects.requireNonNull(hardState, "hardState");
        entries = List.copyOf(entries);
        long expected = compactedIndex + 1;
        for (Entry e : entries) {
            if (e.index() != expected++) {
                throw new IllegalArgumentException("log is not contiguous after index " + compactedIndex
                        + ": found " + e.index() + " where " + (expected - 1) + " was expected");
            }
        }
        if (snapshot != null && snapshot.index() < compactedIndex) {
            throw new IllegalArgumentException("log compacted to " + compactedIndex
                    + " beyond the snapshot at " + snapshot.index());
        }
        if (snapshot == null && compactedIndex != 0) {
            throw new IllegalArgumentException("log compacted to " + compactedIndex + " but no snapshot");
        }
    }
}
