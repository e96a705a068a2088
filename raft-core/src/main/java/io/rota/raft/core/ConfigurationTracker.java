package io.rota.raft.core;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The configuration in force at each index of one server's log (§4.1). A server always uses the latest
 * configuration in its log, committed or not: it takes effect when its entry is appended. If a new leader
 * then truncates that entry, the server falls back to the configuration before it, so the tracker keeps
 * every configuration entry after its base rather than only the latest.
 *
 * <p>The base is the configuration at {@code baseIndex}: the snapshot's (§7: a snapshot carries the
 * configuration as of its last index) or, with no snapshot, the bootstrap configuration at index 0. Entries
 * at or below the base are committed, so they can never be truncated and need not be kept.
 *
 * <p>Package-private: the core's own bookkeeping, like {@link RaftLog}.
 */
final class ConfigurationTracker {

    private long baseIndex;
    private Configuration base;
    /** Configuration entries after the base, by index; all of them still in the log. */
    private final TreeMap<Long, Configuration> entries = new TreeMap<>();

    /** What a server finds on its disk: its snapshot's configuration, then the configuration entries after it. */
    ConfigurationTracker(PersistentState state, Configuration bootstrap) {
        if (state.snapshot() != null) {
            baseIndex = state.snapshot().index();
            base = state.snapshot().metadata().configuration();
        } else {
            baseIndex = 0;
            base = bootstrap;
        }
        for (Entry e : state.entries()) {
            note(e);
        }
    }

    /** The configuration in force: the latest in the log (§4.1). */
    Configuration latest() {
        return entries.isEmpty() ? base : entries.lastEntry().getValue();
    }

    /** Index of the entry that set {@link #latest()}; the base index if no entry after the base did. */
    long latestIndex() {
        return entries.isEmpty() ? baseIndex : entries.lastKey();
    }

    /** The configuration in force at {@code index}, which must not be below the base. */
    Configuration at(long index) {
        if (index < baseIndex) {
            throw new IllegalArgumentException("configuration at " + index + " is below the base at " + baseIndex);
        }
        Map.Entry<Long, Configuration> e = entries.floorEntry(index);
        return e == null ? base : e.getValue();
    }

    /** The configuration before the latest entry: what {@link #latest()} replaced. */
    Configuration previous() {
        return at(latestIndex() - 1 < baseIndex ? baseIndex : latestIndex() - 1);
    }

    /**
     * Entries were written to the log — appended at its end by the leader, or from the leader's
     * AppendEntries, which may have truncated a conflicting suffix first — and the log now ends at
     * {@code lastIndex}. The log now holds exactly {@code written} at their indexes (entries that were
     * already there are identical, by Log Matching), and nothing beyond {@code lastIndex}.
     */
    void written(List<Entry> written, long lastIndex) {
        entries.tailMap(lastIndex, false).clear();
        if (!written.isEmpty()) {
            long first = written.get(0).index();
            long last = written.get(written.size() - 1).index();
            entries.subMap(first, true, last, true).clear();
            for (Entry e : written) {
                note(e);
            }
        }
    }

    /** A snapshot replaced the whole log (§7): its configuration is the new base. */
    void restore(SnapshotMetadata snapshot) {
        entries.clear();
        baseIndex = snapshot.lastIncludedIndex();
        base = snapshot.configuration();
    }

    /** A snapshot now covers the log up to {@code index}: the configuration there becomes the base. */
    void compact(long index) {
        Configuration at = at(index);
        entries.headMap(index, true).clear();
        baseIndex = index;
        base = at;
    }

    private void note(Entry e) {
        if (e.type() == Entry.Type.CONFIGURATION && e.index() > baseIndex) {
            entries.put(e.index(), Configuration.decode(e.data()));
        }
    }
}
