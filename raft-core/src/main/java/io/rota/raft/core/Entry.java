package io.rota.raft.core;

import java.util.Objects;

/**
 * One slot of the replicated log (Figure 2, "log[]": "each entry contains command for state machine,
 * and term when entry was received by leader (first index is 1)").
 *
 * <p>Entries are immutable once created: a leader never rewrites its log (§5.3, Leader Append-Only),
 * so the same {@code Entry} object can be shared by the log, a {@link Ready} and messages.
 *
 * @param index position in the log, starting at 1
 * @param term  term of the leader that created the entry
 * @param type  what the entry carries
 * @param data  the command bytes; empty for a {@link Type#NO_OP}; the encoded {@link Configuration} for a
 *              {@link Type#CONFIGURATION}. Never modified after construction.
 */
public record Entry(long index, long term, Type type, byte[] data) {

    /** What an entry carries. */
    public enum Type {
        /** A client command for the state machine. */
        COMMAND,
        /** The empty entry a new leader appends to commit entries of earlier terms (§5.4.2, §8). */
        NO_OP,
        /**
         * A new cluster configuration ({@link Configuration#encode()}), in force on each server from the
         * moment the entry is appended to its log (§4.1). Not a command: state machines skip it.
         */
        CONFIGURATION
    }

    private static final byte[] EMPTY = new byte[0];

    public Entry {
        if (index < 1) {
            throw new IllegalArgumentException("entry index starts at 1, got " + index);
        }
        if (term < 1) {
            throw new IllegalArgumentException("entry term starts at 1, got " + term);
        }
        Objects.requireNonNull(type, "type");
        data = data == null ? EMPTY : data;
    }

    public static Entry command(long index, long term, byte[] data) {
        return new Entry(index, term, Type.COMMAND, data);
    }

    public static Entry noOp(long index, long term) {
        return new Entry(index, term, Type.NO_OP, EMPTY);
    }

    /** A configuration entry (§4.1) carrying {@code configuration}. */
    public static Entry configuration(long index, long term, Configuration configuration) {
        return new Entry(index, term, Type.CONFIGURATION, configuration.encode());
    }

    /** Bytes this entry counts for in message-size, in-flight and uncommitted-size limits. */
    public long sizeBytes() {
        return data.length + 24L;
    }

    @Override
    public String toString() {
        String what = switch (type) {
            case NO_OP -> " no-op";
            case CONFIGURATION -> " configuration";
            case COMMAND -> " " + data.length + "B";
        };
        return "Entry{" + index + "@" + term + what + "}";
    }
}
