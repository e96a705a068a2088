package io.rota.bench.driver;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class WorkloadsTest {

    /** Writes acknowledged after a millisecond; its watchers see each write twice (or never). */
    private static final class FakeTarget implements Target {
        final AtomicInteger watchesOpen = new AtomicInteger();
        int eventsPerWrite = 2;
        LongAdder events;

        @Override
        public void open(String endpoints) {
        }

        @Override
        public String clientLibrary() {
            return "fake";
        }

        @Override
        public void prepare(int keys, byte[] value) {
        }

        @Override
        public CompletionStage<?> write(int key, byte[] value) {
            LongAdder counter = events;
            if (counter != null) {
                counter.add(eventsPerWrite);
            }
            // Acknowledged a moment later, on another thread, as a real client's write is.
            return CompletableFuture.runAsync(() -> { },
                    CompletableFuture.delayedExecutor(1, java.util.concurrent.TimeUnit.MILLISECONDS));
        }

        @Override
        public CompletionStage<?> read(int key, boolean linearizable) {
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public LockClient newLockClient() {
            throw new UnsupportedOperationException();
        }

        @Override
        public AutoCloseable watch(int watchers, int connections, LongAdder counter) {
            watchesOpen.addAndGet(watchers);
            events = counter;
            return () -> {
                watchesOpen.addAndGet(-watchers);
                events = null;
            };
        }

        @Override
        public void close() {
        }
    }

    @Test
    void watchedWritesReportTheEventsDeliveredPerWriteInsideTheWindowAndCloseTheWatches() throws Exception {
        FakeTarget target = new FakeTarget();
        Map<String, String> result = run(target);
        assertEquals("write-1-watched", result.get("workload"));
        long ops = Long.parseLong(result.get("ops"));
        assertTrue(ops > 0, "writes counted: " + result);
        // Events are counted by arrival and writes by completion inside the window: the edges move it a little.
        double perWrite = Double.parseDouble(result.get("events_per_write"));
        assertTrue(perWrite > 1.8 && perWrite < 2.2, "about 2 events per write: " + result);
        assertEquals(0, target.watchesOpen.get(), "the watches are closed after the workload");
    }

    @Test
    void watchersThatSeeNothingShowZeroEventsPerWrite() throws Exception {
        FakeTarget target = new FakeTarget();
        target.eventsPerWrite = 0;
        assertEquals("0.00", run(target).get("events_per_write"));
    }

    private static Map<String, String> run(FakeTarget target) throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        new Workloads(target, out, 20, 300).watchedWrites(1);
        for (String line : bytes.toString(StandardCharsets.UTF_8).split("\n")) {
            if (Markers.RESULT.equals(Markers.kind(line))) {
                return Markers.fields(line);
            }
        }
        throw new AssertionError("no result line in:\n" + bytes);
    }
}
