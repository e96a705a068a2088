package io.rota.shedlock;

import io.rota.client.CompareOp;
import io.rota.client.KeyValue;
import io.rota.client.Lease;
import io.rota.client.Op;
import io.rota.client.RotaClient;
import io.rota.client.RotaException;
import io.rota.client.Txn;
import io.rota.client.TxnResult;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.support.LockException;
import net.javacrumbs.shedlock.support.Utils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Iterator;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * A ShedLock {@link net.javacrumbs.shedlock.core.LockProvider} on a Rota cluster: a team on ShedLock switches
 * by replacing its {@code LockProvider} bean with {@code new RotaLockProvider(rotaClient)}; the
 * {@code @SchedulerLock} annotations stay as they are.
 *
 * <p>Each lock is one key, {@code <prefix><name>}, holding a {@link LockRecord}. Taking it is one
 * compare-and-set transaction (the key is missing, or its record has expired and is unchanged since read), so
 * of two instances that try at once exactly one gets it. The lock honours ShedLock's two bounds:
 * <ul>
 *   <li>{@code lockAtMostFor}: the record's {@code lockUntil}, and a lease with that TTL (rounded up to whole
 *       seconds) on the key. A holder that dies loses the lock when either passes: after lockAtMostFor by the
 *       clock of the instance that next tries, and at the latest when the cluster expires the lease, on the
 *       cluster's clock, whatever the instances' clocks say.</li>
 *   <li>{@code lockAtLeastFor}: unlocking before it rewrites the record with {@code lockUntil} = the end of
 *       lockAtLeastFor instead of deleting it, so the lock stays unavailable until then and an instance whose
 *       clock is behind does not run a short job a second time.</li>
 * </ul>
 *
 * <p>Each holder gets a fencing token, the revision at which it took the lock (higher for every later holder):
 * {@link RotaSimpleLock#fencingToken()}, or {@link #fencingToken()} inside the locked method.
 *
 * <pre>{@code
 * @Bean
 * LockProvider lockProvider(RotaClient rota) {
 *     return new RotaLockProvider(rota);
 * }
 * }</pre>
 */
public final class RotaLockProvider implements ExtensibleLockProvider {

    /** The key prefix of the lock records when none is given. */
    public static final String DEFAULT_PREFIX = "shedlock/";

    private static final Logger log = LoggerFactory.getLogger(RotaLockProvider.class);

    /** The locks this thread took and has not released, innermost last: what {@link #fencingToken()} reads. */
    private static final ThreadLocal<Deque<RotaSimpleLock>> HELD = ThreadLocal.withInitial(ArrayDeque::new);

    private final RotaClient rota;
    private final String prefix;
    private final String lockedBy;

    /**
     * A provider that keeps its records under {@link #DEFAULT_PREFIX}.
     *
     * @param rota the client (the provider does not close it)
     */
    public RotaLockProvider(RotaClient rota) {
        this(rota, DEFAULT_PREFIX);
    }

    /**
     * A provider that keeps its records under {@code prefix} (services sharing a cluster use their own).
     *
     * @param rota   the client (the provider does not close it)
     * @param prefix the key prefix, for example {@code "billing/shedlock/"}; not empty
     */
    public RotaLockProvider(RotaClient rota, String prefix) {
        this.rota = Objects.requireNonNull(rota, "rota");
        if (Objects.requireNonNull(prefix, "prefix").isEmpty()) {
            throw new IllegalArgumentException("prefix must not be empty: lock records need a key prefix of their own");
        }
        this.prefix = prefix;
        this.lockedBy = Utils.getHostname();
    }

    /**
     * The fencing token of the innermost lock this thread holds: inside a {@code @SchedulerLock} method, the
     * token of the method's lock (ShedLock takes the lock, runs the method and releases it on one thread).
     *
     * @return the token, or empty if this thread holds no lock of a RotaLockProvider
     */
    public static OptionalLong fencingToken() {
        Deque<RotaSimpleLock> held = HELD.get();
        for (Iterator<RotaSimpleLock> it = held.descendingIterator(); it.hasNext(); ) {
            RotaSimpleLock lock = it.next();
            if (!lock.released()) {
                return OptionalLong.of(lock.fencingToken());
            }
            it.remove();   // released on another thread
        }
        return OptionalLong.empty();
    }

    /**
     * Takes the lock if it is free: missing, or its holder's lockUntil has passed.
     *
     * @param configuration the lock's name and bounds
     * @return the lock, or empty if another holder has it
     * @throws LockException if the cluster could not be asked (the task does not run)
     */
    @Override
    public Optional<SimpleLock> lock(LockConfiguration configuration) {
        String key = prefix + configuration.getName();
        Instant now = ClockProvider.now();
        Lease lease = null;
        try {
            Optional<KeyValue> current = rota.kv().get(key).first();
            if (current.isPresent() && LockRecord.decode(current.get().valueString()).heldAt(now)) {
                return Optional.empty();
            }
            lease = rota.leases().grant(configuration.getLockAtMostFor());
            Txn txn = rota.kv().txn();
            if (current.isPresent()) {
                txn.ifModRevision(key, CompareOp.EQUAL, current.get().modRevision());
            } else {
                txn.ifVersion(key, CompareOp.EQUAL, 0);
            }
            LockRecord record = new LockRecord(configuration.getLockAtMostUntil(), now, lockedBy);
            TxnResult result = txn.then(Op.put(key, record.encode(), lease.id())).commit();
            if (!result.succeeded()) {
                revokeQuietly(lease.id());
                return Optional.empty();
            }
            current.ifPresent(previous -> revokeQuietly(previous.lease()));
            RotaSimpleLock lock = new RotaSimpleLock(this, configuration, key, result.revision(), result.revision(),
                    lease.id());
            HELD.get().addLast(lock);
            log.debug("locked {} until {} with token {}", key, configuration.getLockAtMostUntil(), result.revision());
            return Optional.of(lock);
        } catch (RotaException e) {
            if (lease != null) {
                revokeQuietly(lease.id());   // an unknown outcome: the revoke deletes the key if the txn applied
            }
            throw new LockException("cannot lock " + key + " in the Rota cluster " + rota.endpoints() + ": "
                    + e.getMessage() + " (the task does not run this time; check that the cluster is reachable)", e);
        }
    }

    /**
     * Whether the lock named {@code name} is held now, by any instance (its record exists and its lockUntil has
     * not passed by this instance's clock).
     *
     * @param name the lock's name
     * @return true if held
     */
    public boolean isLocked(String name) {
        return rota.kv().get(prefix + name).first()
                .map(kv -> LockRecord.decode(kv.valueString()).heldAt(ClockProvider.now())).orElse(false);
    }

    /** Releases {@code lock}: keeps the record until lockAtLeastFor ends, or deletes it; only if still ours. */
    void unlock(RotaSimpleLock lock) {
        HELD.get().remove(lock);
        LockConfiguration configuration = lock.configuration();
        Instant now = ClockProvider.now();
        Instant atLeastUntil = configuration.getLockAtLeastUntil();
        try {
            Txn txn = rota.kv().txn().ifModRevision(lock.key(), CompareOp.EQUAL, lock.modRevision());
            if (atLeastUntil.isAfter(now)) {
                // The lease (TTL >= lockAtMostFor >= lockAtLeastFor) stays: it outlives the record's new lockUntil.
                LockRecord record = new LockRecord(atLeastUntil, now, lockedBy);
                txn.then(Op.put(lock.key(), record.encode(), lock.leaseId())).commit();
            } else {
                txn.then(Op.delete(lock.key())).commit();
                revokeQuietly(lock.leaseId());
            }
        } catch (RotaException e) {
            // Not thrown: it would hide the task's own outcome. The lock frees itself at lockAtMostFor.
            log.warn("could not release {} in the Rota cluster: {}; it frees itself when lockAtMostFor ends",
                    lock.key(), e.getMessage());
        }
    }

    /** Moves {@code lock}'s bounds to {@code next}'s, if it is still ours and has not expired. */
    Optional<SimpleLock> extend(RotaSimpleLock lock, LockConfiguration next) {
        Instant now = ClockProvider.now();
        if (!lock.configuration().getLockAtMostUntil().isAfter(now)) {
            return Optional.empty();   // expired: another instance may hold it already
        }
        Lease lease = null;
        try {
            lease = rota.leases().grant(next.getLockAtMostFor());
            LockRecord record = new LockRecord(next.getLockAtMostUntil(), now, lockedBy);
            TxnResult result = rota.kv().txn().ifModRevision(lock.key(), CompareOp.EQUAL, lock.modRevision())
                    .then(Op.put(lock.key(), record.encode(), lease.id())).commit();
            if (!result.succeeded()) {
                revokeQuietly(lease.id());
                return Optional.empty();
            }
            revokeQuietly(lock.leaseId());
            RotaSimpleLock extended = new RotaSimpleLock(this, next, lock.key(), lock.fencingToken(),
                    result.revision(), lease.id());
            Deque<RotaSimpleLock> held = HELD.get();
            held.remove(lock);
            held.addLast(extended);
            return Optional.of(extended);
        } catch (RotaException e) {
            if (lease != null) {
                revokeQuietly(lease.id());
            }
            throw new LockException("cannot extend " + lock.key() + " in the Rota cluster: " + e.getMessage(), e);
        }
    }

    private void revokeQuietly(long leaseId) {
        if (leaseId == 0) {
            return;
        }
        rota.leases().revokeAsync(leaseId).exceptionally(e -> {
            log.debug("lease {} not revoked ({}); it expires by itself", Long.toHexString(leaseId), e.getMessage());
            return null;
        });
    }

    @Override
    public String toString() {
        return "RotaLockProvider[" + rota + ", prefix " + prefix + "]";
    }
}
