package io.rota.raft.core;

/**
 * Argument checks shared by every durable-state implementation — {@link MemoryStorage} here, and the runtime's
 * log stores (RocksDB, in memory) — so all of them reject the same misuse with an
 * {@link IllegalArgumentException}.
 */
public final class StorageRules {

    private StorageRules() {
    }

    /** Entries starting at {@code first} may overwrite from just after {@code base} up to one past {@code last}. */
    public static void checkAppend(long first, long base, long last) {
        if (first <= base) {
            throw new IllegalArgumentException("entry " + first + " is at or below the compaction point " + base);
        }
        if (first > last + 1) {
            throw new IllegalArgumentException("entry " + first + " leaves a gap after the last entry " + last);
        }
    }

    /** Snapshots only move forward: the files kept and the log's reference must agree on the newest. */
    public static void checkNewer(Snapshot snapshot, Snapshot current) {
        if (current != null && snapshot.index() < current.index()) {
            throw new IllegalArgumentException("snapshot at " + snapshot.index() + " is older than the stored one at "
                    + current.index());
        }
    }

    /** A local snapshot must cover everything {@code newFirstIndex} drops, and drop only what exists. */
    public static void checkCompact(Snapshot snapshot, long newFirstIndex, Snapshot current, long compactedIndex,
                             long lastIndex) {
        if (snapshot == null) {
            throw new IllegalArgumentException("compaction needs the snapshot that replaces the prefix");
        }
        checkNewer(snapshot, current);
        if (newFirstIndex - 1 > snapshot.index()) {
            throw new IllegalArgumentException("cannot drop entries up to " + (newFirstIndex - 1)
                    + ": the snapshot covers only " + snapshot.index());
        }
        if (newFirstIndex - 1 > lastIndex || snapshot.index() > lastIndex) {
            throw new IllegalArgumentException("snapshot at " + snapshot.index() + " / first index "
                    + newFirstIndex + " beyond the last entry " + lastIndex);
        }
        if (snapshot.index() < compactedIndex) {
            throw new IllegalArgumentException("snapshot at " + snapshot.index()
                    + " is older than the compaction point " + compactedIndex);
        }
    }
}
