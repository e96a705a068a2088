package io.rota.raft.core;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Bad input never reaches the log: an AppendEntries whose entries do not follow prevLogIndex in order,
 * or whose terms go backwards or beyond the sender's term, cannot even be constructed (the transport then
 * closes the connection that carried it).
 */
class MessageValidationTest {

    private static Message.AppendEntries append(long term, long prevIndex, long prevTerm, Entry... entries) {
        return new Message.AppendEntries(term, 1, 2, prevIndex, prevTerm, List.of(entries), 0);
    }

    @Test
    @DisplayName("§5.3: entries must follow prevLogIndex contiguously")
    void entriesMustBeContiguous() {
        assertDoesNotThrow(() -> append(2, 4, 1, Entry.noOp(5, 2), Entry.noOp(6, 2)));
        assertThrows(IllegalArgumentException.class, () -> append(2, 4, 1, Entry.noOp(6, 2)));
        assertThrows(IllegalArgumentException.class, () -> append(2, 4, 1, Entry.noOp(5, 2), Entry.noOp(7, 2)));
    }

    @Test
    @DisplayName("§5.3: terms along a log never decrease and never exceed the leader's term")
    void termsMustBeOrdered() {
        assertThrows(IllegalArgumentException.class, () -> append(3, 4, 2, Entry.noOp(5, 1)));
        assertThrows(IllegalArgumentException.class, () -> append(3, 4, 1, Entry.noOp(5, 2), Entry.noOp(6, 1)));
        assertThrows(IllegalArgumentException.class, () -> append(3, 4, 1, Entry.noOp(5, 4)));
    }
}
