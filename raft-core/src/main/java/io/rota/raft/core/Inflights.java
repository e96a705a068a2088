package io.rota.raft.core;

import java.util.ArrayDeque;

/**
 * AppendEntries sent to one follower and not yet acknowledged, bounded in count and bytes so that a
 * pipelining leader (§10.2.2) never floods a slow follower or its own memory.
 */
final class Inflights {

    private record InFlight(long lastIndex, long bytes) {
    }

    private final int maxMessages;
    private final long maxBytes;
    private final ArrayDeque<InFlight> queue = new ArrayDeque<>();
    private long bytes;

    Inflights(int maxMessages, long maxBytes) {
        this.maxMessages = maxMessages;
        this.maxBytes = maxBytes;
    }

    void add(long lastIndex, long messageBytes) {
        queue.addLast(new InFlight(lastIndex, messageBytes));
        bytes += messageBytes;
    }

    /** Forget every message whose last entry is at or below {@code index}: it has been acknowledged. */
    void freeTo(long index) {
        while (!queue.isEmpty() && queue.peekFirst().lastIndex() <= index) {
            bytes -= queue.removeFirst().bytes();
        }
    }

    /** Forget the oldest message in flight, to let one more through. */
    void freeFirst() {
        if (!queue.isEmpty()) {
            bytes -= queue.removeFirst().bytes();
        }
    }

    boolean full() {
        return queue.size() >= maxMessages || bytes >= maxBytes;
    }

    int count() {
        return queue.size();
    }

    void reset() {
        queue.clear();
        bytes = 0;
    }
}
