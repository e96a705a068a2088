package io.rota.client.recipes;

import io.rota.client.CompareOp;
import io.rota.client.GetResult;
import io.rota.client.KeyValue;
import io.rota.client.Lease;
import io.rota.client.Op;
import io.rota.client.RotaClient;
import io.rota.client.RotaException;
import io.rota.client.Txn;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * Once-records (idempotency records): "has this been done?", answered atomically cluster-wide. Each
 * record is a key {@code <prefix>/<key>}; {@link OnceRecord#claim()} creates it (CLAIMED, attached to the
 * claimer's kept-alive lease) only if absent, so exactly one concurrent claimer wins; the winner then
 * records DONE or FAILED. See docs/jobs.md.
 *
 * <pre>{@code
 * Once once = Once.of(rota);
 * try (OnceRecord r = once.record("reminder/2026-11-29/user-42")) {
 *     if (r.claim()) {
 *         send(reminder);
 *         r.complete("sent");
 *     }
 * }
 * }</pre>
 * Thread-safe.
 */
public final class Once {

    private final RotaClient rota;
    private final OnceOptions options;
    /** The lease completed records are attached to now (see {@link #retentionLease}); 0 before the first. */
    private long retentionLease;
    /** Until when (on {@link System#nanoTime}) {@link #retentionLease} has at least the retention left. */
    private long retentionUsableUntil;

    private Once(RotaClient rota, OnceOptions options) {
        this.rota = Objects.requireNonNull(rota, "rota");
        this.options = Objects.requireNonNull(options, "options");
    }

    /**
     * Once-records with the default options.
     *
     * @param rota the client
     * @return the once-records API
     */
    public static Once of(RotaClient rota) {
        return of(rota, OnceOptions.defaults());
    }

    /**
     * Once-records with the given options.
     *
     * @param rota    the client
     * @param options the options
     * @return the once-records API
     */
    public static Once of(RotaClient rota, OnceOptions options) {
        return new Once(rota, options);
    }

    /**
     * The options.
     *
     * @return the options
     */
    public OnceOptions options() {
        return options;
    }

    /**
     * A record to claim (nothing is sent yet).
     *
     * @param key the record's key, e.g. {@code reminder/2026-11-29/user-42}
     * @return the record
     */
    public OnceRecord record(String key) {
        if (key == null || key.isEmpty()) {
            throw new IllegalArgumentException("a once-record needs a non-empty key");
        }
        return new OnceRecord(this, key);
    }

    /**
     * Reads a record.
     *
     * @param key the record's key
     * @return its status, or empty if there is none (never claimed, claimer died, or retention ended)
     */
    public Optional<OnceStatus> status(String key) {
        Optional<KeyValue> kv = rota.kv().get(storedKey(key)).first();
        return kv.map(k -> OnceStatus.decode(key, k.valueString(), k.modRevision()));
    }

    /**
     * Deletes a finished record so that its key may be claimed again: the deliberate retry of a FAILED record
     * (or the re-run of a DONE one). Compares the record's mod revision, so a record that changed since it was
     * read is not deleted.
     *
     * @param key the record's key
     * @return the record that was deleted, or empty if there was none
     * @throws IllegalStateException if the record is CLAIMED (its claimer works on it now; its claim ends when
     *                               it finishes, gives up or dies) or changed while being reset
     */
    public Optional<OnceStatus> reset(String key) {
        Optional<OnceStatus> current = status(key);
        if (current.isEmpty()) {
            return current;
        }
        OnceStatus s = current.get();
        if (s.state() == OnceState.CLAIMED) {
            throw new IllegalStateException(key + " is in progress (claimed by " + s.owner() + "): not reset; its "
                    + "claim ends when that claimer finishes, gives up or dies");
        }
        if (!rota.kv().txn().ifModRevision(storedKey(key), CompareOp.EQUAL, s.revision())
                .then(Op.delete(storedKey(key))).commit().succeeded()) {
            throw new IllegalStateException(key + " changed while it was being reset: not reset; read it again");
        }
        return current;
    }

    RotaClient rota() {
        return rota;
    }

    String storedKey(String key) {
        return options.prefix() + "/" + key;
    }

    /**
     * The lease for records completed now. Records share the current retention lease, named by the key {@code
     * <prefix>.retention/<retention-ms>ms} (attached to that lease, so it goes with it) so that every client with
     * the same retention uses the same one. A
     * lease is granted for retention + one bucket (retention/24, at least 1 s) and used while the cluster says
     * it has at least the retention left: its remaining TTL is read from the cluster (which counts it on its own
     * clock) and counted down on {@link System#nanoTime} from the read's send, so no client's wall clock decides
     * how long a record lives. A record lives at least its retention and at most retention + one bucket; a new
     * lease is granted about once a bucket, so the cluster holds about 25 such leases however many records
     * complete (design.md R5, LF8). 0 when records are kept forever.
     *
     * @param renew true to forget the cached lease (it was found gone): the cluster is asked again
     */
    synchronized long retentionLease(boolean renew) {
        if (options.retention().isZero()) {
            return 0;
        }
        if (!renew && retentionLease != 0 && System.nanoTime() - retentionUsableUntil < 0) {
            return retentionLease;
        }
        String current = options.prefix() + ".retention/" + options.retention().toMillis() + "ms";
        long retention = options.retention().toNanos();
        for (int attempt = 0; attempt < 3; attempt++) {
            long sentAt = System.nanoTime();
            GetResult read = rota.kv().get(current);
            Optional<KeyValue> shared = read.first();
            if (shared.isPresent() && shared.get().lease() != 0) {
                long left = remainingNanos(shared.get().lease());
                if (left >= retention) {
                    return use(shared.get().lease(), sentAt + left - retention);
                }
            }
            long bucket = Math.max(1_000_000_000L, retention / 24);
            Lease lease = rota.leases().grant(Duration.ofNanos(retention + bucket));
            Txn swap = shared.isPresent() ? rota.kv().txn().ifModRevision(current, CompareOp.EQUAL,
                    shared.get().modRevision()) : rota.kv().txn().ifCreateRevision(current, CompareOp.EQUAL, 0);
            if (swap.then(Op.put(current, Long.toHexString(lease.id()), lease.id())).commit().succeeded()) {
                return use(lease.id(), sentAt + lease.ttl().toNanos() - retention);
            }
            rota.leases().revoke(lease.id());   // another client swapped first: use its lease
        }
        throw new RotaException(RotaException.Code.UNAVAILABLE, "could not agree on a retention lease for "
                + options.prefix() + " in 3 attempts: other clients kept replacing it");
    }

    /**
     * What the cluster says is left of {@code lease}, less the one second its answer may be rounded up by;
     * 0 if it is gone.
     */
    private long remainingNanos(long lease) {
        try {
            return Math.max(0, rota.leases().timeToLive(lease, false).remaining().toNanos() - 1_000_000_000L);
        } catch (RotaException e) {
            if (leaseGone(e)) {
                return 0;
            }
            throw e;
        }
    }

    private long use(long lease, long usableUntil) {
        retentionLease = lease;
        retentionUsableUntil = usableUntil;
        return lease;
    }

    /** Whether {@code e} says the retention lease is gone (expired early, or revoked by someone). */
    static boolean leaseGone(RotaException e) {
        return e.code() == RotaException.Code.LEASE_NOT_FOUND;
    }
}
