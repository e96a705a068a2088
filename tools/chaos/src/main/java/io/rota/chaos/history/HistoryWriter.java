package io.rota.chaos.history;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * Appends events to a history file as JSON lines ({@link Event} documents the format). Thread-safe: client
 * threads and the nemesis write concurrently; each line is written whole. Nothing is kept in memory.
 *
 * <p>{@link #record} and {@link #recordNemesis} read the run's clock while holding the writer's lock, so the
 * file is in time order: a thread that read the clock and then waited for the lock would otherwise write an
 * earlier time after a later one.
 */
public final class HistoryWriter implements AutoCloseable {

    private final BufferedWriter out;
    private final LongSupplier clock;

    /**
     * Creates (or truncates) {@code file}, for events that carry their own times ({@link #write}); tests and
     * tools use it. {@link #record} needs a clock: see {@link #HistoryWriter(Path, LongSupplier)}.
     *
     * @param file where the history goes
     */
    public HistoryWriter(Path file) {
        this(file, () -> {
            throw new IllegalStateException("this history writer has no clock: write events with their times");
        });
    }

    /**
     * Creates (or truncates) {@code file}.
     *
     * @param file  where the history goes
     * @param clock the run's clock: nanoseconds since it started, read inside the lock for each event
     */
    public HistoryWriter(Path file, LongSupplier clock) {
        this.clock = clock;
        try {
            this.out = Files.newBufferedWriter(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the history file " + file, e);
        }
    }

    /**
     * Appends a client event stamped with the run's clock, read under the lock.
     *
     * @param process the client process
     * @param type    invoke, ok, fail or info
     * @param f       the operation
     * @param key     the key
     * @param value   see {@link Event#value()}
     * @param result  see {@link Event#result()}
     * @return the event's time
     */
    public synchronized long record(int process, Event.Type type, String f, String key, Object value, Boolean result) {
        long time = clock.getAsLong();
        write(new Event(process, type, f, key, value, result, time));
        return time;
    }

    /**
     * Appends a nemesis event stamped with the run's clock, read under the lock.
     *
     * @param f           the fault's name, or "heal"
     * @param description what was done
     * @return the event's time
     */
    public synchronized long recordNemesis(String f, String description) {
        long time = clock.getAsLong();
        write(Event.nemesis(f, description, time));
        return time;
    }

    /**
     * Appends one event with the time it carries (the caller keeps the file in time order).
     *
     * @param e the event
     */
    public synchronized void write(Event e) {
        try {
            out.write(toJson(e));
            out.newLine();
        } catch (IOException ex) {
            throw new UncheckedIOException("cannot write the history", ex);
        }
    }

    /** Flushes what was written so far to the file (so a crash loses little). */
    public synchronized void flush() {
        try {
            out.flush();
        } catch (IOException ex) {
            throw new UncheckedIOException("cannot write the history", ex);
        }
    }

    /** Flushes and closes the file. */
    @Override
    public synchronized void close() {
        try {
            out.close();
        } catch (IOException ex) {
            throw new UncheckedIOException("cannot close the history", ex);
        }
    }

    /**
     * One event as a JSON line (without the newline).
     *
     * @param e the event
     * @return its JSON object
     */
    public static String toJson(Event e) {
        StringBuilder s = new StringBuilder(128).append("{\"process\": ")
                .append(e.isNemesis() ? "\"nemesis\"" : Integer.toString(e.process()))
                .append(", \"type\": \"").append(e.type().json()).append('"')
                .append(", \"f\": ").append(Json.quote(e.f()));
        if (!e.isNemesis()) {
            s.append(", \"key\": ").append(Json.quote(e.key()));
        }
        s.append(", \"value\": ");
        if (e.value() instanceof List<?> pair) {
            s.append('[').append(Json.quote((String) pair.get(0))).append(", ")
                    .append(Json.quote((String) pair.get(1))).append(']');
        } else {
            s.append(Json.quote((String) e.value()));
        }
        if (e.result() != null) {
            s.append(", \"result\": ").append(e.result());
        }
        return s.append(", \"time\": ").append(e.time()).append('}').toString();
    }
}
