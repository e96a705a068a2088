package io.rota.server.kv;

import com.google.protobuf.ByteString;
import io.rota.proto.Command;
import io.rota.proto.Error;
import io.rota.proto.LeaseCheckpointRequest;
import io.rota.proto.LeaseCheckpointResponse;
import io.rota.proto.LeaseExpireRequest;
import io.rota.proto.LeaseExpireResponse;
import io.rota.proto.LeaseGrantRequest;
import io.rota.proto.LeaseGrantResponse;
import io.rota.proto.LeaseKeepAliveResponse;
import io.rota.proto.ResponseHeader;
import io.rota.server.lease.Lease;
import io.rota.server.lease.LeaseTable;
import io.rota.server.lease.LogClock;

import java.util.List;

/**
 * The lease commands at apply: Grant, KeepAlive, Checkpoint, the leader's Expire, and Revoke, each timed by
 * {@link LogClock}'s log time. A renewal or an end leaves apply as an effect for the leader's lease keeper.
 * Driver thread only.
 */
final class LeaseCommands {

    private final Limits limits;
    private final LeaseTable leases;
    private final KvStore store;
    private final KeyWrites keys;
    private final LogClock clock;
    private final ApplyAuthorization authorization;
    private final Effects effects;

    LeaseCommands(Limits limits, LeaseTable leases, KvStore store, KeyWrites keys, LogClock clock,
                  ApplyAuthorization authorization, Effects effects) {
        this.limits = limits;
        this.leases = leases;
        this.store = store;
        this.keys = keys;
        this.clock = clock;
        this.authorization = authorization;
        this.effects = effects;
    }

    /** {@code stampCounted}: whether the command advanced the log clock by its own stamp (see requireCountedStamp). */
    LeaseGrantResponse grant(long index, Command cmd, boolean stampCounted) {
        LeaseGrantRequest req = cmd.getLeaseGrant();
        if (req.getTTL() < 1 || req.getTTL() > limits.maxLeaseTtlSeconds()) {
            throw StoreException.invalid("lease TTL must be within [1, " + limits.maxLeaseTtlSeconds() + "] s");
        }
        if (req.getID() < 0) {
            throw StoreException.invalid("lease ID must not be negative");
        }
        if (req.getID() != 0 && leases.contains(req.getID())) {
            throw StoreException.invalid(Error.Reason.LEASE_EXISTS, "lease " + req.getID() + " already exists");
        }
        if (leases.isFull()) {
            throw StoreException.full("too many leases (" + limits.maxLeases() + ")");
        }
        int bound = cmd.getMaxLeasesPerUser();
        if (bound > 0 && authorization.boundedCaller(cmd) && leases.countOf(cmd.getCaller()) >= bound) {
            throw StoreException.full("user '" + ApplyAuthorization.userOf(cmd.getCaller()) + "' holds " + bound
                    + " leases, its quota (the leader's --max-leases-per-user): revoke one, or let one expire,"
                    + " before granting more");
        }
        // The TTL is taken as logged: the leader raised it to its minimum before proposing, so no member's
        // own flags decide a replicated value (issue 11, hole 3).
        requireCountedStamp("lease grant", stampCounted);
        long id = req.getID() != 0 ? req.getID() : leases.freeId(index);
        long ttl = req.getTTL();
        leases.grant(id, ttl, cmd.getCaller(), clock.nowMs() + ttl * 1000, index);
        effects.add(new Effects.LeaseRenewed(id, ttl, index));
        return LeaseGrantResponse.newBuilder().setHeader(store.header()).setID(id).setTTL(ttl).build();
    }

    /**
     * The leader's expiry, decided on its clock for the renewal it timed. If a keep-alive renewed the lease
     * after that decision (it was in the log first), the expiry is stale and deletes nothing: the keep-alive
     * was answered with TTL &gt; 0, and its holder's safe-until stands (issue 11, hole 1).
     */
    LeaseExpireResponse expire(LeaseExpireRequest req) {
        Lease lease = existing(leases, req.getID());
        if (lease.renewal() != req.getRenewal()) {
            return LeaseExpireResponse.newBuilder().setHeader(store.header()).setRenewedSince(true).build();
        }
        return LeaseExpireResponse.newBuilder().setHeader(revoke(req.getID())).build();
    }

    /** Revoke and Expire: the lease and all its keys go, the keys in one revision. */
    ResponseHeader revoke(long id) {
        if (leases.remove(id) == null) {
            throw StoreException.leaseNotFound(id);
        }
        List<ByteString> held = store.keysOf(id);
        effects.add(new Effects.LeaseEnded(id, held.size()));
        keys.deleteKeys(held);
        return store.header();
    }

    /**
     * A lease's deadline is log time now + TTL, and its holder counts its safe-until from when it sent the
     * grant or keep-alive. Log time stands still at an entry whose stamp did not count (stamped in another term,
     * or by no leader), so it may lag real time there, and a deadline set from it could pass before the holder's
     * safe-until (issue 31). Such a grant or keep-alive is refused, the same on every replica; the client
     * retries it, and its safe-until does not move meanwhile.
     */
    private static void requireCountedStamp(String what, boolean stampCounted) {
        if (!stampCounted) {
            throw new StoreException(Error.Code.UNAVAILABLE, what + " refused: its entry carries no log-clock stamp"
                    + " of its own term, so the lease could not be timed; retry");
        }
    }

    LeaseKeepAliveResponse keepAlive(long index, long id, boolean stampCounted) {
        Lease lease = existing(leases, id);
        requireCountedStamp("keep-alive of lease " + id, stampCounted);
        lease.keepAlive(clock.nowMs(), index);
        effects.add(new Effects.LeaseRenewed(id, lease.ttlSeconds(), index));
        return LeaseKeepAliveResponse.newBuilder().setHeader(store.header()).setID(id).setTTL(lease.ttlSeconds())
                .build();
    }

    LeaseCheckpointResponse checkpoint(LeaseCheckpointRequest req) {
        // A lease revoked or renewed after the leader built the checkpoint is skipped: a checkpoint of an
        // older renewal would pull the deadline a keep-alive just set back before the holder's safe-until.
        for (LeaseCheckpointRequest.Checkpoint c : req.getCheckpointsList()) {
            Lease lease = leases.get(c.getID());
            if (lease != null && lease.renewal() == c.getRenewal()) {
                lease.checkpoint(clock.nowMs(), c.getRemainingMs());
            }
        }
        return LeaseCheckpointResponse.newBuilder().setHeader(store.header()).build();
    }

    /** Lease {@code id} of {@code leases}, or LEASE_NOT_FOUND (apply's and the read side's). */
    static Lease existing(LeaseTable leases, long id) {
        Lease lease = leases.get(id);
        if (lease == null) {
            throw StoreException.leaseNotFound(id);
        }
        return lease;
    }
}
