package io.rota.server.session;

import com.google.protobuf.ByteString;
import io.rota.proto.CommandResult;

import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The live client sessions (Raft thesis §6.3). Every replica expires and evicts sessions by the same
 * rules from the same log, so they agree on which clients are known: a session expires when no request
 * of it arrived for the session TTL in log time; registering beyond the bound evicts the least recently
 * active session (the thesis's LRU policy).
 *
 * <p>Remembered responses are bounded in bytes, per session and in total (issue 31): over the total, the
 * least recently active sessions forget their responses (a retry of them is then "outcome unknown").
 */
public final class SessionTable {

    private static final Comparator<Session> BY_ACTIVITY =
            Comparator.comparingLong(Session::lastActiveMs).thenComparingLong(Session::clientId);

    private final int maxSessions;
    private final long ttlMs;
    private final int window;
    private final long maxBytesPerSession;
    private final long maxBytesTotal;
    private final TreeMap<Long, Session> byId = new TreeMap<>();
    private final TreeSet<Session> byActivity = new TreeSet<>(BY_ACTIVITY);
    /**
     * Each owner's sessions in activity order, for the per-user bound (issue 33): a caller past its bound evicts
     * its own least recently active session, never another's.
     */
    private final Map<String, TreeSet<Session>> byOwner = new HashMap<>();
    /** The sum of every session's {@link Session#rememberedBytes()}. */
    private long rememberedBytes;

    public SessionTable(int maxSessions, long ttlMs, int window, long maxBytesPerSession, long maxBytesTotal) {
        this.maxSessions = maxSessions;
        this.ttlMs = ttlMs;
        this.window = window;
        this.maxBytesPerSession = maxBytesPerSession;
        this.maxBytesTotal = maxBytesTotal;
    }

    public long ttlMs() {
        return ttlMs;
    }

    /** Responses remembered per session (the window a client must keep its retries within). */
    public int window() {
        return window;
    }

    /** A session of {@code owner} with {@code secret}, registered by the entry at {@code clientId}. */
    public Session register(long clientId, String owner, ByteString secret, long nowMs) {
        return register(clientId, owner, secret, nowMs, 0);
    }

    /**
     * As {@link #register(long, String, ByteString, long)}, with {@code ownerBound} (0: none) on the sessions of
     * {@code owner}: at it, the owner's own least recently active session goes first (issue 33), so one caller
     * registering without end evicts only its own sessions once it holds its bound.
     */
    public Session register(long clientId, String owner, ByteString secret, long nowMs, int ownerBound) {
        TreeSet<Session> own = byOwner.get(owner);
        while (ownerBound > 0 && own != null && own.size() >= ownerBound) {
            remove(own.first());
            own = byOwner.get(owner);
        }
        while (byId.size() >= maxSessions) {
            remove(byActivity.first());
        }
        return add(new Session(clientId, owner, secret, window, maxBytesPerSession, nowMs));
    }

    /** How many live sessions {@code owner} registered. */
    public int countOf(String owner) {
        TreeSet<Session> own = byOwner.get(owner);
        return own == null ? 0 : own.size();
    }

    private Session add(Session s) {
        byId.put(s.clientId(), s);
        byActivity.add(s);
        byOwner.computeIfAbsent(s.owner(), o -> new TreeSet<>(BY_ACTIVITY)).add(s);
        rememberedBytes += s.rememberedBytes();
        return s;
    }

    private void remove(Session s) {
        byId.remove(s.clientId());
        byActivity.remove(s);
        TreeSet<Session> own = byOwner.get(s.owner());
        own.remove(s);
        if (own.isEmpty()) {
            byOwner.remove(s.owner());
        }
        rememberedBytes -= s.rememberedBytes();
    }

    /** The live session, or null if it never existed, expired or was evicted. */
    public Session get(long clientId) {
        return byId.get(clientId);
    }

    /** A request of the session arrived at log time {@code nowMs}. */
    public void touch(Session s, long nowMs) {
        // Re-insert: the activity order is part of the TreeSet's structure.
        byActivity.remove(s);
        TreeSet<Session> own = byOwner.get(s.owner());
        own.remove(s);
        s.touch(nowMs);
        byActivity.add(s);
        own.add(s);
    }

    /** {@link Session#discardBelow}, keeping the total count of bytes. */
    public void discardBelow(Session s, long firstIncomplete) {
        long before = s.rememberedBytes();
        s.discardBelow(firstIncomplete);
        rememberedBytes += s.rememberedBytes() - before;
    }

    /**
     * Remembers {@code result} for {@code sequence} of {@code s}; over the total byte bound, the least recently
     * active sessions forget their responses, in order, until it holds again ({@code s} last, as it is the most
     * recently active).
     */
    public void remember(Session s, long sequence, CommandResult result) {
        long before = s.rememberedBytes();
        s.remember(sequence, result);
        rememberedBytes += s.rememberedBytes() - before;
        for (Session oldest : byActivity) {
            if (rememberedBytes <= maxBytesTotal) {
                break;
            }
            rememberedBytes -= oldest.rememberedBytes();
            oldest.forgetAll();
        }
    }

    /** The serialized bytes of every remembered response. */
    public long rememberedBytes() {
        return rememberedBytes;
    }

    /** Drop every session idle for longer than the TTL at log time {@code nowMs}. */
    public void expire(long nowMs) {
        while (!byActivity.isEmpty() && nowMs - byActivity.first().lastActiveMs() > ttlMs) {
            remove(byActivity.first());
        }
    }

    /** Sorted by client id. */
    public Collection<Session> all() {
        return Collections.unmodifiableCollection(byId.values());
    }

    public void clear() {
        byId.clear();
        byActivity.clear();
        byOwner.clear();
        rememberedBytes = 0;
    }

    public void restore(long clientId, String owner, ByteString secret, long lastActiveMs, long forgottenThrough,
                        Map<Long, CommandResult> remembered) {
        Session s = new Session(clientId, owner, secret, window, maxBytesPerSession, lastActiveMs);
        s.restore(forgottenThrough, remembered);
        add(s);
    }
}
