package io.rota.server.kv;

import io.rota.proto.Event;
import io.rota.proto.Member;
import io.rota.proto.RegisteredMember;
import io.rota.server.auth.AuthState;
import io.rota.server.lease.LeaseListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * What applying entries means for the runtime — watch events, lease timers, the peer table — kept as values
 * while a batch is applied and carried out after it (issue 30, design NS2). The state change is the
 * replicated part and is the same on every member; carrying it out is this member's own business, and may
 * fail here and not there (a peer address that does not resolve, a listener with a bug). So a failed effect is
 * logged with what it was, and the member carries on: it never turns into an exception out of apply, which
 * would stop the member, and then every member, on every replay of the same entry.
 *
 * <p>Order is kept: effects run in the order apply made them, all before the driver answers the batch's
 * proposals. Driver thread only.
 */
final class Effects {

    private static final Logger log = LoggerFactory.getLogger(Effects.class);

    /** One thing apply asks of the runtime. */
    sealed interface Effect {
    }

    /** The events of one write transaction: the watch hub's feed. */
    record Revision(long revision, List<Event> events) implements Effect {
    }

    /** The store was replaced by a snapshot at {@code revision}. */
    record Restored(long revision) implements Effect {
    }

    /** The member tables changed: the peer directory dials and admits by them. */
    record MembersChanged(List<RegisteredMember> registry, List<Member> published) implements Effect {
    }

    /** A lease was granted or renewed: the leader's lease keeper re-arms its timer. */
    record LeaseRenewed(long id, long ttlSeconds, long renewal) implements Effect {
    }

    /** A lease was revoked or expired with {@code keysDeleted} keys. */
    record LeaseEnded(long id, int keysDeleted) implements Effect {
    }

    /** An auth change was applied (or restored): watches made under the old state are re-checked. */
    record AuthChanged(AuthState state) implements Effect {
    }

    private final List<Effect> pending = new ArrayList<>();
    private StoreListener store = StoreListener.NONE;
    private MemberRegistryListener members = MemberRegistryListener.NONE;
    /** Volatile: set once after the driver (which applies) has started. */
    private volatile LeaseListener leases = LeaseListener.NONE;
    private long failed;

    void setStoreListener(StoreListener listener) {
        this.store = Objects.requireNonNull(listener, "listener");
    }

    void setRegistryListener(MemberRegistryListener listener) {
        this.members = Objects.requireNonNull(listener, "registryListener");
    }

    void setLeaseListener(LeaseListener listener) {
        this.leases = Objects.requireNonNull(listener, "leaseListener");
    }

    void add(Effect effect) {
        pending.add(effect);
    }

    /** Effects that failed since start: each also logged. */
    long failed() {
        return failed;
    }

    /** Carries out, in order, every effect added since the last call; a failure is logged, never thrown. */
    void carryOut() {
        if (pending.isEmpty()) {
            return;
        }
        List<Effect> batch = List.copyOf(pending);
        pending.clear();
        for (Effect e : batch) {
            try {
                run(e);
            } catch (RuntimeException ex) {
                failed++;
                log.error("Could not carry out {} after applying it (the replicated state is applied and the same on"
                        + " every member; this member carries on without this effect)", describe(e), ex);
            }
        }
    }

    private void run(Effect e) {
        if (e instanceof Revision r) {
            store.onRevision(r.revision(), r.events());
        } else if (e instanceof Restored r) {
            store.onRestore(r.revision());
        } else if (e instanceof MembersChanged m) {
            members.membersChanged(m.registry(), m.published());
        } else if (e instanceof LeaseRenewed l) {
            leases.renewed(l.id(), l.ttlSeconds(), l.renewal());
        } else if (e instanceof LeaseEnded l) {
            leases.ended(l.id(), l.keysDeleted());
        } else if (e instanceof AuthChanged a) {
            store.onAuthChange(a.state());
        }
    }

    /** A line's worth: events are many and carry values, so only their count. */
    private static String describe(Effect e) {
        if (e instanceof Revision r) {
            return "the watch events of revision " + r.revision() + " (" + r.events().size() + " events)";
        }
        if (e instanceof AuthChanged a) {
            return "the re-check of watches after auth revision " + a.state().revision();
        }
        return e.toString();
    }
}
