package io.rota.server.sim;

import com.google.protobuf.ByteString;
import io.rota.proto.Compare;
import io.rota.proto.DeleteRangeRequest;
import io.rota.proto.Frame;
import io.rota.proto.LeaseGrantRequest;
import io.rota.proto.LeaseKeepAliveRequest;
import io.rota.proto.LeaseRevokeRequest;
import io.rota.proto.PutRequest;
import io.rota.proto.RangeRequest;
import io.rota.proto.RequestOp;
import io.rota.proto.TxnRequest;

import java.util.function.BiConsumer;

/**
 * One application process running once-jobs the way the SDK's {@code OnceRecord} does (issue 31, items 3 and 5;
 * design.md LF8): every few seconds a new key {@code ro/day-N} ("today's reminders"), claimed by whichever
 * process is first, worked on, and completed. Each step mirrors {@code OnceRecord}:
 * <ul>
 *   <li>{@code claim()}: read the record; if absent, grant a claim lease and write CLAIMED in a txn that
 *       compares {@code create_revision(key) == 0}; the fencing token is the claim write's revision;</li>
 *   <li>the claim is held while its safe-until is ahead ({@code Tenure}, as a lock: send time of the last
 *       confirmed keep-alive or grant + TTL − margin, on this process's drifting clock) — the world judges it
 *       with invariant 8, so two claimers of one key are never inside their windows at once;</li>
 *   <li>{@code complete()}: DONE written by {@code guardedTxn()} — a compare of the record's mod revision with
 *       the token — so a claimer that lost its claim (paused past its lease while another claimed) cannot mark it
 *       DONE: invariant 10, at most one completion per key;</li>
 *   <li>a lost claim, or a process that gives up, releases it ({@code close()} without {@code complete()}): the
 *       same guarded txn deletes the record.</li>
 * </ul>
 * Processes pause (0.5–10 s, often past the claim's TTL) while they hold a claim. {@link Mutation} puts back what
 * the issue found — a claimer paused past its lease completing anyway — and what this model found: a claim lease
 * revoked after it may have expired (design.md LF13).
 */
final class OnceClient extends SimClient {

    /** What issue 31 found in once-records, put back on purpose. */
    enum Mutation {
        NONE,
        /** {@code complete()} writes DONE without comparing the token (before LF8): a lost claimer completes too. */
        UNGUARDED_COMPLETE,
        /**
         * The claim lease is revoked at the end whatever its age (before LF13): after a pause past its TTL its id
         * may be another process's session by now, whose keys the revoke deletes under a live holder.
         */
        REVOKE_AFTER_EXPIRY
    }

    static final String PREFIX = "ro/";
    /** A new once-key every this long (true time): "today's" job. */
    private static final long DAY_NANOS = 6_000_000_000L;
    private static final long MS = 1_000_000L;
    /** {@code LockOptions}' default clock drift, part of the margin. */
    private static final long CLOCK_DRIFT_NANOS = 100 * MS;

    private final Mutation mutation;
    private final long faultsUntil;
    /** The claim this process holds, or null; at most one at a time. */
    private Claim claim;
    /** The last day whose record this process saw DONE (or FAILED): nothing left to run for it. */
    private long finishedDay = -1;

    /** One claim: the claim lease and the token ({@code OnceRecord}'s claimLease, claimRevision). */
    private final class Claim {
        final String key;
        final long lease;
        final long ttlNanos;
        long lastConfirmedSend;
        long token;
        boolean over;

        Claim(String key, long lease, long ttlNanos, long grantSent) {
            this.key = key;
            this.lease = lease;
            this.ttlNanos = ttlNanos;
            this.lastConfirmedSend = grantSent;
        }

        long safeUntil() {
            return lastConfirmedSend + ttlNanos - (ttlNanos / 10 + 2 * CLOCK_DRIFT_NANOS);
        }

        String holder() {
            return name + " (" + key + ", token " + token + ")";
        }
    }

    OnceClient(ServerWorld world, String name, Mutation mutation, long faultsUntil) {
        super(world, name);
        this.mutation = mutation;
        this.faultsUntil = faultsUntil;
    }

    @Override
    void start() {
        after(world.random.nextLong(10, 500), this::act);
    }

