package io.rota.server.watch;

import com.google.protobuf.ByteString;
import io.rota.proto.Event;
import io.rota.proto.KeyValue;
import io.rota.proto.ResponseHeader;
import io.rota.proto.WatchCreateRequest;
import io.rota.proto.WatchResponse;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** One watcher's filter, ordering and bound, without sockets or Raft. */
class WatcherTest {

    private static Event put(String key, long revision) {
        return Event.newBuilder().setType(Event.EventType.PUT).setKv(KeyValue.newBuilder()
                .setKey(ByteString.copyFromUtf8(key)).setModRevision(revision))
                .setPrevKv(KeyValue.newBuilder().setKey(ByteString.copyFromUtf8(key))).build();
    }

    private static WatchResponse.Builder at(long revision) {
        return WatchResponse.newBuilder().setHeader(ResponseHeader.newBuilder().setRevision(revision));
    }

    private static Watcher prefix(String prefix, int max) {
        return new Watcher(7, 1, WatchCreateRequest.newBuilder().setKey(ByteString.copyFromUtf8(prefix))
                .setRangeEnd(ByteString.copyFromUtf8(prefix.substring(0, prefix.length() - 1)
                        + (char) (prefix.charAt(prefix.length() - 1) + 1))).build(), 1, max, WatchAuth.NONE);
    }

    @Test
    void onlyMatchingEventsOnceEachAndPrevKvOnlyWhenAsked() {
        Watcher w = prefix("a/", 100);
        assertTrue(w.offer(1, List.of(put("a/1", 1), put("b/1", 1)), at(1)));
        assertTrue(w.offer(1, List.of(put("a/1", 1)), at(1)), "a revision already seen is skipped");
        assertTrue(w.offer(2, List.of(put("b/2", 2)), at(2)), "nothing matching: nothing queued");
        WatchResponse r = w.poll();
        assertEquals(1, r.getEventsCount());
        assertEquals("a/1", r.getEvents(0).getKv().getKey().toStringUtf8());
        assertFalse(r.getEvents(0).hasPrevKv());
        assertNull(w.poll());
    }

    @Test
    void aWatcherThatFallsBehindIsCanceledWithWhereToResume() {
        Watcher w = prefix("a/", 2);
        assertTrue(w.offer(5, List.of(put("a/1", 5)), at(5)));
        assertTrue(w.offer(6, List.of(put("a/2", 6)), at(6)));
        assertFalse(w.offer(7, List.of(put("a/3", 7)), at(7)));
        WatchResponse last = w.poll();
        assertTrue(last.getCanceled());
        assertTrue(last.getCancelReason().contains("re-watch from revision 5"), last.getCancelReason());
        assertEquals(WatchResponse.CancelCode.FELL_BEHIND, last.getCancelCode(), "the client acts on the code");
        assertEquals(5, last.getResumeRevision(), "and on the typed revision, never on the reason text");
        assertNull(w.poll());
        assertFalse(w.offer(8, List.of(put("a/4", 8)), at(8)), "a canceled watcher takes nothing");
    }

    @Test
    void aRevisionWithNothingInRangeBuildsNoResponseAndAsksForNoWrite() {
        Watcher w = prefix("a/", 100);
        assertEquals(Watcher.Offered.NOTHING, w.offer(3, List.of(put("b/1", 3)), r -> {
            throw new AssertionError("no response is built for a revision with nothing in range");
        }));
        assertEquals(Watcher.Offered.QUEUED, w.offer(4, List.of(put("b/2", 4), put("a/1", 4)), WatcherTest::at));
        assertEquals(Watcher.Offered.NOTHING, w.offer(4, List.of(put("a/1", 4)), WatcherTest::at), "seen already");
        assertEquals(1, w.poll().getEventsCount());
        assertNull(w.poll());
    }

    @Test
    void aCanceledWatcherEndsOnTheNextRevisionEvenWithNothingInRange() {
        Watcher w = prefix("a/", 100);
        w.cancel(at(1).setWatchId(7).setCanceled(true).build());
        assertEquals(Watcher.Offered.ENDED, w.offer(2, List.of(put("b/1", 2)), WatcherTest::at),
                "so the hub forgets it at once instead of checking it on every write");
    }
}
