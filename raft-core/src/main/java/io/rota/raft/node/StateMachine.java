package io.rota.raft.node;

import io.rota.raft.core.Entry;

import java.util.List;

/**
 * The replicated state machine a {@link RaftDriver} feeds with committed entries (§5.3: "once an entry is
 * committed, the leader applies the entry to its state machine").
 *
 * <p>The driver calls it from its single thread, in log order. Implementations must be deterministic:
 * no clock, no randomness, no I/O in {@link #apply} — time, when needed, travels inside the entry — so
 * that every replica that applies the same entries reaches the same state (State Machine Safety).
 *
 * @param <R> the result of applying one command, handed to the proposer
 */
public interface StateMachine<R> {

    /**
     * Apply committed entries in index order, with no gaps, and return one result per entry ({@code null}
     * for entries that carry no command: {@link Entry.Type#NO_OP} and {@link Entry.Type#CONFIGURATION};
     * apply only {@link Entry.Type#COMMAND} entries).
     */
    List<R> apply(List<Entry> committed);

    /** An image of the whole state as of the last applied entry (§7). */
    byte[] snapshot();

    /** Replace the whole state by an image from {@link #snapshot()}, possibly taken on another replica. */
    void restore(byte[] snapshot);
}
