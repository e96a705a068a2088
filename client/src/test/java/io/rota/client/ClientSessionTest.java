package io.rota.client;

import com.google.protobuf.ByteString;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** A session's sequences and its window gate (thesis §6.3; issue 11's first_incomplete), without a server. */
class ClientSessionTest {

    @Test
    @DisplayName("sequences start at 1 and each new call takes the next; first_incomplete is the lowest in flight")
    void sequencesAndFirstIncomplete() {
        ClientSession<String> s = new ClientSession<>(9, ByteString.EMPTY, 8);
        assertEquals(9, s.clientId);
        assertEquals(0, s.firstIncomplete(), "nothing in flight");
        assertEquals(1, s.admit("a"));
        assertEquals(2, s.admit("b"));
        assertEquals(3, s.admit("c"));
        assertEquals(1, s.firstIncomplete());
        s.ended(1);
        assertEquals(2, s.firstIncomplete());
        s.ended(3);
        assertEquals(2, s.firstIncomplete(), "an answered later call does not move it past an older one");
        s.ended(2);
        assertEquals(0, s.firstIncomplete());
        assertEquals(4, s.admit("d"), "sequences are never reused");
    }

    @Test
    @DisplayName("a call whose sequence would be a window past the oldest in flight waits; the oldest's end admits it")
    void theWindowGate() {
        ClientSession<String> s = new ClientSession<>(1, ByteString.EMPTY, 2);
        assertEquals(1, s.admit("a"));
        assertEquals(2, s.admit("b"));
        assertEquals(0, s.admit("c"), "3 would be 2 past 1: waits");
        assertEquals(List.of(), s.ended(2), "1 is still in flight: c still does not fit");
        assertEquals(List.of(Map.entry("c", 3L)), s.ended(1));
        assertEquals(3, s.firstIncomplete());
    }

    @Test
    @DisplayName("waiting calls are admitted in arrival order, as many as fit")
    void waitingCallsAreAdmittedInOrder() {
        ClientSession<String> s = new ClientSession<>(1, ByteString.EMPTY, 2);
        s.admit("a");
        s.admit("b");
        assertEquals(0, s.admit("c"));
        assertEquals(0, s.admit("d"));
        assertEquals(List.of(), s.ended(2));
        assertEquals(List.of(Map.entry("c", 3L), Map.entry("d", 4L)), s.ended(1), "3 and 4 are within 2 of 3");
        assertEquals(0, s.admit("e"), "5 would be 2 past 3");
    }

    @Test
    @DisplayName("a server that does not say its remembered responses gets the default window")
    void defaultWindow() {
        ClientSession<Integer> s = new ClientSession<>(1, ByteString.EMPTY, 0);
        for (int i = 1; i <= ClientSession.DEFAULT_WINDOW; i++) {
            assertEquals(i, s.admit(i));
        }
        assertEquals(0, s.admit(-1), "the window is full");
    }
}
