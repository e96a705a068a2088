package io.rota.chaos.history;

import io.rota.chaos.checker.Operation;
import io.rota.chaos.checker.Operations;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class HistoryRoundTripTest {

    @TempDir
    Path dir;

    private static final List<Event> EVENTS = List.of(
            new Event(0, Event.Type.INVOKE, "write", "k1", "p0-1", null, 10),
            new Event(1, Event.Type.INVOKE, "read", "k1", null, null, 11),
            Event.nemesis("partition", "isolated \"leader\" n2\nfor 5 s", 12),
            new Event(0, Event.Type.OK, "write", "k1", "p0-1", null, 20),
            new Event(1, Event.Type.OK, "read", "k1", "p0-1", null, 21),
            new Event(2, Event.Type.INVOKE, "cas", "k1", Arrays.asList("p0-1", "p2-1"), null, 30),
            new Event(2, Event.Type.OK, "cas", "k1", Arrays.asList("p0-1", "p2-1"), true, 40),
            new Event(3, Event.Type.INVOKE, "cas", "k2", Arrays.asList(null, "p3-1"), null, 50),
            new Event(3, Event.Type.INFO, "cas", "k2", Arrays.asList(null, "p3-1"), null, 60),
            new Event(4, Event.Type.INVOKE, "write", "k2", "p4-1", null, 70),
            new Event(4, Event.Type.FAIL, "write", "k2", "p4-1", null, 80),
            new Event(5, Event.Type.INVOKE, "write", "k\u00e9", "\t\u0001", null, 90));

    @Test
    void eventsRecordedConcurrentlyAreWrittenInTimeOrder() throws InterruptedException {
        Path file = dir.resolve("concurrent.jsonl");
        long origin = System.nanoTime();
        try (HistoryWriter w = new HistoryWriter(file, () -> System.nanoTime() - origin)) {
            List<Thread> threads = new java.util.ArrayList<>();
            for (int p = 0; p < 8; p++) {
                int process = p;
                Thread t = new Thread(() -> {
                    for (int i = 0; i < 2_000; i++) {
                        w.record(process, i % 2 == 0 ? Event.Type.INVOKE : Event.Type.OK, "read", "k", null, null);
                    }
                    w.recordNemesis("pause", "SIGSTOP n" + process);
                });
                threads.add(t);
                t.start();
            }
            for (Thread t : threads) {
                t.join();
            }
        }
        List<Event> events = HistoryReader.read(file);
        assertEquals(8 * 2_001, events.size());
        for (int i = 1; i < events.size(); i++) {
            assertTrue(events.get(i - 1).time() <= events.get(i).time(), "line " + (i + 1) + " goes back in time");
        }
    }

    @Test
    void writesAndReadsBackTheSameEvents() {
        Path file = dir.resolve("history.jsonl");
        try (HistoryWriter w = new HistoryWriter(file)) {
            EVENTS.forEach(w::write);
        }
        assertEquals(EVENTS, HistoryReader.read(file));
    }

    @Test
    void theLineFormatIsTheDocumentedOne() {
        assertEquals("{\"process\": 2, \"type\": \"ok\", \"f\": \"cas\", \"key\": \"k1\", \"value\": [\"p0-1\", \"p2-1\"],"
                + " \"result\": true, \"time\": 40}", HistoryWriter.toJson(EVENTS.get(6)));
        assertTrue(HistoryWriter.toJson(EVENTS.get(2)).startsWith("{\"process\": \"nemesis\", \"type\": \"info\""));
    }

    @Test
    void pairsInvocationsWithCompletions() {
        List<Operation> ops = Operations.of(EVENTS);
        // write ok, read ok, cas ok, cas info, the failed write dropped, the unanswered write indeterminate.
        assertEquals(5, ops.size());
        Operation cas = ops.stream().filter(o -> o.fn() == Operation.Fn.CAS && o.key().equals("k1")).findFirst()
                .orElseThrow();
        assertTrue(cas.casSucceeded());
        assertEquals(2, ops.stream().filter(o -> o.outcome() == Operation.Outcome.INFO).count());
        assertEquals(new History.Counts(3, 1, 2), History.counts(EVENTS));
    }

    @Test
    void aMalformedLineIsReportedWithItsNumber() {
        assertThrows(IllegalArgumentException.class, () -> HistoryReader.parse("{\"process\": 1, \"type\": \"ok\"}"));
        assertThrows(IllegalArgumentException.class, () -> HistoryReader.parse("[1, 2]"));
    }
}
