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
import io.rota.proto.RegisterSessionRequest;
import io.rota.proto.RequestOp;
import io.rota.proto.SessionRef;
import io.rota.proto.TxnRequest;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiConsumer;

/**
 * A simulated application process with a clock of its own (drifting within the bound): it calls members
 * over the world's network and tells the world what it was told, for the invariants to judge.
 */
abstract class SimClient {

    private static final long MS = 1_000_000L;
    private static final ByteString LOCK = ByteString.copyFromUtf8("lock/daily-email");

    final ServerWorld world;
    final SimClock clock;
    final String name;

    SimClient(ServerWorld world, String name) {
        this.world = world;
        this.name = name;
        this.clock = new SimClock(world.loop, world.random.nextLong(1L << 40), world.driftPpm(), 0);
    }

    abstract void start();

    /** Run {@code r} after {@code localMs} of this client's clock. */
    void later(long localMs, Runnable r) {
        world.loop.at(clock.trueTimeOf(clock.nanoTime() + localMs * MS), r);
    }

    /** True time until which this process is stopped (a long GC, SIGSTOP): nothing of it runs meanwhile. */
    long pausedUntil;

    /** Run {@code r} now, or when the process wakes if it is stopped (the recipe clients pause). */
    void awake(Runnable r) {
        if (world.now() < pausedUntil) {
            world.loop.at(pausedUntil, () -> awake(r));
        } else {
            r.run();
        }
    }

    /** Run {@code r} after {@code localMs} of this client's clock, once the process is awake. */
    void after(long localMs, Runnable r) {
        later(localMs, () -> awake(r));
    }

    void call(Frame request, BiConsumer<Frame, String> done) {
        world.call(this, world.random.nextInt(world.members.size()), request, done);
    }

    @Override
    public String toString() {
        return name;
    }

    /**
     * A lock contender as the SDK recipe behaves: grant a lease, keep it alive every TTL/3, create the lock
     * key under it if absent, hold, release (delete, revoke). Its safe-until is the send time of its last
     * acknowledged grant or keep-alive plus the TTL, less the drift margin — on its own clock. Sometimes it
     * stalls (a long GC) and sends nothing for seconds.
     */
    static final class LockClient extends SimClient {
        private long lease;
        private long ttlSeconds;
        private long safeUntilLocal;
        private boolean holding;
        private long generation;
        private long stalledUntilLocal;

        LockClient(ServerWorld world, String name) {
            super(world, name);
        }

        @Override
        void start() {
            later(world.random.nextLong(10, 500), this::grant);
        }

        private long marginNanos() {
            return ttlSeconds * 1_000_000_000L * 4 * ServerWorld.MAX_DRIFT_PPM / 1_000_000 + MS;
        }

        private void trusted(long sentLocal) {
            safeUntilLocal = Math.max(safeUntilLocal, sentLocal + ttlSeconds * 1_000_000_000L - marginNanos());
            long until = clock.trueTimeOf(safeUntilLocal);
            world.safeUntil(lease, until);
            if (holding) {
                world.holdExtended(this, until);
            }
        }

        private boolean valid() {
            return clock.nanoTime() < safeUntilLocal;
        }

        private void grant() {
            long my = ++generation;
            holding = false;
            long ttl = 2 + world.random.nextInt(4);
            long sent = clock.nanoTime();
            call(Frame.newBuilder().setLeaseGrantRequest(LeaseGrantRequest.newBuilder().setTTL(ttl)).build(), (f, why) -> {
                if (my != generation) {
                    return;
                }
                if (f == null || !f.hasLeaseGrantResponse()) {
                    later(world.random.nextLong(50, 300), this::grant);
                    return;
                }
                lease = f.getLeaseGrantResponse().getID();
                ttlSeconds = f.getLeaseGrantResponse().getTTL();
                safeUntilLocal = 0;
                trusted(sent);
                keepAliveLater(my);
                tryLock(my);
            });
        }

