package io.rota.server.lease;

import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * The live leases of the state machine, by id. Which keys a lease holds is the key store's business; the
 * table only knows TTLs and deadlines. Bounded: {@link #isFull()} is checked before a grant.
 */
public final class LeaseTable {

    private final int maxLeases;
    private final TreeMap<Long, Lease> leases = new TreeMap<>();
    /** Live leases per owner, for the per-user quota (issue 33); only counts, so iteration order never matters. */
    private final Map<String, Integer> perOwner = new HashMap<>();

    public LeaseTable(int maxLeases) {
        this.maxLeases = maxLeases;
    }

    public int size() {
        return leases.size();
    }

    public boolean isFull() {
        return leases.size() >= maxLeases;
    }

    public Lease get(long id) {
        return leases.get(id);
    }

    public boolean contains(long id) {
        return leases.containsKey(id);
    }

    /**
     * The id for a grant that asked for none: {@code hint} (the entry's index, unique in the log) or, if a
     * lease chose that id explicitly, the next free one. Deterministic, unlike etcd's random ids.
     */
    public long freeId(long hint) {
        long id = Math.max(1, hint);
        while (leases.containsKey(id)) {
            id++;
        }
        return id;
    }

    public Lease grant(long id, long ttlSeconds, String owner, long deadlineMs, long renewal) {
        Lease lease = new Lease(id, ttlSeconds, owner, deadlineMs, renewal);
        Lease replaced = leases.put(id, lease);
        if (replaced != null) {
            uncount(replaced.owner());
        }
        perOwner.merge(owner, 1, Integer::sum);
        return lease;
    }

    public Lease remove(long id) {
        Lease removed = leases.remove(id);
        if (removed != null) {
            uncount(removed.owner());
        }
        return removed;
    }

    /** How many live leases {@code owner} granted. */
    public int countOf(String owner) {
        return perOwner.getOrDefault(owner, 0);
    }

    private void uncount(String owner) {
        perOwner.computeIfPresent(owner, (o, n) -> n == 1 ? null : n - 1);
    }

    /** Sorted by id. */
    public Collection<Lease> all() {
        return Collections.unmodifiableCollection(leases.values());
    }

    public void clear() {
        leases.clear();
        perOwner.clear();
    }
}
