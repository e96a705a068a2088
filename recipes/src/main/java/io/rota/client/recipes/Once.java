package io.rota.client.recipes;

import io.rota.client.CompareOp;
import io.rota.client.GetResult;
import io.rota.client.KeyValue;
import io.rota.client.Op;
import io.rota.client.RotaClient;
import io.rota.client.RotaException;
import io.rota.client.TxnResult;

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
    /** The lease completed records are attached to now (see {@link #retentionLease}), and its time bucket. */
    private long retentionLease;
    private long retentionBucket = -1;

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

    RotaClient rota() {
        return rota;
    }

    String storedKey(String key) {
        return options.prefix() + "/" + key;
    }

    /**
     * The lease for records completed now. Records share one lease per time bucket of retention/24,
     * granted for retention + one bucket, so a record lives at least its retention and at most retention +
     * 2 buckets, and the cluster holds about 25 such leases however many records complete. The bucket's lease
     * id is itself stored (at {@code <prefix>.retention/<bucket>}, attached to that lease) so that every
     * client uses the same one. 0 when records are kept forever.
     *
     * @param renew true to forget the cached lease (it was found gone)
     */
    synchronized long retentionLease(boolean renew) {
        if (options.retention().isZero()) {
            return 0;
        }
        long bucketMs = Math.max(1_000, options.retention().toMillis() / 24);
        long bucket = System.currentTimeMillis() / bucketMs;
        if (bucket == retentionBucket && !renew) {
            return retentionLease;
        }
        String bucketKey = options.prefix() + ".retention/" + bucket;
        Optional<KeyValue> shared = renew ? Optional.empty() : rota.kv().get(bucketKey).first();
        long lease;
        if (shared.isPresent()) {
            lease = shared.get().lease();
        } else {
            lease = rota.leases().grant(options.retention().plus(Duration.ofMillis(bucketMs))).id();
            TxnResult r = rota.kv().txn().ifCreateRevision(bucketKey, CompareOp.EQUAL, 0)
                    .then(Op.put(bucketKey, Long.toHexString(lease), lease))
                    .orElse(Op.get(bucketKey)).commit();
            if (!r.succeeded()) {
                Optional<KeyValue> winner = ((GetResult) r.responses().get(0)).first();
                if (winner.isPresent() && winner.get().lease() != 0) {
                    rota.leases().revoke(lease);
                    lease = winner.get().lease();
                }
            }
        }
        retentionLease = lease;
        retentionBucket = bucket;
        return lease;
    }

    /** Whether {@code e} says the retention lease is gone (expired early, or revoked by someone). */
    static boolean leaseGone(RotaException e) {
        return e.code() == RotaException.Code.LEASE_NOT_FOUND;
    }
}
