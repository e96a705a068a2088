package io.rota.server.session;

import io.rota.proto.CommandResult;

import java.util.Collections;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * One client session (Raft thesis §6.3): the responses to the client's latest sequences, so a retried
 * request is answered from memory instead of being applied twice.
 *
 * <p>The window is bounded: when it overflows, the oldest sequence is forgotten and every sequence up to
 * it is refused from then on (its response is unknown, and applying it again could apply it twice).
 */
public final class Session {

    private final long clientId;
    private final int window;
    private final TreeMap<Long, CommandResult> responses = new TreeMap<>();
    private long lastActiveMs;
    private long forgottenThrough;

    Session(long clientId, int window, long lastActiveMs) {
        this.clientId = clientId;
        this.window = window;
        this.lastActiveMs = lastActiveMs;
    }

    public long clientId() {
        return clientId;
    }

    public long lastActiveMs() {
        return lastActiveMs;
    }

    void touch(long nowMs) {
        lastActiveMs = nowMs;
    }

    /** The remembered response to {@code sequence}, if it was applied and is still in the window. */
    public Optional<CommandResult> remembered(long sequence) {
        return Optional.ofNullable(responses.get(sequence));
    }

    /** True if {@code sequence} may have been applied but its response is no longer remembered. */
    public boolean forgotten(long sequence) {
        return sequence <= forgottenThrough && !responses.containsKey(sequence);
    }

    public void remember(long sequence, CommandResult result) {
        responses.put(sequence, result);
        while (responses.size() > window) {
            forgottenThrough = Math.max(forgottenThrough, responses.pollFirstEntry().getKey());
        }
    }

    /**
     * The client will never retry a sequence below {@code firstIncomplete} (thesis §6.3): their responses
     * are dropped, and a late copy of any of them is refused rather than applied after the client moved on.
     */
    public void discardBelow(long firstIncomplete) {
        responses.headMap(firstIncomplete).clear();
        forgottenThrough = Math.max(forgottenThrough, firstIncomplete - 1);
    }

    public long forgottenThrough() {
        return forgottenThrough;
    }

    /** Sequence → response, ascending. */
    public Map<Long, CommandResult> responses() {
        return Collections.unmodifiableMap(responses);
    }

    void restore(long forgottenThrough, Map<Long, CommandResult> remembered) {
        this.forgottenThrough = forgottenThrough;
        responses.putAll(remembered);
    }
}
