package io.rota.client;

import com.google.protobuf.ByteString;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * One registered session (Raft thesis §6.3): the server's client id, this client's sequence numbers, and
 * its window. The cluster remembers the session's latest {@code window} responses
 * ({@code RegisterSessionResponse.remembered_responses}); a sequence the client may still retry must stay
 * within that many of the oldest unanswered one, or its retry would be refused as "outcome unknown". So a
 * call whose sequence would reach past it waits here for older calls to end.
 *
 * <p>Thread-safe. Generic in what waits ({@code W}), so it can be tested without calls or a server.
 *
 * @param <W> what is admitted: a call waiting for its sequence
 */
final class ClientSession<W> {

    /** The window when the server does not say (remembered_responses 0): a conservative one. */
    static final int DEFAULT_WINDOW = 64;

    /** The server's id for this client; every request of the session carries it. */
    final long clientId;
    /** The session's secret from the cluster (issue 31); every request of the session carries it. */
    final ByteString secret;
    private final int window;
    /** The last sequence given out; sequences start at 1 and each new request takes the next. */
    private long lastSequence;
    /** Sequences given out whose calls have not ended; the lowest is {@link #firstIncomplete()}. */
    private final TreeSet<Long> inFlight = new TreeSet<>();
    /** Calls waiting for a sequence, in arrival order (a later call never overtakes an earlier one). */
    private final ArrayDeque<W> waiting = new ArrayDeque<>();

    ClientSession(long clientId, ByteString secret, int window) {
        this.clientId = clientId;
        this.secret = secret;
        this.window = window > 0 ? window : DEFAULT_WINDOW;
    }

    /** {@code waiter}'s sequence, or 0 if it must wait for an older call to end (see {@link #ended}). */
    synchronized long admit(W waiter) {
        if (!waiting.isEmpty() || !fits()) {
            waiting.add(waiter);
            return 0;
        }
        return take();
    }

    /** {@code sequence} ended (answered or given up): the waiting calls that now fit, in order, with theirs. */
    synchronized List<Map.Entry<W, Long>> ended(long sequence) {
        inFlight.remove(sequence);
        List<Map.Entry<W, Long>> admitted = new ArrayList<>();
        while (!waiting.isEmpty() && fits()) {
            admitted.add(Map.entry(waiting.poll(), take()));
        }
        return admitted;
    }

    /** The lowest sequence still in flight, told to the cluster with each request (§6.3); 0 if none. */
    synchronized long firstIncomplete() {
        return inFlight.isEmpty() ? 0 : inFlight.first();
    }

    private boolean fits() {
        return inFlight.isEmpty() || lastSequence + 1 - inFlight.first() < window;
    }

    private long take() {
        inFlight.add(++lastSequence);
        return lastSequence;
    }
}
