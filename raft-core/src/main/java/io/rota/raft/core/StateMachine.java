package io.rota.raft.core;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.List;

/**
 * The replicated state machine a driver ({@code io.rota.raft.node.RaftDriver}, in raft-runtime) feeds with
 * committed entries (§5.3: "once an entry is committed, the leader applies the entry to its state machine").
 * It lives in the core, beside {@link Entry}, so that a state machine depends on raft-core alone.
 *
 * <p>The driver calls it from its single thread, in log order. Implementations must be deterministic:
 * no clock, no randomness, no I/O in {@link #apply} — time, when needed, travels inside the entry — so
 * that every replica that applies the same entries reaches the same state (State Machine Safety).
 *
 * <p>Snapshots (§7) come in two halves, as hashicorp/raft's {@code FSM.Snapshot} and
 * {@code FSMSnapshot.Persist}: {@link #capture} on the driver thread, between two applies, and
 * {@link Capture#serialize} later on the driver's snapshot thread while applies go on.
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

    /**
     * A point-in-time image of the whole state as of the last applied entry. It runs on the driver
     * thread, which does nothing else meanwhile — no heartbeat, no vote, no apply — so it must be cheap:
     * copy references to immutable values, not bytes. The image must not share anything a later
     * {@link #apply} changes, because it is serialised while those applies run.
     */
    Capture capture();

    /**
     * Replace the whole state by an image from {@link Capture#writeTo}, possibly taken on another replica,
     * read from {@code image} to its end (the caller closes it).
     *
     * @throws IOException if the image cannot be read
     */
    void restore(InputStream image) throws IOException;

    /** {@link #restore(InputStream)} from an image in memory: small images, in tests and tools. */
    default void restore(byte[] image) {
        try {
            restore(new ByteArrayInputStream(image));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A state captured by {@link #capture()}, to be written out off the driver thread. */
    @FunctionalInterface
    interface Capture {

        /** Writes the image for {@link #restore} to {@code out}; runs on the snapshot thread and may take long. */
        void writeTo(OutputStream out) throws IOException;

        /** The image in memory: small images, in tests and tools. */
        default byte[] serialize() {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            try {
                writeTo(out);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return out.toByteArray();
        }
    }
}
