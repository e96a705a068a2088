package io.rota.chaos.history;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Appends events to a history file as JSON lines ({@link Event} documents the format). Thread-safe: client
 * threads and the nemesis write concurrently; each line is written whole. Nothing is kept in memory.
 */
public final class HistoryWriter implements AutoCloseable {

    private final BufferedWriter out;

    /**
     * Creates (or truncates) {@code file}.
     *
     * @param file where the history goes
     */
    public HistoryWriter(Path file) {
        try {
            this.out = Files.newBufferedWriter(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the history file " + file, e);
        }
    }

    /**
     * Appends one event.
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
