package io.rota.server.kv;

import io.rota.proto.CommandResult;
import io.rota.proto.Event;
import io.rota.proto.KeyValue;
import io.rota.proto.StoreSnapshot;
import io.rota.raft.core.StateMachine;
import io.rota.server.auth.AuthStore;
import io.rota.server.lease.Lease;
import io.rota.server.lease.LeaseTable;
import io.rota.server.lease.LogClock;
import io.rota.server.session.Session;
import io.rota.server.session.SessionTable;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The whole replicated state as one image ({@link StoreSnapshot}), and back: what a snapshot and a backup hold.
 * Keys, revision, the log clock, leases (remaining TTL relative to that time), sessions with their remembered
 * responses, the member tables, alarms, the auth store and the watch history. Sorted, no map fields: equal
 * states give equal bytes. Driver thread only, but for a capture's {@code serialize} (see {@link #capture}).
 */
final class StateImage {

    private final KvStore store;
    private final LogClock clock;
    private final LeaseTable leases;
    private final SessionTable sessions;
    private final MemberRegistry members;
    private final QuotaAndAlarms quota;
    private final AuthStore auth;
    private final Effects effects;

    StateImage(KvStore store, LogClock clock, LeaseTable leases, SessionTable sessions, MemberRegistry members,
               QuotaAndAlarms quota, AuthStore auth, Effects effects) {
        this.store = store;
        this.clock = clock;
        this.leases = leases;
        this.sessions = sessions;
        this.members = members;
        this.quota = quota;
        this.auth = auth;
        this.effects = effects;
    }

    /**
     * The image as of entry {@code appliedIndex} (term {@code appliedTerm}). The capture is the image's head —
     * everything but keys and history, a few messages per lease, session and member — and reference copies of
     * the key and history lists, made here on the driver thread. Keys, events and remembered responses are
     * immutable protobuf messages, so it costs a pointer per key, not a byte per key, and later applies cannot
     * change it. The expensive part, writing the image as a stream ({@link StoreImage}), runs on the snapshot
     * thread (docs/design.md H7 has the measurements).
     */
    StateMachine.Capture capture(long appliedIndex, long appliedTerm) {
        StoreSnapshot head = head(appliedIndex, appliedTerm);
        List<KeyValue> kvs = new ArrayList<>(store.all());
        List<Event> history = store.history().all();
        return out -> StoreImage.write(out, head, kvs, history);
    }

    /** The whole image as a message: what a backup streams (issue 18); the same reference copy as a capture. */
    StoreSnapshot image(long appliedIndex, long appliedTerm) {
        return head(appliedIndex, appliedTerm).toBuilder().addAllKvs(store.all())
                .addAllHistory(store.history().all()).build();
    }

    /** The image without its two long lists, the keys and the watch history. */
    private StoreSnapshot head(long appliedIndex, long appliedTerm) {
        StoreSnapshot.Builder out = StoreSnapshot.newBuilder()
                .setRevision(store.revision())
                .setLogTimeMs(clock.nowMs())
                .setClockTerm(clock.term())
                .setClockTermElapsedMs(clock.termElapsedMs())
                .setCompactRevision(store.history().compactRevision())
                .setAppliedIndex(appliedIndex)
                .setAppliedTerm(appliedTerm)
                .setAuth(auth.image());
        members.writeTo(out);
        quota.writeTo(out);
        for (Lease l : leases.all()) {
            out.addLeases(leaseImage(l, clock.nowMs()));
        }
        for (Session s : sessions.all()) {
            StoreSnapshot.SessionImage.Builder image = StoreSnapshot.SessionImage.newBuilder()
                    .setClientId(s.clientId()).setLastActiveMs(s.lastActiveMs())
                    .setForgottenThrough(s.forgottenThrough()).setOwner(s.owner()).setSecret(s.secret());
            s.responses().forEach((seq, result) -> image.addSequences(seq).addResponses(result));
            out.addSessions(image);
        }
        return out.build();
    }

    /** {@code l} as its image at log time {@code nowMs}: granted TTL, time left, latest renewal, owner. */
    static StoreSnapshot.LeaseImage.Builder leaseImage(Lease l, long nowMs) {
        return StoreSnapshot.LeaseImage.newBuilder().setID(l.id()).setTTL(l.ttlSeconds())
                .setRemainingMs(l.remainingMs(nowMs)).setRenewal(l.renewal()).setOwner(l.owner());
    }

    /**
     * Replace the whole state by {@code image}, but for the applied index and term, which the state machine
     * keeps; the store's, the member tables' and the auth store's listeners hear of it as effects, which the
     * caller carries out.
     */
    void restore(StoreSnapshot image) {
        clock.restore(image.getLogTimeMs(), image.getClockTerm(), image.getClockTermElapsedMs());
        long nowMs = clock.nowMs();
        store.reset(image.getRevision(), image.getKvsList(), image.getCompactRevision(), image.getHistoryList());
        leases.clear();
        for (StoreSnapshot.LeaseImage l : image.getLeasesList()) {
            leases.grant(l.getID(), l.getTTL(), l.getOwner(), nowMs + l.getRemainingMs(), l.getRenewal());
        }
        members.restore(image);
        auth.restore(image.getAuth());
        sessions.clear();
        for (StoreSnapshot.SessionImage s : image.getSessionsList()) {
            Map<Long, CommandResult> remembered = new TreeMap<>();
            for (int i = 0; i < s.getSequencesCount(); i++) {
                remembered.put(s.getSequences(i), s.getResponses(i));
            }
            sessions.restore(s.getClientId(), s.getOwner(), s.getSecret(), s.getLastActiveMs(), s.getForgottenThrough(),
                    remembered);
        }
        quota.restore(image);
        effects.add(new Effects.Restored(store.revision()));
        effects.add(new Effects.AuthChanged(auth.state()));
    }
}
