package io.rota.server.kv;

import io.rota.proto.HashKvRequest;
import io.rota.proto.HashKvResponse;
import io.rota.proto.LeaseLeasesResponse;
import io.rota.proto.LeaseStatus;
import io.rota.proto.LeaseTimeToLiveRequest;
import io.rota.proto.LeaseTimeToLiveResponse;
import io.rota.proto.RangeRequest;
import io.rota.proto.RangeResponse;
import io.rota.proto.StoreSnapshot;
import io.rota.server.lease.Lease;
import io.rota.server.lease.LeaseTable;
import io.rota.server.lease.LogClock;

import java.util.ArrayList;
import java.util.List;

/**
 * The read side (not replicated): what the server asks of the applied state on the driver thread, after a
 * ReadIndex (linearizable) or directly (serializable). A query changes nothing; a bad one throws a
 * {@link StoreException}, whose {@code error()} is the typed answer.
 */
final class Queries {

    private final KvStore store;
    private final LeaseTable leases;
    private final LogClock clock;
    private final ApplyAuthorization authorization;

    Queries(KvStore store, LeaseTable leases, LogClock clock, ApplyAuthorization authorization) {
        this.store = store;
        this.leases = leases;
        this.clock = clock;
        this.authorization = authorization;
    }

    /** A Range at the applied state: INVALID_ARGUMENT, REQUEST_TOO_LARGE or COMPACTED. */
    RangeResponse range(RangeRequest req) {
        return store.range(req, List.of());
    }

    /** etcd's HashKV over this member's applied state (see {@link KvStore#hash}). */
    HashKvResponse hashKv(HashKvRequest req) {
        long[] hash = store.hash(req.getRevision());
        return HashKvResponse.newBuilder().setHeader(store.header()).setHash((int) hash[0]).setHashRevision(hash[1])
                .setCompactRevision(store.history().compactRevision()).build();
    }

    /**
     * TimeToLive at the applied log time, as asked by {@code caller} ("" for the member itself): remaining =
     * deadline − log time, where the deadline was set by the last grant, keep-alive or checkpoint. While auth is
     * enabled, another caller's lease is answered LEASE_NOT_FOUND unless the caller is root.
     */
    LeaseTimeToLiveResponse timeToLive(LeaseTimeToLiveRequest req, String caller) {
        Lease lease = LeaseCommands.existing(leases, req.getID());
        if (!authorization.maySee(caller, lease)) {
            throw StoreException.leaseNotFound(req.getID());
        }
        long remainingMs = lease.remainingMs(clock.nowMs());
        LeaseTimeToLiveResponse.Builder out = LeaseTimeToLiveResponse.newBuilder().setHeader(store.header())
                .setID(lease.id()).setGrantedTTL(lease.ttlSeconds()).setTTL((remainingMs + 999) / 1000);
        if (req.getKeys()) {
            out.addAllKeys(store.keysOf(lease.id()));
        }
        return out.build();
    }

    /** The live leases {@code caller} may see (issue 33): while auth is enabled its own, or all for root. */
    LeaseLeasesResponse leases(String caller) {
        LeaseLeasesResponse.Builder out = LeaseLeasesResponse.newBuilder().setHeader(store.header());
        leases.all().stream().filter(l -> authorization.maySee(caller, l))
                .forEach(l -> out.addLeases(LeaseStatus.newBuilder().setID(l.id())));
        return out.build();
    }

    /** Retained events from {@code startRevision} on, or COMPACTED; for the watch hub. */
    HistoryRead history(long startRevision) {
        return store.history().read(startRevision);
    }

    /** Every live lease's image at the applied log time (see CoordinationStateMachine#leaseImages). */
    List<StoreSnapshot.LeaseImage> leaseImages() {
        List<StoreSnapshot.LeaseImage> out = new ArrayList<>();
        for (Lease l : leases.all()) {
            out.add(StateImage.leaseImage(l, clock.nowMs()).build());
        }
        return out;
    }
}