        private void keepAliveLater(long my) {
            later(ttlSeconds * 1000 / 3, () -> {
                if (my != generation) {
                    return;
                }
                if (clock.nanoTime() < stalledUntilLocal) {
                    keepAliveLater(my);
                    return;
                }
                if (world.random.nextInt(40) == 0) {
                    stalledUntilLocal = clock.nanoTime() + world.random.nextLong(500, 6_000) * MS;
                    world.note(name + " stalls");
                }
                long sent = clock.nanoTime();
                call(Frame.newBuilder().setLeaseKeepAliveRequest(LeaseKeepAliveRequest.newBuilder().setID(lease)).build(),
                        (f, why) -> {
                            if (my != generation) {
                                return;
                            }
                            if (f != null && f.hasLeaseKeepAliveResponse() && f.getLeaseKeepAliveResponse().getTTL() > 0) {
                                trusted(sent);
                            } else if (f != null && (f.hasLeaseKeepAliveResponse() || f.hasError()
                                    && f.getError().getCode() == Error.Code.LEASE_NOT_FOUND)) {
                                lost(my);
                                return;
                            }
                            keepAliveLater(my);
                        });
            });
        }

        private void lost(long my) {
            if (holding) {
                world.released(this);
            }
            holding = false;
            generation++;
            later(world.random.nextLong(50, 500), this::grant);
        }

        /** Create the lock key if absent; otherwise read it (an earlier attempt may have created it). */
        private void tryLock(long my) {
            if (my != generation || holding) {
                return;
            }
            if (!valid() || clock.nanoTime() < stalledUntilLocal) {
                later(world.random.nextLong(100, 300), () -> tryLock(my));
                return;
            }
            TxnRequest txn = TxnRequest.newBuilder()
                    .addCompare(Compare.newBuilder().setKey(LOCK).setTarget(Compare.Target.VERSION)
                            .setResult(Compare.Result.EQUAL).setVersion(0))
                    .addSuccess(RequestOp.newBuilder().setRequestPut(PutRequest.newBuilder().setKey(LOCK)
                            .setValue(ByteString.copyFromUtf8(name)).setLease(lease)))
                    .addFailure(RequestOp.newBuilder().setRequestRange(RangeRequest.newBuilder().setKey(LOCK)))
                    .build();
            call(Frame.newBuilder().setTxnRequest(txn).build(), (f, why) -> {
                if (my != generation || holding) {
                    return;
                }
                boolean mine = false;
                if (f != null && f.hasTxnResponse()) {
                    if (f.getTxnResponse().getSucceeded()) {
                        mine = true;
                    } else {
                        var kvs = f.getTxnResponse().getResponses(0).getResponseRange().getKvsList();
                        mine = !kvs.isEmpty() && owned(kvs.get(0));
                    }
                }
                if (mine && valid() && clock.nanoTime() >= stalledUntilLocal) {
                    holding = true;
                    world.acquired(this, clock.trueTimeOf(safeUntilLocal));
                    later(world.random.nextLong(200, 2_000), () -> release(my));
                } else {
                    later(world.random.nextLong(50, 300), () -> tryLock(my));
                }
            });
        }

        private boolean owned(KeyValue kv) {
            return kv.getLease() == lease && kv.getValue().toStringUtf8().equals(name);
        }

        private void release(long my) {
            if (my != generation || !holding) {
                return;
            }
            if (clock.nanoTime() < stalledUntilLocal) {
                later(100, () -> release(my));
                return;
            }
            holding = false;
            world.released(this);
            long released = lease;
            generation++;
            TxnRequest delete = TxnRequest.newBuilder()
                    .addCompare(Compare.newBuilder().setKey(LOCK).setTarget(Compare.Target.LEASE)
                            .setResult(Compare.Result.EQUAL).setLease(released))
                    .addSuccess(RequestOp.newBuilder().setRequestDeleteRange(DeleteRangeRequest.newBuilder().setKey(LOCK)))
                    .build();
            call(Frame.newBuilder().setTxnRequest(delete).build(), (f, why) -> call(Frame.newBuilder()
                    .setLeaseRevokeRequest(LeaseRevokeRequest.newBuilder().setID(released)).build(), (g, w) -> { }));
            later(world.random.nextLong(100, 1_000), this::grant);
        }
    }

    /**
     * Writes unique keys under an exactly-once session, retrying each sequence until it is answered, and now
     * and then re-sending an answered one: the answer must be the one remembered.
     */
    static final class Writer extends SimClient {
        private long clientId;
        private ByteString secret = ByteString.EMPTY;
        private long sequence;
        private final Map<Long, Long> answered = new HashMap<>();

        Writer(ServerWorld world, String name) {
            super(world, name);
        }

        @Override
        void start() {
            later(world.random.nextLong(10, 300), this::register);
        }

        private void register() {
            call(Frame.newBuilder().setRegisterSessionRequest(RegisterSessionRequest.getDefaultInstance()).build(),
                    (f, why) -> {
                        if (f == null || !f.hasRegisterSessionResponse()) {
                            later(world.random.nextLong(50, 300), this::register);
                            return;
                        }
                        clientId = f.getRegisterSessionResponse().getClientId();
                        secret = f.getRegisterSessionResponse().getSecret();
                        sequence = 0;
                        answered.clear();
                        next();
                    });
        }

