package io.rota.raft.core;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The replicated log of one server (Figure 2, "log[]", "commitIndex", "lastApplied") after the last
 * compaction (§7).
 *
 * <p>Invariants, checked on every change:
 * <ul>
 *   <li>{@code entries.get(k).index() == compactedIndex + 1 + k} (contiguous);</li>
 *   <li>{@code compactedIndex <= appliedIndex <= commitIndex <= lastIndex()} once a Ready is applied;</li>
 *   <li>{@code commitIndex} never decreases; entries at or below it never change (§5.3, Log Matching).</li>
 * </ul>
 * Package-private: the core's own bookkeeping, not an API.
 */
final class RaftLog {

    /** Index of the last entry dropped from the front (covered by a snapshot); 0 if none. */
    private long compactedIndex;
    /** Term of that entry; 0 if none. */
    private long compactedTerm;
    private final ArrayList<Entry> entries = new ArrayList<>();

    /** Highest index known to be committed (Figure 2, volatile). Never decreases. */
    private long commitIndex;
    /**
     * Highest index handed to the state machine in a Ready ("lastApplied" in Figure 2, counted when the
     * entries leave in a Ready, since the runtime applies them before the next {@code advance}).
     */
    private long appliedIndex;
    /** Highest index known to be on this server's disk; entries above it go out in the next Ready. */
    private long persistedIndex;

    RaftLog(PersistentState state) {
        this.compactedIndex = state.compactedIndex();
        this.compactedTerm = state.compactedTerm();
        this.entries.addAll(state.entries());
        long snapshotIndex = state.snapshot() == null ? 0 : state.snapshot().index();
        this.persistedIndex = lastIndex();
        this.commitIndex = Math.max(state.hardState().commitIndex(), snapshotIndex);
        if (commitIndex > lastIndex()) {
            throw new IllegalStateException("persisted commit index " + commitIndex
                    + " is beyond the persisted log (last index " + lastIndex() + ")");
        }
        this.appliedIndex = snapshotIndex;
    }

    long firstIndex() {
        return compactedIndex + 1;
    }

    long lastIndex() {
        return compactedIndex + entries.size();
    }

    long lastTerm() {
        return entries.isEmpty() ? compactedTerm : entries.get(entries.size() - 1).term();
    }

    long commitIndex() {
        return commitIndex;
    }

    long appliedIndex() {
        return appliedIndex;
    }

    long persistedIndex() {
        return persistedIndex;
    }

    long compactedIndex() {
        return compactedIndex;
    }

    /** Term of the entry at {@code index}; 0 for index 0; -1 if compacted away or beyond the end. */
    long term(long index) {
        if (index == compactedIndex) {
            return compactedTerm;
        }
        if (index < compactedIndex || index > lastIndex()) {
            return -1; // index 0 is covered above while nothing is compacted
        }
        return entries.get((int) (index - compactedIndex - 1)).term();
    }

    Entry entry(long index) {
        return entries.get((int) (index - compactedIndex - 1));
    }

    boolean matchTerm(long index, long term) {
        long t = term(index);
        return t >= 0 && t == term;
    }

    /**
     * §5.4.1 election restriction: a log is at least as up-to-date as ours if its last term is higher,
     * or the same with an index at least as large.
     */
    boolean isUpToDate(long lastLogIndex, long lastLogTerm) {
        return lastLogTerm > lastTerm() || (lastLogTerm == lastTerm() && lastLogIndex >= lastIndex());
    }

    /** First index of the run of {@code term} that contains {@code index}, not going below the commit. */
    long firstIndexOfTermAt(long index) {
        long term = term(index);
        long i = index;
        while (i - 1 > Math.max(commitIndex, compactedIndex) && term(i - 1) == term) {
            i--;
        }
        return i;
    }

    /** Last index at or below {@code atMost} whose term is {@code term}; 0 if none is in the log. */
    long lastIndexOfTerm(long term, long atMost) {
        for (long i = Math.min(atMost, lastIndex()); i > compactedIndex; i--) {
            long t = term(i);
            if (t == term) {
                return i;
            }
            if (t < term) {
                return 0;
            }
        }
        return 0;
    }

    /**
     * Leader-side append of new entries at the end (§5.3: "the leader appends the command to its log as
     * a new entry").
     */
    void appendAtEnd(List<Entry> newEntries) {
        for (Entry e : newEntries) {
            if (e.index() != lastIndex() + 1) {
                throw new IllegalStateException("append at " + e.index() + " but last index is " + lastIndex());
            }
            entries.add(e);
        }
    }