    private void send(Frame request, BiConsumer<Frame, String> done) {
        call(request, (f, why) -> awake(() -> done.accept(f, why)));
    }

    private void act() {
        long day = world.now() / DAY_NANOS;
        if (claim == null && day != finishedDay) {
            claim(day);   // a claimed record is tried again at the next step: its claimer may die
        }
        after(world.random.nextLong(100, 800), this::act);
    }

    /** {@code OnceRecord.claim()}: read, then grant and claim with a compare on the record's absence. */
    private void claim(long day) {
        String key = PREFIX + "day-" + day;
        send(Frame.newBuilder().setRangeRequest(RangeRequest.newBuilder().setKey(utf8(key))).build(), (f, why) -> {
            if (f == null || !f.hasRangeResponse()) {
                return;   // unreachable: the next step tries again
            }
            if (f.getRangeResponse().getKvsCount() > 0) {
                if (!f.getRangeResponse().getKvs(0).getValue().toStringUtf8().startsWith("state=CLAIMED")) {
                    finishedDay = Math.max(finishedDay, day);   // DONE: not this process's to run
                }
                return;
            }
            long ttl = 3 + world.random.nextInt(3);
            long sent = clock.nanoTime();
            send(Frame.newBuilder().setLeaseGrantRequest(LeaseGrantRequest.newBuilder().setTTL(ttl)).build(), (g, w) -> {
                if (g == null || !g.hasLeaseGrantResponse()) {
                    return;
                }
                Claim c = new Claim(key, g.getLeaseGrantResponse().getID(),
                        g.getLeaseGrantResponse().getTTL() * 1_000_000_000L, sent);
                world.leaseGranted(c.lease);
                world.safeUntil(c.lease, clock.trueTimeOf(c.safeUntil()));
                TxnRequest txn = TxnRequest.newBuilder()
                        .addCompare(Compare.newBuilder().setKey(utf8(key)).setTarget(Compare.Target.CREATE)
                                .setResult(Compare.Result.EQUAL).setCreateRevision(0))
                        .addSuccess(RequestOp.newBuilder().setRequestPut(PutRequest.newBuilder().setKey(utf8(key))
                                .setValue(utf8("state=CLAIMED\nowner=" + name)).setLease(c.lease)))
                        .build();
                send(Frame.newBuilder().setTxnRequest(txn).build(), (r, x) -> claimed(c, r));
            });
        });
    }

    private void claimed(Claim c, Frame r) {
        if (r == null || !r.hasTxnResponse() || !r.getTxnResponse().getSucceeded()) {
            revokeIfOurs(c);   // another was first, or the outcome is unknown
            world.countRecipe("once claims not won");
            return;
        }
        c.token = r.getTxnResponse().getHeader().getRevision();
        if (clock.nanoTime() - c.safeUntil() >= 0) {
            release(c, "safe-until passed before it could work");
            return;
        }
        claim = c;
        world.countRecipe("once claims");
        world.lockHeld(c.key, c.holder(), clock.trueTimeOf(c.safeUntil()));
        keepAliveLater(c);
        checkSafeUntil(c);
        if (world.now() < faultsUntil && world.random.nextInt(4) == 0) {
            long nanos = world.random.nextLong(500, 10_000) * MS;
            pausedUntil = world.now() + nanos;   // paused while it works: a GC pause, SIGSTOP
            world.countRecipe("once claimers paused");
        }
        after(world.random.nextLong(200, 2_500), () -> complete(c));
    }

    private void keepAliveLater(Claim c) {
        after(c.ttlNanos / 3 / MS, () -> {
            if (c.over) {
                return;
            }
            long sent = clock.nanoTime();
            send(Frame.newBuilder().setLeaseKeepAliveRequest(LeaseKeepAliveRequest.newBuilder().setID(c.lease)).build(),
                    (f, why) -> {
                        if (c.over) {
                            return;
                        }
                        if (f != null && f.hasLeaseKeepAliveResponse() && f.getLeaseKeepAliveResponse().getTTL() > 0) {
                            if (clock.nanoTime() - c.safeUntil() >= 0) {
                                lost(c, "safe-until passed");   // Tenure's timer fires first when the process wakes
                                return;
                            }
                            if (sent - c.lastConfirmedSend > 0) {
                                c.lastConfirmedSend = sent;
                                long until = clock.trueTimeOf(c.safeUntil());
                                world.safeUntil(c.lease, until);
                                world.lockHoldExtended(c.key, c.holder(), until);
                            }
                        }
                        keepAliveLater(c);
                    });
        });
    }

