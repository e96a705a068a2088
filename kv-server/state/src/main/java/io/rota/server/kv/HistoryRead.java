package io.rota.server.kv;

import io.rota.proto.Event;

import java.util.List;

/**
 * What {@link EventHistory#read} found: either the events from the start revision on, or that the start
 * is compacted (then {@code events} is empty and the watcher gets COMPACTED with {@code compactRevision}).
 *
 * @param compacted       the start revision is at or below {@code compactRevision}
 * @param compactRevision the revision the history is compacted at; events after it are all retained
 * @param events          events with revision &ge; the start, oldest first
 */
public record HistoryRead(boolean compacted, long compactRevision, List<Event> events) {
}