        private void next() {
            send(++sequence);
        }

        private Frame put(long seq) {
            // One write in flight at a time: it is also the lowest the writer still waits on (§6.3).
            return Frame.newBuilder().setSession(SessionRef.newBuilder().setClientId(clientId).setSecret(secret)
                            .setSequence(seq).setFirstIncomplete(seq))
                    .setPutRequest(PutRequest.newBuilder().setKey(ByteString.copyFromUtf8("w/" + clientId + "/" + seq))
                            .setValue(ByteString.copyFromUtf8(name)).setPrevKv(true)).build();
        }

        private void send(long seq) {
            long session = clientId;
            call(put(seq), (f, why) -> {
                if (session != clientId) {
                    return;
                }
                if (f != null && f.hasPutResponse()) {
                    long revision = f.getPutResponse().getHeader().getRevision();
                    Long first = answered.putIfAbsent(seq, revision);
                    if (first != null && first != revision) {
                        world.fail(name + ": a retry of sequence " + seq + " was answered revision " + revision
                                + ", the first answer was " + first);
                    }
                    world.acknowledgedWrite(revision);
                    if (seq == sequence && world.random.nextInt(10) == 0) {
                        later(world.random.nextLong(1, 50), () -> send(seq));   // a duplicate delivery
                    } else if (seq == sequence) {
                        later(world.random.nextLong(10, 150), this::next);
                    }
                } else if (f != null && f.hasError() && f.getError().getCode() == Error.Code.SESSION_EXPIRED) {
                    register();
                } else if (seq == sequence || !answered.containsKey(seq)) {
                    later(world.random.nextLong(50, 200), () -> send(seq));
                }
            });
        }
    }

    /** A client driven step by step by a directed test. */
    static final class Probe extends SimClient {
        Probe(ServerWorld world) {
            super(world, "probe");
        }

        @Override
        void start() {
        }

        /** Call member {@code member}; the future fails with the reason if no answer came. */
        CompletableFuture<Frame> call(SimMember member, Frame request) {
            var out = new CompletableFuture<Frame>();
            world.call(this, member.index, request, (f, why) -> {
                if (f != null) {
                    out.complete(f);
                } else {
                    out.completeExceptionally(new IOException(why));
                }
            });
            return out;
        }

        CompletableFuture<Frame> put(SimMember member, String key) {
            return call(member, Frame.newBuilder().setPutRequest(PutRequest.newBuilder()
                    .setKey(ByteString.copyFromUtf8(key)).setValue(ByteString.copyFromUtf8("v"))).build())
                    .whenComplete((f, e) -> {
                        if (f != null && f.hasPutResponse()) {
                            world.acknowledgedWrite(f.getPutResponse().getHeader().getRevision());
                        }
                    });
        }

        /** A linearizable read that reports to the world's stale-read check. */
        CompletableFuture<Frame> read(SimMember member) {
            long mustSee = world.maxAckedRevision();
            return call(member, Frame.newBuilder().setRangeRequest(RangeRequest.newBuilder()
                    .setKey(ByteString.copyFromUtf8("w/")).setRangeEnd(ByteString.copyFromUtf8("w0"))).build())
                    .whenComplete((f, e) -> {
                        if (f != null && f.hasRangeResponse()) {
                            world.readAnswered(f.getRangeResponse().getHeader().getRevision(), mustSee, "probe");
                        }
                    });
        }
    }

    /** Linearizable reads: each must see every write acknowledged before it was sent. */
    static final class Reader extends SimClient {
        Reader(ServerWorld world, String name) {
            super(world, name);
        }

        @Override
        void start() {
            later(world.random.nextLong(10, 300), this::read);
        }

        private void read() {
            long mustSee = world.maxAckedRevision();
            call(Frame.newBuilder().setRangeRequest(RangeRequest.newBuilder().setKey(ByteString.copyFromUtf8("w/"))
                    .setRangeEnd(ByteString.copyFromUtf8("w0")).setCountOnly(true)).build(), (f, why) -> {
                if (f != null && f.hasRangeResponse()) {
                    world.readAnswered(f.getRangeResponse().getHeader().getRevision(), mustSee, name);
                }
                later(world.random.nextLong(20, 200), this::read);
            });
        }
    }
}
