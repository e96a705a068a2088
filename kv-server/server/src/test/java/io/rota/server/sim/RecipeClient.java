package io.rota.server.sim;

import com.google.protobuf.ByteString;
import io.rota.proto.Compare;
import io.rota.proto.DeleteRangeRequest;
import io.rota.proto.Error;
import io.rota.proto.Frame;
import io.rota.proto.KeyValue;
import io.rota.proto.LeaseGrantRequest;
import io.rota.proto.LeaseKeepAliveRequest;
import io.rota.proto.LeaseRevokeRequest;
import io.rota.proto.PutRequest;
import io.rota.proto.RangeRequest;
import io.rota.proto.RequestOp;
import io.rota.proto.TxnRequest;
import io.rota.server.kv.Limits;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * One application process using the lock recipe the way the SDK does (issue 31, item 5): ONE session lease
 * shared by every lock it holds or waits for, up to {@link #MAX_PLACES} at once among {@link #LOCKS}, and now
 * and then a lock whose name is over the key limit. Each step mirrors a real class and method:
 * <ul>
 *   <li>the session: {@code Leases.session} grants it lazily; {@code SessionLease} is lost when the cluster
 *       reports it gone or no keep-alive was confirmed for a whole TTL; the keep-alives run every TTL/3;</li>
 *   <li>safe-until: {@code Tenure.safeUntilNanos} — the send time of the last confirmed keep-alive (or of the
 *       grant) + TTL − margin, with {@code LockOptions.effectiveMargin} = 10% of the TTL + 2 × clock drift
 *       (100 ms), all on this process's own drifting clock; {@code Tenure.scheduleSafeUntilCheck} loses a
 *       held place when it passes (docs/locks.md, "Safe-until");</li>
 *   <li>joining: {@code Contender.enter}'s one txn — if no key under the queue has a lease, put the own key
 *       {@code <queue><session-hex>-<seq-hex>}; else put it and read the queue;</li>
 *   <li>waiting: {@code Contender.awaitFirst}, by polling the queue (the simulator has no watches): first when
 *       the view that says so also shows the own key with its create revision (LF2);</li>
 *   <li>leaving: {@code Contender.retire} and {@code abandon} — a txn that deletes the own key if its
 *       create revision is the token; a lost holder's late release deletes it the same way (LF9);</li>
 *   <li>a failure: {@code Contender.nothingWritten} — a refusal needs no clean-up; an unknown outcome is
 *       cleaned by {@code Contender.cleanUp}, the guarded delete retried 100 ms doubling to 2 s until it is
 *       answered or the session ends; the session is never revoked for one place's failure (LF1, docs/locks.md
 *       "What one failure does to the other locks").</li>
 * </ul>
 * Key names are numbered per session and queue here (the SDK numbers per JVM), so that a client that re-grants
 * an ended lease's id, as etcd allows, reproduces the earlier holder's key names: the case LF9's guard is for.
 * Where the model departs from the SDK on purpose — a session used, and revoked at a restart, only within its
 * safe-until ({@link #usable}) — the SDK has a hazard with re-granted ids that LF9 does not cover (design.md
 * LF11, the finding).
 *
 * <p>{@link Mutation} puts back, one at a time, the bugs issue 31 found (docs/core.md, mutation table).
 */
final class RecipeClient extends SimClient {

    /** The bugs of issue 31, put back on purpose. */
    enum Mutation {
        NONE,
        /**
         * The old {@code Contender.giveUpSession}: any failed join, release or leave revokes the shared session;
         * the client's other handles keep their safe-until (as the issue measured: "A's handle still reports
         * seconds left").
         */
        REVOKE_SESSION_ON_FAILURE,
        /** A waiter whose first predecessor is gone takes the lock without confirming its own key (before LF2). */
        NO_OWN_KEY_CONFIRMATION,
        /**
         * The delete of a lost place's key (a holder's late release, a waiter that found itself lost) and of a
         * waiter that gives up is by name, unguarded, as {@code Contender.retire} and {@code abandon} did before
         * LF9.
         */
        UNGUARDED_LATE_RELEASE
    }

    static final List<String> LOCKS = List.of("rl/a/", "rl/b/", "rl/c/");
    /** A queue whose contender keys are over the key limit: every join is refused REQUEST_TOO_LARGE. */
    static final String OVERSIZED = "rl/" + "x".repeat(Limits.DEFAULT_MAX_KEY_BYTES) + "/";
    static final int MAX_PLACES = 2;
    private static final long MS = 1_000_000L;
    /** {@code LockOptions}' default clock drift, part of the margin. */
    private static final long CLOCK_DRIFT_NANOS = 100 * MS;
    /** {@code Lock.acquire}'s timeout in the model: a waiter gives up after this (local) time. */
    private static final long ACQUIRE_TIMEOUT_NANOS = 10_000 * MS;

    private final Mutation mutation;
    private final long faultsUntil;
    /** The session in use, or null: the next place grants one. */
    private Session session;
    private boolean granting;
    /** Places waiting for the session being granted (at most {@link #MAX_PLACES} + 1). */
    private final List<Consumer<Session>> needSession = new ArrayList<>();
    private final List<Place> places = new ArrayList<>();
    /** The expired lease whose id this process asked for at its last restart. */
    private long reusedLease;

    /** One session lease: {@code SessionLease}. */
    private static final class Session {
        final long id;
        final long ttlNanos;
        final long grantSent;
        long lastConfirmedSend;
        /** Queue → joins of it under this session: the sequence in the key's name. */
        final Map<String, Long> nextSequence = new HashMap<>();
        boolean lost;

        Session(long id, long ttlNanos, long grantSent) {
            this.id = id;
            this.ttlNanos = ttlNanos;
            this.grantSent = grantSent;
            this.lastConfirmedSend = grantSent;
        }

        /** {@code Tenure.safeUntilNanos}, on the client's clock. */
        long safeUntil() {
            long margin = ttlNanos / 10 + 2 * CLOCK_DRIFT_NANOS;
            return lastConfirmedSend + ttlNanos - margin;
        }
    }

    private enum State { JOINING, WAITING, HOLDING, LEAVING }

    /** One place in one queue: {@code Contender}. */
    private final class Place {
        final String queue;
        Session session;
        String key;
        /** The own key's create revision (0 until known). */
        long token;
        State state = State.JOINING;
        long deadline;
        /** The first contender of the last view when this place was second in it, else null. */
        KeyValue firstPredecessor;

        Place(String queue) {
            this.queue = queue;
        }

        String holder() {
            return name + " (" + key + ", token " + token + ")";
        }

        String lock() {
            return queue.length() > 40 ? queue.substring(0, 12) + "..." : queue;
        }
    }

    RecipeClient(ServerWorld world, String name, Mutation mutation, long faultsUntil) {
        super(world, name);
        this.mutation = mutation;
        this.faultsUntil = faultsUntil;
    }

    @Override
    void start() {
        after(world.random.nextLong(10, 500), this::act);
    }

    // --- the process: pauses, and the application deciding to take locks ---

    /**
     * A call as the SDK makes it; a write's answer is sometimes lost on the way back (the call times out:
     * outcome unknown), next to what the world's network loses.
     */
    private void send(Frame request, boolean write, BiConsumer<Frame, String> done) {
        boolean dropAnswer = write && world.now() < faultsUntil && world.random.nextInt(25) == 0;
        call(request, (f, why) -> awake(() -> {
            if (dropAnswer && f != null) {
                world.countRecipe("answers lost");
                done.accept(null, "timed out (the answer was lost)");
            } else {
                done.accept(f, why);
            }
        }));
    }

    private void pause() {
        long nanos = world.random.nextLong(500, 10_000) * MS;
        pausedUntil = world.now() + nanos;
        world.countRecipe("pauses");
        world.note(name + " is paused for " + nanos / MS + " ms");
    }

    private void act() {
        boolean faults = world.now() < faultsUntil;
        if (faults && world.random.nextInt(60) == 0) {
            pause();   // it stops here: the rest of this step runs when it wakes
            after(0, this::act);
            return;
        }
        if (faults && places.isEmpty() && !granting && world.lastExpiredLease != reusedLease
                && world.random.nextInt(3) == 0) {
            restart();
        }
        if (places.size() < MAX_PLACES) {
            String queue = faults && world.random.nextInt(10) == 0 ? OVERSIZED
                    : LOCKS.get(world.random.nextInt(LOCKS.size()));
            if (places.stream().noneMatch(p -> p.queue.equals(queue))) {
                join(new Place(queue));
            }
        }
        after(world.random.nextLong(100, 800), this::act);
    }

    // --- the session lease: Leases.session, SessionLease, KeepAlive ---

    /**
     * Whether {@code s} may still be used: not lost, and a keep-alive confirmed within its TTL — else it is lost
     * now. The SDK's {@code KeepAlive} finds this on its own timer, which races the application's threads when a
     * paused process wakes; the model lets the keep-alive win. In the other order a woken process writes under a
     * lease id that may have been granted again to another process (design.md LF11, the finding).
     */
    private boolean usable(Session s) {
        if (s != null && !s.lost && clock.nanoTime() - s.lastConfirmedSend > s.ttlNanos) {
            sessionLost(s, "no keep-alive was confirmed for a whole TTL", true);
        }
        return s != null && !s.lost;
    }

    private void withSession(Consumer<Session> then) {
        if (usable(session)) {
            then.accept(session);
            return;
        }
        needSession.add(then);
        if (!granting) {
            grant(0);
        }
    }

    /**
     * The process restarts while it holds nothing (a deploy): {@code close()} revokes its session, and the new
     * process grants its session with an explicit id, as etcd allows — the id of the lease that expired last, the
     * worst case: the keys its earlier holder may still delete late have the names this session's keys get.
     */
    private void restart() {
        Session old = session;
        if (old != null) {
            // close() revokes the session — only while safe-until is ahead here: past it, the id may already be
            // another process's (a finding of design.md LF11, not modelled).
            boolean mine = !old.lost && clock.nanoTime() - old.safeUntil() < 0;
            sessionLost(old, "the process restarts", true);
            if (mine) {
                send(Frame.newBuilder().setLeaseRevokeRequest(LeaseRevokeRequest.newBuilder().setID(old.id)).build(),
                        true, (f, why) -> { });
            }
        }
        reusedLease = world.lastExpiredLease;
        world.note(name + " restarts, asking for lease id " + reusedLease);
        granting = true;
        grant(reusedLease);
    }

    private void grant(long explicit) {
        granting = true;
        long ttl = 3 + world.random.nextInt(3);
        long sent = clock.nanoTime();
        send(Frame.newBuilder().setLeaseGrantRequest(LeaseGrantRequest.newBuilder().setTTL(ttl).setID(explicit))
                .build(), true, (f, why) -> {
            if (f == null || !f.hasLeaseGrantResponse()) {
                after(world.random.nextLong(50, 300), () -> grant(0));
                return;
            }
            Session s = new Session(f.getLeaseGrantResponse().getID(), f.getLeaseGrantResponse().getTTL() * 1_000_000_000L,
                    sent);
            if (clock.nanoTime() - sent > s.ttlNanos) {
                // Answered after a pause longer than its TTL: the lease may be gone and its id granted again. The
                // SDK would use it (the finding of design.md LF11); the model grants anew.
                world.note(name + " drops lease " + s.id + ", granted more than a TTL ago");
                grant(0);
                return;
            }
            granting = false;
            if (explicit != 0 && s.id == explicit) {
                world.countRecipe("ended lease ids granted again");
            }
            world.leaseGranted(s.id);
            world.safeUntil(s.id, clock.trueTimeOf(s.safeUntil()));
            session = s;
            keepAliveLater(s);
            List<Consumer<Session>> waiting = new ArrayList<>(needSession);
            needSession.clear();
            waiting.forEach(w -> w.accept(s));
        });
    }

    private void keepAliveLater(Session s) {
        after(s.ttlNanos / 3 / MS, () -> {
            if (!usable(s)) {
                return;
            }
            long sent = clock.nanoTime();
            send(Frame.newBuilder().setLeaseKeepAliveRequest(LeaseKeepAliveRequest.newBuilder().setID(s.id)).build(),
                    false, (f, why) -> {
                        if (s.lost) {
                            return;
                        }
                        if (f != null && f.hasLeaseKeepAliveResponse() && f.getLeaseKeepAliveResponse().getTTL() > 0) {
                            confirmed(s, sent);
                        } else if (f != null && (f.hasLeaseKeepAliveResponse()
                                || f.hasError() && f.getError().getCode() == Error.Code.LEASE_NOT_FOUND)) {
                            sessionLost(s, "the cluster reports lease " + s.id + " gone", true);
                            return;
                        }
                        keepAliveLater(s);
                    });
        });
    }

    /** A keep-alive sent at {@code sent} was confirmed: safe-until moves, unless a held place already passed it. */
    private void confirmed(Session s, long sent) {
        if (sent - s.lastConfirmedSend <= 0) {
            return;
        }
        for (Place p : List.copyOf(places)) {
            if (p.session == s && p.state == State.HOLDING && clock.nanoTime() - s.safeUntil() >= 0) {
                lost(p, "safe-until passed");   // Tenure's timer fires first when the process wakes
            }
        }
        s.lastConfirmedSend = sent;
        long until = clock.trueTimeOf(s.safeUntil());
        world.safeUntil(s.id, until);
        for (Place p : places) {
            if (p.session == s && p.state == State.HOLDING) {
                world.lockHoldExtended(p.queue, p.holder(), until);
            }
        }
    }

    /**
     * The session is lost: its places with it ({@code tell}), or — the old giveUpSession — only the keep-alives
     * stop, and the handles keep their safe-until.
     */
    private void sessionLost(Session s, String why, boolean tell) {
        if (s.lost) {
            return;
        }
        s.lost = true;
        world.note(name + "'s session " + s.id + " is lost: " + why);
        if (session == s) {
            session = null;
        }
        if (tell) {
            for (Place p : List.copyOf(places)) {
                if (p.session == s && (p.state == State.HOLDING || p.state == State.WAITING)) {
                    lost(p, "session lost: " + why);
                }
            }
        }
    }

    // --- one place: Contender ---

    private void join(Place p) {
        places.add(p);
        withSession(s -> {
            p.session = s;
            p.key = p.queue + Long.toHexString(s.id) + "-" + Long.toHexString(s.nextSequence.merge(p.queue, 1L, Long::sum));
            ByteString key = utf8(p.key);
            PutRequest put = PutRequest.newBuilder().setKey(key).setValue(utf8(name)).setLease(s.id).build();
            TxnRequest txn = TxnRequest.newBuilder()
                    .addCompare(Compare.newBuilder().setKey(utf8(p.queue)).setRangeEnd(prefixEnd(p.queue))
                            .setTarget(Compare.Target.LEASE).setResult(Compare.Result.EQUAL).setLease(0))
                    .addSuccess(RequestOp.newBuilder().setRequestPut(put))
                    .addFailure(RequestOp.newBuilder().setRequestPut(put))
                    .addFailure(RequestOp.newBuilder().setRequestRange(RangeRequest.newBuilder().setKey(utf8(p.queue))
                            .setRangeEnd(prefixEnd(p.queue))))
                    .build();
            send(Frame.newBuilder().setTxnRequest(txn).build(), true, (f, why) -> joined(p, f, why));
        });
    }

    private void joined(Place p, Frame f, String why) {
        if (f != null && f.hasTxnResponse()) {
            var r = f.getTxnResponse();
            if (r.getSucceeded()) {
                p.token = r.getHeader().getRevision();
                hold(p);
                return;
            }
            List<KeyValue> queue = contenders(r.getResponses(1).getResponseRange().getKvsList(), p.queue);
            p.token = queue.stream().filter(kv -> kv.getKey().toStringUtf8().equals(p.key))
                    .mapToLong(KeyValue::getCreateRevision).findFirst().orElse(0);
            p.state = State.WAITING;
            p.deadline = clock.nanoTime() + ACQUIRE_TIMEOUT_NANOS;
            waitFirst(p, queue);
            return;
        }
        places.remove(p);
        String failure = f == null ? why : f.getError().getCode() + " " + f.getError().getMessage();
        world.note(name + " could not join " + p.lock() + ": " + failure);
        world.countRecipe("joins failed: " + (f == null ? "unknown outcome" : f.getError().getCode()));
        if (f != null && f.getError().getCode() == Error.Code.LEASE_NOT_FOUND) {
            sessionLost(p.session, "a write found it gone", true);
        } else if (mutation == Mutation.REVOKE_SESSION_ON_FAILURE) {
            giveUpSession(p.session);
        } else if (f == null || !nothingWritten(f.getError().getCode())) {
            cleanUp(p, 0);   // the key may be in the queue: delete it, and only it
        }
    }

    /** {@code Contender.awaitFirst} over one view of the queue (the join's, or a poll's). */
    private void waitFirst(Place p, List<KeyValue> queue) {
        if (p.state != State.WAITING) {
            return;
        }
        int mine = -1;
        for (int i = 0; i < queue.size(); i++) {
            if (queue.get(i).getKey().toStringUtf8().equals(p.key) && queue.get(i).getCreateRevision() == p.token) {
                mine = i;
            }
        }
        KeyValue first = p.firstPredecessor;
        boolean firstGone = first != null && queue.stream().noneMatch(kv -> kv.getKey().equals(first.getKey())
                && kv.getCreateRevision() == first.getCreateRevision());
        if (mutation == Mutation.NO_OWN_KEY_CONFIRMATION && firstGone || mine == 0) {
            hold(p);
        } else if (mine < 0) {
            lost(p, "its key " + p.key + " is gone");
        } else if (clock.nanoTime() - p.deadline >= 0) {
            leave(p, "gave up waiting");
        } else {
            p.firstPredecessor = mine == 1 ? queue.get(0) : null;
            after(world.random.nextLong(100, 300), () -> poll(p));
        }
    }

    private void poll(Place p) {
        if (p.state != State.WAITING) {
            return;
        }
        send(Frame.newBuilder().setRangeRequest(RangeRequest.newBuilder().setKey(utf8(p.queue))
                .setRangeEnd(prefixEnd(p.queue))).build(), false, (f, why) -> {
            if (f != null && f.hasRangeResponse()) {
                waitFirst(p, contenders(f.getRangeResponse().getKvsList(), p.queue));
            } else if (p.state == State.WAITING) {
                after(world.random.nextLong(100, 300), () -> poll(p));
            }
        });
    }

    /** First in the queue: held while safe-until is ahead ({@code Lock.acquire}, {@code Contender.watchTenure}). */
    private void hold(Place p) {
        if (p.session.lost || clock.nanoTime() - p.session.safeUntil() >= 0) {
            lost(p, "safe-until passed before it could hold");
            return;
        }
        p.state = State.HOLDING;
        world.lockHeld(p.queue, p.holder(), clock.trueTimeOf(p.session.safeUntil()));
        checkSafeUntil(p);
        if (world.now() < faultsUntil && world.random.nextInt(15) == 0) {
            pause();   // stopped while it holds: a `rotactl lock` under SIGSTOP
        }
        if (world.now() < faultsUntil && world.random.nextInt(5) == 0) {
            // The scenario: while this lock is held, a second one whose name is over the key limit.
            after(world.random.nextLong(10, 150), () -> {
                if (p.state == State.HOLDING && places.stream().noneMatch(q -> q.queue.equals(OVERSIZED))) {
                    join(new Place(OVERSIZED));
                }
            });
        }
        after(world.random.nextLong(200, 2_000), () -> release(p));
    }

    /** {@code Tenure.scheduleSafeUntilCheck}: a held place is lost when safe-until passes. */
    private void checkSafeUntil(Place p) {
        long wait = Math.max(1, (p.session.safeUntil() - clock.nanoTime()) / MS + 1);
        after(wait, () -> {
            if (p.state != State.HOLDING) {
                return;
            }
            if (clock.nanoTime() - p.session.safeUntil() >= 0) {
                lost(p, "safe-until passed");
            } else {
                checkSafeUntil(p);
            }
        });
    }

    /**
     * The place is lost (its window ends now); the application still releases it, as {@code rotactl lock}
     * does in its finally: {@code Contender.retire} on a lost place deletes the own key, guarded.
     */
    private void lost(Place p, String why) {
        if (p.state == State.LEAVING) {
            return;
        }
        boolean held = p.state == State.HOLDING;
        p.state = State.LEAVING;
        if (held) {
            world.lockHoldEnded(p.queue, p.holder());
        }
        world.note(name + " lost " + p.key + ": " + why);
        send(lateDelete(p), true, (f, w) -> {
            places.remove(p);
            if (f == null || f.hasError()) {
                cleanUp(p, 0);
            }
        });
    }

    /** {@code Contender.retire}: one guarded txn deleting the own key; the window ends when it is sent. */
    private void release(Place p) {
        if (p.state != State.HOLDING) {
            return;
        }
        leave(p, "released");
    }

    /**
     * Leaves the queue: a holder's release ({@code retire}) or a waiter that gives up ({@code abandon}), each the
     * guarded delete; a failure is this place's alone.
     */
    private void leave(Place p, String why) {
        boolean held = p.state == State.HOLDING;
        if (held) {
            world.lockHoldEnded(p.queue, p.holder());
        }
        p.state = State.LEAVING;
        world.note(name + " leaves " + p.key + ": " + why);
        send(held ? ownKeyDelete(p) : lateDelete(p), true, (f, w) -> {
            places.remove(p);
            if (f != null && f.hasTxnResponse()) {
                return;
            }
            world.countRecipe("leaves failed: " + (f == null ? "unknown outcome" : f.getError().getCode()));
            if (mutation == Mutation.REVOKE_SESSION_ON_FAILURE) {
                giveUpSession(p.session);
            } else if (f == null || !nothingWritten(f.getError().getCode())) {
                cleanUp(p, 0);
            }
        });
    }

    /**
     * {@code Contender.ownKeyDelete}: delete the own key only if it is still this place's — its create revision
     * is the token; before the token is known, only if it is on this session's lease (LF9).
     */
    private Frame ownKeyDelete(Place p) {
        Compare guard = p.token > 0
                ? Compare.newBuilder().setKey(utf8(p.key)).setTarget(Compare.Target.CREATE)
                        .setResult(Compare.Result.EQUAL).setCreateRevision(p.token).build()
                : Compare.newBuilder().setKey(utf8(p.key)).setTarget(Compare.Target.LEASE)
                        .setResult(Compare.Result.EQUAL).setLease(p.session.id).build();
        return Frame.newBuilder().setTxnRequest(TxnRequest.newBuilder().addCompare(guard)
                .addSuccess(RequestOp.newBuilder().setRequestDeleteRange(DeleteRangeRequest.newBuilder()
                        .setKey(utf8(p.key))))).build();
    }

    /** The delete of a lost or given-up place's own key: guarded, or by name under the mutation. */
    private Frame lateDelete(Place p) {
        return mutation == Mutation.UNGUARDED_LATE_RELEASE
                ? Frame.newBuilder().setDeleteRangeRequest(DeleteRangeRequest.newBuilder().setKey(utf8(p.key))).build()
                : ownKeyDelete(p);
    }

    /** {@code Contender.cleanUp}: the guarded delete, retried until answered or the session ends. */
    private void cleanUp(Place p, int attempt) {
        if (!usable(p.session)) {
            return;
        }
        world.countRecipe("clean-up deletes");
        send(ownKeyDelete(p), true, (f, why) -> {
            if (f == null || f.hasError()) {
                after(Math.min(2_000, 100L << Math.min(attempt, 5)), () -> cleanUp(p, attempt + 1));
            }
        });
    }

    /** The old {@code Contender.giveUpSession} (mutation): revoke the shared lease; new places grant anew. */
    private void giveUpSession(Session s) {
        if (s == null) {
            return;
        }
        sessionLost(s, "given up after a failed write (the old giveUpSession)", false);
        send(Frame.newBuilder().setLeaseRevokeRequest(LeaseRevokeRequest.newBuilder().setID(s.id)).build(), true,
                (f, why) -> { });
    }

    /** {@code Contender.nothingWritten}: a refusal, so a failed write left nothing behind. */
    static boolean nothingWritten(Error.Code code) {
        return switch (code) {
            case INVALID_ARGUMENT, REQUEST_TOO_LARGE, PERMISSION_DENIED, NO_SPACE, LEASE_NOT_FOUND, SESSION_EXPIRED,
                 AUTH_FAILED, INVALID_AUTH_TOKEN, AUTH_NOT_ENABLED, COMPACTED, MEMBERSHIP_REFUSED -> true;
            default -> false;
        };
    }

    /** {@code Contender.contenders}: keys of {@code queue} with a lease, lowest create revision first. */
    private static List<KeyValue> contenders(List<KeyValue> kvs, String queue) {
        List<KeyValue> list = new ArrayList<>();
        for (KeyValue kv : kvs) {
            if (kv.getLease() != 0 && kv.getKey().toStringUtf8().startsWith(queue)) {
                list.add(kv);
            }
        }
        list.sort(Comparator.comparingLong(KeyValue::getCreateRevision));
        return list;
    }

    private static ByteString utf8(String s) {
        return ByteString.copyFromUtf8(s);
    }

    /** The end of the range of keys starting with {@code prefix} (its last byte + 1; prefixes end in '/'). */
    private static ByteString prefixEnd(String prefix) {
        return utf8(prefix.substring(0, prefix.length() - 1) + (char) (prefix.charAt(prefix.length() - 1) + 1));
    }
}
