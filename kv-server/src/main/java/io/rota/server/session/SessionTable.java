package io.rota.server.session;

import io.rota.proto.CommandResult;

import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The live client sessions (Raft thesis §6.3). Every replica expires and evicts sessions by the same
 * rules from the same log, so they agree on which clients are known: a session expires when no request
 * of it arrived for the session TTL in log time; registering beyond the bound evicts the least recently
 * active session (the thesis's LRU policy).
 */
public final class SessionTable {

    private static final Comparator<Session> BY_ACTIVITY =
            Comparator.comparingLong(Session::lastActiveMs).thenComparingLong(Session::clientId);

    private final int maxSessions;
    private final long ttlMs;
    private final int window;
    private final TreeMap<Long, Session> byId = new TreeMap<>();
    private final TreeSet<Session> byActivity = new TreeSet<>(BY_ACTIVITY);

    public SessionTable(int maxSessions, long ttlMs, int window) {
        this.maxSessions = maxSessions;
        this.ttlMs = ttlMs;
        this.window = window;
    }

    public long ttlMs() {
        return ttlMs;
    }

    /** Responses remembered per session (the window a client must keep its retries within). */
    public int window() {
        return window;
    }

    public Session register(long clientId, long nowMs) {
        while (byId.size() >= maxSessions) {
            byId.remove(byActivity.pollFirst().clientId());
        }
        return add(new Session(clientId, window, nowMs));
    }

    private Session add(Session s) {
        byId.put(s.clientId(), s);
        byActivity.add(s);
        return s;
    }

    /** The live session, or null if it never existed, expired or was evicted. */
    public Session get(long clientId) {
        return byId.get(clientId);
    }

    /** A request of the session arrived at log time {@code nowMs}. */
    public void touch(Session s, long nowMs) {
        // Re-insert: the activity order is part of the TreeSet's structure.
        byActivity.remove(s);
        s.touch(nowMs);
        byActivity.add(s);
    }

    /** Drop every session idle for longer than the TTL at log time {@code nowMs}. */
    public void expire(long nowMs) {
        while (!byActivity.isEmpty() && nowMs - byActivity.first().lastActiveMs() > ttlMs) {
            byId.remove(byActivity.pollFirst().clientId());
        }
    }

    /** Sorted by client id. */
    public Collection<Session> all() {
        return Collections.unmodifiableCollection(byId.values());
    }

    public void clear() {
        byId.clear();
        byActivity.clear();
    }

    public void restore(long clientId, long lastActiveMs, long forgottenThrough, Map<Long, CommandResult> remembered) {
        Session s = new Session(clientId, window, lastActiveMs);
        s.restore(forgottenThrough, remembered);
        add(s);
    }
}