    /**
     * AppendEntries receiver rules 3 and 4 (§5.3, Figure 2), given that {@code prevLogIndex} already
     * matched: "If an existing entry conflicts with a new one (same index but different terms), delete
     * the existing entry and all that follow it. Append any new entries not already in the log."
     * Entries that are already present with the same term are left alone, so a stale, duplicated or
     * reordered message never truncates anything.
     *
     * @return the index of the last entry of the message ("index of last new entry")
     */
    long appendFromLeader(long prevLogIndex, List<Entry> newEntries) {
        long lastNew = prevLogIndex + newEntries.size();
        for (Entry e : newEntries) {
            if (e.index() <= compactedIndex) {
                continue; // covered by our snapshot, hence committed, hence identical (§7)
            }
            if (e.index() <= lastIndex()) {
                if (term(e.index()) == e.term()) {
                    continue;
                }
                if (e.index() <= commitIndex) {
                    throw new IllegalStateException("conflict at committed index " + e.index()
                            + " (commit " + commitIndex + "): term " + term(e.index()) + " vs " + e.term());
                }
                truncateFrom(e.index());
            }
            entries.add(e);
        }
        return lastNew;
    }

    private void truncateFrom(long index) {
        entries.subList((int) (index - compactedIndex - 1), entries.size()).clear();
        persistedIndex = Math.min(persistedIndex, index - 1);
    }

    /** Entries in [lo, hi), at most {@code maxBytes} of them but always at least one if any. */
    List<Entry> slice(long lo, long hi, long maxBytes) {
        if (lo < firstIndex()) {
            throw new IllegalArgumentException("slice from " + lo + " but the log starts at " + firstIndex());
        }
        hi = Math.min(hi, lastIndex() + 1);
        if (lo >= hi) {
            return List.of();
        }
        int from = (int) (lo - compactedIndex - 1);
        int to = (int) (hi - compactedIndex - 1);
        long bytes = 0;
        int end = from;
        while (end < to) {
            bytes += entries.get(end).sizeBytes();
            if (bytes > maxBytes && end > from) {
                break;
            }
            end++;
        }
        return Collections.unmodifiableList(new ArrayList<>(entries.subList(from, end)));
    }

    /** Advance the commit index; it never goes back. */
    void commitTo(long index) {
        if (index > commitIndex) {
            if (index > lastIndex()) {
                throw new IllegalStateException("commit " + index + " beyond last index " + lastIndex());
            }
            commitIndex = index;
        }
    }

    /** Entries not yet handed out for persistence. */
    List<Entry> unpersistedEntries() {
        if (persistedIndex >= lastIndex()) {
            return List.of();
        }
        return slice(Math.max(persistedIndex + 1, firstIndex()), lastIndex() + 1, Long.MAX_VALUE);
    }

    /** Committed entries not yet handed to the state machine, up to {@code maxBytes}. */
    List<Entry> unappliedCommittedEntries(long maxBytes) {
        if (appliedIndex >= commitIndex) {
            return List.of();
        }
        return slice(appliedIndex + 1, commitIndex + 1, maxBytes);
    }

    void persistedTo(long index, long term) {
        // The entry may have been overwritten since the Ready was made; then it was never durable.
        if (index > persistedIndex && matchTerm(index, term)) {
            persistedIndex = index;
        }
    }

    void appliedTo(long index) {
        if (index < appliedIndex || index > commitIndex) {
            throw new IllegalStateException("applied " + index + " outside (" + appliedIndex + ", " + commitIndex + "]");
        }
        appliedIndex = index;
    }

    /** Drop entries up to {@code index} (§7); they are covered by a snapshot. */
    void compactTo(long index) {
        if (index <= compactedIndex) {
            return;
        }
        if (index > appliedIndex) {
            throw new IllegalArgumentException("cannot compact to " + index + ": applied only to " + appliedIndex);
        }
        compactedTerm = term(index);
        entries.subList(0, (int) (index - compactedIndex)).clear();
        compactedIndex = index;
    }

    /**
     * Replace the whole log by a snapshot received from the leader (§7, Figure 13 receiver rules 6–8:
     * no entry of ours matches the snapshot's last one, so discard the entire log).
     */
    void restore(SnapshotMetadata meta) {
        entries.clear();
        compactedIndex = meta.lastIncludedIndex();
        compactedTerm = meta.lastIncludedTerm();
        commitIndex = compactedIndex;
        appliedIndex = compactedIndex; // the state machine restores from the snapshot in the same Ready
        persistedIndex = compactedIndex; // durable with that Ready; nothing reads it before advance
    }

    /** A read-only live view of the entries, for tests and status; do not keep it across calls. */
    List<Entry> entries() {
        return Collections.unmodifiableList(entries);
    }

    long compactedTerm() {
        return compactedTerm;
    }
}
