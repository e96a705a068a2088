package io.rota.server.kv;

import io.rota.proto.Error;
import io.rota.proto.Event;
import io.rota.proto.RangeRequest;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static io.rota.server.kv.Harness.b;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The watch feed: events per revision to a listener, and a bounded history to resume from. */
class EventsTest {

    private final Harness h = new Harness();

    @Test
    void everyWriteIsReportedWithItsRevisionAndPrevKv() {
        List<String> seen = new ArrayList<>();
        h.sm.setListener((rev, events) -> events.forEach(e -> seen.add(rev + " " + e.getType() + " "
                + e.getKv().getKey().toStringUtf8() + " prev=" + e.getPrevKv().getValue().toStringUtf8())));
        h.put("a", "1");
        h.put("a", "2");
        h.delete("a", "");
        h.delete("a", "");     // deletes nothing: no revision, no event
        assertEquals(List.of("2 PUT a prev=", "3 PUT a prev=1", "4 DELETE a prev=2"), seen);
    }

    @Test
    void historyResumesFromAStartRevision() {
        h.put("a", "1");   // 2
        h.put("b", "1");   // 3
        h.put("a", "2");   // 4
        HistoryRead read = h.sm.history(3);
        assertFalse(read.compacted());
        assertEquals(List.of(3L, 4L), read.events().stream().map(e -> e.getKv().getModRevision()).toList());
        assertTrue(h.sm.history(5).events().isEmpty());   // the future: nothing yet
        assertEquals(Event.EventType.DELETE, eventAfterDelete().getType());
    }

    @Test
    void aWatchFromRevisionOneOnAFreshStoreReplaysEveryWrite() {
        // Regression (found by SdkFailoverProcessTest and CrashConsistencyProcessTest): revision 1 holds no event, yet a
        // watch from 1 was refused as COMPACTED at 1 before any history had been dropped.
        assertFalse(h.sm.history(1).compacted());
        h.put("a", "1");   // 2
        h.put("b", "1");   // 3
        HistoryRead fromOne = h.sm.history(1);
        assertFalse(fromOne.compacted());
        assertEquals(List.of(2L, 3L), fromOne.events().stream().map(e -> e.getKv().getModRevision()).toList());
    }

    private Event eventAfterDelete() {
        h.delete("a", "");
        List<Event> events = h.sm.history(h.sm.revision()).events();
        assertEquals(h.sm.revision(), events.get(0).getKv().getModRevision());
        return events.get(0);
    }

    @Test
    void historyIsBoundedByWholeRevisionsAndOlderStartsAreCompacted() {
        int max = Harness.LIMITS.maxHistoryEvents();
        for (int i = 0; i < max + 10; i++) {
            h.put("k" + (i % 7), "v" + i);
        }
        long current = h.sm.revision();
        HistoryRead tooOld = h.sm.history(2);
        assertTrue(tooOld.compacted());
        long compact = tooOld.compactRevision();
        assertEquals(current - max, compact);
        HistoryRead resumed = h.sm.history(compact + 1);
        assertFalse(resumed.compacted());
        assertEquals(max, resumed.events().size());

        // Reads at a past revision follow the same window: at the compact revision yes, before it COMPACTED.
        RangeRequest.Builder all = RangeRequest.newBuilder().setKey(b("\0")).setRangeEnd(b("\0"));
        assertEquals(7, h.sm.range(all.clone().setRevision(compact).build()).getCount());
        StoreException e = assertThrows(StoreException.class, () -> h.sm.range(all.clone().setRevision(compact - 1).build()));
        assertEquals(Error.Code.COMPACTED, e.error().getCode());
        assertEquals(compact, e.error().getCompactRevision());
    }

    @Test
    void aRevisionLargerThanTheWholeHistoryCompactsEverything() {
        Harness small = new Harness(Harness.LIMITS.toBuilder().maxHistoryEvents(2).build());
        long lease = small.grant(10);
        small.put("a", "1", lease);
        small.put("b", "1", lease);
        small.put("c", "1", lease);
        small.revoke(lease);               // three events in one revision > 2
        assertEquals(small.sm.revision(), small.sm.history(1).compactRevision());
        assertFalse(small.sm.history(small.sm.revision() + 1).compacted());
    }
}