    /** {@code Tenure.scheduleSafeUntilCheck}: the claim is lost when safe-until passes. */
    private void checkSafeUntil(Claim c) {
        long wait = Math.max(1, (c.safeUntil() - clock.nanoTime()) / MS + 1);
        after(wait, () -> {
            if (c.over) {
                return;
            }
            if (clock.nanoTime() - c.safeUntil() >= 0) {
                lost(c, "safe-until passed");
            } else {
                checkSafeUntil(c);
            }
        });
    }

    /** Lost: the work is interrupted ({@code runGuarded}), and {@code close()} releases the claim, guarded. */
    private void lost(Claim c, String why) {
        world.note(name + " lost its claim of " + c.key + ": " + why);
        world.countRecipe("once claims lost");
        if (mutation == Mutation.UNGUARDED_COMPLETE) {
            // Before LF8 nothing stopped the work: the claimer carries on to complete().
            world.lockHoldEnded(c.key, c.holder());
            return;
        }
        release(c, why);
    }

    /** {@code complete()}: DONE by the guarded txn (by a plain put under the mutation); the window ends at send. */
    private void complete(Claim c) {
        if (c.over) {
            return;
        }
        c.over = true;
        claim = null;
        world.lockHoldEnded(c.key, c.holder());
        PutRequest done = PutRequest.newBuilder().setKey(utf8(c.key)).setValue(utf8("state=DONE\nowner=" + name)).build();
        Frame request = mutation == Mutation.UNGUARDED_COMPLETE
                ? Frame.newBuilder().setPutRequest(done).build()
                : Frame.newBuilder().setTxnRequest(TxnRequest.newBuilder().addCompare(guard(c))
                        .addSuccess(RequestOp.newBuilder().setRequestPut(done))).build();
        send(request, (f, why) -> {
            boolean completed = f != null && (f.hasPutResponse()
                    || f.hasTxnResponse() && f.getTxnResponse().getSucceeded());
            if (completed) {
                world.onceCompleted(c.key, c.holder());
            } else {
                world.countRecipe("once completions refused");
            }
            revokeIfOurs(c);   // endClaim: the claim lease goes; DONE is not on it
        });
    }

    /** {@code close()} without {@code complete()}: the guarded delete releases the claim; then the lease goes. */
    private void release(Claim c, String why) {
        if (c.over) {
            return;
        }
        c.over = true;
        claim = null;
        world.lockHoldEnded(c.key, c.holder());
        world.note(name + " releases its claim of " + c.key + ": " + why);
        send(Frame.newBuilder().setTxnRequest(TxnRequest.newBuilder().addCompare(guard(c))
                .addSuccess(RequestOp.newBuilder().setRequestDeleteRange(DeleteRangeRequest.newBuilder()
                        .setKey(utf8(c.key))))).build(), (f, w) -> revokeIfOurs(c));
    }

    /** {@code OnceRecord.guardedTxn()}: the record's mod revision is still the claim's token. */
    private static Compare guard(Claim c) {
        return Compare.newBuilder().setKey(utf8(c.key)).setTarget(Compare.Target.MOD)
                .setResult(Compare.Result.EQUAL).setModRevision(c.token).build();
    }

    /**
     * {@code OnceRecord.revokeQuietly}: the claim lease is revoked only while it cannot have expired (a keep-alive
     * or the grant sent within its TTL confirmed); past that its id may be another process's by now (an explicit
     * grant, as etcd allows), and the lease ends by itself anyway (design.md LF13).
     */
    private void revokeIfOurs(Claim c) {
        if (mutation != Mutation.REVOKE_AFTER_EXPIRY && clock.nanoTime() - c.safeUntil() >= 0) {
            world.countRecipe("once claim leases left to expire");
            return;
        }
        send(Frame.newBuilder().setLeaseRevokeRequest(LeaseRevokeRequest.newBuilder().setID(c.lease)).build(),
                (f, why) -> { });
    }

    private static ByteString utf8(String s) {
        return ByteString.copyFromUtf8(s);
    }
}
