package io.rota.chaos.history;

import io.rota.testkit.JsonText;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Reads a history file written by {@link HistoryWriter} back into events, for the {@code check FILE} mode. */
public final class HistoryReader {

    private HistoryReader() {
    }

    /**
     * Reads every event of a history file (blank lines are skipped).
     *
     * @param file a JSON-lines history
     * @return its events, in file order
     * @throws IllegalArgumentException naming the line if one is malformed
     */
    public static List<Event> read(Path file) {
        List<Event> events = new ArrayList<>();
        try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            String line;
            int number = 0;
            while ((line = in.readLine()) != null) {
                number++;
                if (line.isBlank()) {
                    continue;
                }
                try {
                    events.add(parse(line));
                } catch (IllegalArgumentException | ClassCastException | NullPointerException e) {
                    throw new IllegalArgumentException(file + " line " + number + ": " + e.getMessage(), e);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the history " + file, e);
        }
        return events;
    }

    /**
     * Parses one JSON line.
     *
     * @param line a JSON object as {@link HistoryWriter#toJson} writes it
     * @return the event
     * @throws IllegalArgumentException if a field is missing or of the wrong kind
     */
    public static Event parse(String line) {
        Map<String, Object> o = JsonText.parseObject(line);
        Object process = require(o, "process");
        int p = "nemesis".equals(process) ? Event.NEMESIS : Math.toIntExact((Long) process);
        Event.Type type = Event.Type.valueOf(((String) require(o, "type")).toUpperCase(java.util.Locale.ROOT));
        long time = (Long) require(o, "time");
        return new Event(p, type, (String) require(o, "f"), (String) o.get("key"), o.get("value"),
                (Boolean) o.get("result"), time);
    }

    private static Object require(Map<String, Object> o, String field) {
        if (!o.containsKey(field) || o.get(field) == null) {
            throw new IllegalArgumentException("missing \"" + field + "\"");
        }
        return o.get(field);
    }
}
