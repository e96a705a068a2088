package io.rota.server.fuzz;

import io.rota.proto.AppendEntries;
import io.rota.proto.Heartbeat;
import io.rota.proto.RaftMessage;
import io.rota.proto.RequestVote;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.util.Iterator;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** The peer fuzz's garbage never carries a term: a message of the current term under a member's name is obeyed. */
@Tag("cluster")
class PeerPortFuzzerTest {

    @Test
    void termOfReadsWhicheverMessageIsSet() {
        assertEquals(0, PeerPortFuzzer.termOf(heartbeat(Heartbeat.newBuilder().setFrom(2))));
        assertEquals(2, PeerPortFuzzer.termOf(heartbeat(Heartbeat.newBuilder().setTerm(2))));
        assertEquals(7, PeerPortFuzzer.termOf(RaftMessage.newBuilder()
                .setAppendEntries(AppendEntries.newBuilder().setTerm(7)).build()));
        assertEquals(Long.MAX_VALUE, PeerPortFuzzer.termOf(RaftMessage.newBuilder()
                .setRequestVote(RequestVote.newBuilder().setTerm(Long.MAX_VALUE)).build()));
    }

    @Test
    void garbageThatParsesWithATermIsDrawnAgain() {
        byte[] withTerm = heartbeat(Heartbeat.newBuilder().setTerm(2).setFrom(1)).toByteArray();
        byte[] stale = heartbeat(Heartbeat.newBuilder().setFrom(2)).toByteArray();
        byte[] unparseable = {(byte) 0xFF, (byte) 0xFF};
        Iterator<byte[]> draws = List.of(withTerm, stale).iterator();
        assertArrayEquals(stale, PeerPortFuzzer.staleIfParsed(draws::next));
        Iterator<byte[]> more = List.of(withTerm, withTerm, unparseable).iterator();
        assertArrayEquals(unparseable, PeerPortFuzzer.staleIfParsed(more::next));
    }

    private static RaftMessage heartbeat(Heartbeat.Builder h) {
        return RaftMessage.newBuilder().setHeartbeat(h).build();
    }
}
