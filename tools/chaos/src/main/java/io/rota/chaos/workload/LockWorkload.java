package io.rota.chaos.workload;

import io.rota.chaos.checker.CheckReport;
import io.rota.chaos.checker.LockChecker;
import io.rota.chaos.history.Event;
import io.rota.client.Op;
import io.rota.client.RotaClient;
import io.rota.client.RotaException;
import io.rota.client.recipes.FenceGuard;
import io.rota.client.recipes.Lock;
import io.rota.client.recipes.LockHandle;
import io.rota.client.recipes.LockOptions;
import io.rota.client.recipes.LockTimeoutException;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.locks.LockSupport;

/**
 * The lock workload: every client process (its own {@link RotaClient}) again and again acquires one of
 * {@code locks} locks (at least {@link #MIN_LOCKS}; the SDK's {@link Lock} recipe, TTL {@link #TTL}), holds it
 * for a tenth to all of the longest hold (500 ms at the default 100 operations/s, shorter at higher rates, not
 * below {@link #MIN_HOLD}) doing 1–3
 * fenced writes to a shared in-memory resource in this process (a {@link FenceGuard} per lock: a write with a
 * token lower than one already accepted is rejected), one guarded write in Rota ({@link LockHandle#guardedTxn()}
 * putting the token into {@code lockwl/data/<lock>}), and releases.
 *
 * <p>Server faults alone rarely make a holder stale inside a sub-second critical section, so a fraction
 * {@link #STALL_PROBABILITY} of holders <b>stall</b>: like a holder frozen by a long GC pause past its lease,
 * its lease is revoked (the same end as an expiry, without waiting a TTL), and it waits until another holder's
 * write reached the resource (at most {@link #MAX_STALL}), then carries on with its old token without checking
 * {@link LockHandle#isHeld()}. Its writes must be refused: by the resource, and by Rota (guarded txn not
 * succeeded).
 *
 * <p>A fraction {@link #DOOMED_PROBABILITY} of holders, while holding, also try an operation that must fail
 * (issue 31, item 7): a second lock whose name is over the key limit, the held lock again (it queues behind
 * itself and times out), and on a run with auth ({@code --auth}) a lock outside the user's prefix. A failure of
 * one lock must not cost the client's other lock its tenure; the safe-until check below judges that.
 *
 * <p>History events (key: the lock's name; value: the fencing token): {@code acquire} (ok: the token; fail:
 * acquire timed out; info: the cluster could not be reached), {@code write} (the resource: ok = accepted,
 * fail = rejected as stale), {@code guard} (the guarded Rota txn: ok with {@code result} = succeeded; info:
 * unknown), {@code stall} (the lease revoked, then waiting for a successor) and {@code release} (ok with
 * {@code result} = the key was still held). The resource records a write's invoke and outcome while it holds
 * its own monitor, so the history's order of accepted writes is the resource's acceptance order.
 * {@code safe-until} (ok: the holder's safe-until as a history time) is recorded after the acquire, before
 * each fenced write and before the guarded write, each time it moved.
 *
 * <p>The checks ({@link LockChecker}), per lock: fencing (no accepted write has a token lower than one
 * accepted before it), token order (an acquisition that completed before another began has the lower token;
 * no token is handed out twice), guarded Rota writes (none from a holder whose lock a later holder had already
 * acquired, and none with a token lower than an earlier applied one, applies). Overlapping critical sections
 * are counted and reported, not judged: a stalled holder still believes it holds the lock; fencing is what
 * must make that harmless. What is judged is the holders' <b>safe-until</b> ({@link LockHandle#safeUntilNanos()},
 * recorded as a {@code safe-until} event whenever it moves, as a history time): no holder acquires before a
 * holder with a lower token has reached its safe-until, released or stalled.
 */
public final class LockWorkload implements Workload {

    /** The TTL of each contender's lease. */
    static final Duration TTL = Duration.ofSeconds(3);
    /** How many lock names the clients contend for. */
    static final int MIN_LOCKS = 2;
    /** The longest hold at the default rate; it shrinks in proportion as the rate grows. */
    static final Duration MAX_HOLD = Duration.ofMillis(500);
    /** The longest hold never shrinks below this. */
    static final Duration MIN_HOLD = Duration.ofMillis(10);
    /** How long one acquire waits at most. */
    static final Duration ACQUIRE_TIMEOUT = Duration.ofSeconds(15);
    /** The fraction of holders that stall past their lease. */
    static final double STALL_PROBABILITY = 0.1;
    /** How long a stalled holder waits at most for a successor's write. */
    static final Duration MAX_STALL = Duration.ofSeconds(5);
    /** Everything the workload writes is under this prefix (on a run with auth, its user may write nothing else). */
    public static final String PREFIX = "lockwl/";
    /** Where the guarded Rota writes go: {@code lockwl/data/<lock>}. */
    static final String DATA_PREFIX = PREFIX + "data/";
    /** The fraction of holders that, holding their lock, also try an operation that must fail (issue 31). */
    static final double DOOMED_PROBABILITY = 0.2;
    /** How long a doomed acquire waits at most. */
    static final Duration DOOMED_WAIT = Duration.ofMillis(200);
    /** A lock name over the cluster's 8 KiB key limit. */
    static final int OVERSIZED_NAME = 9_000;

    private final Counters counters = new Counters();
    private final List<Thread> threads = new ArrayList<>();
    private final List<RotaClient> clients = new ArrayList<>();
    private final Map<String, FencedResource> resources = new LinkedHashMap<>();
    private final int lockCount;
    private long longestHoldNanos = MAX_HOLD.toNanos();
    private volatile boolean stopping;
    private WorkloadContext context;
    private LockOptions options;

    /**
     * A lock workload.
     *
     * @param locks how many locks the clients contend for (at least {@link #MIN_LOCKS} are used)
     */
    public LockWorkload(int locks) {
        this.lockCount = Math.max(MIN_LOCKS, locks);
        for (int i = 0; i < lockCount; i++) {
            resources.put(lockName(i), new FencedResource(lockName(i)));
        }
    }

    private static String lockName(int i) {
        return "lock-" + i;
    }

    @Override
    public String name() {
        return "lock";
    }

    @Override
    public Counters counters() {
        return counters;
    }

    @Override
    public void start(WorkloadContext context) {
        this.context = context;
        longestHoldNanos = Math.max(MIN_HOLD.toNanos(), (long) (MAX_HOLD.toNanos() * 100 / context.rate()));
        longestHoldNanos = Math.min(MAX_HOLD.toNanos(), longestHoldNanos);
        options = LockOptions.defaults().withPrefix(PREFIX + "lock").withTtl(TTL);
        for (int c = 0; c < context.clients(); c++) {
            RotaClient client = context.newClient(c, Duration.ofSeconds(10), Duration.ofSeconds(1));
            clients.add(client);
            Lock[] locks = new Lock[lockCount];
            for (int i = 0; i < lockCount; i++) {
                locks[i] = Lock.of(client, lockName(i), options);
            }
            int process = c;
            Random random = new Random(context.seed() * 31 + c);
            Thread t = new Thread(() -> contender(client, locks, process, random), "lock-client-" + c);
            threads.add(t);
            t.start();
        }
    }

    private void contender(RotaClient client, Lock[] locks, int process, Random random) {
        while (!stopping) {
            Lock lock = locks[random.nextInt(lockCount)];
            record(process, Event.Type.INVOKE, "acquire", lock.name(), null, null);
            LockHandle handle;
            try {
                handle = lock.acquire(ACQUIRE_TIMEOUT);
            } catch (LockTimeoutException e) {
                record(process, Event.Type.FAIL, "acquire", lock.name(), null, null);
                continue;
            } catch (InterruptedException e) {
                record(process, Event.Type.INFO, "acquire", lock.name(), null, null);
                Thread.currentThread().interrupt();
                return;
            } catch (RuntimeException e) {
                // unreachable cluster or the waiter's lease lost: not held; its key (if any) expires with the lease
                record(process, Event.Type.INFO, "acquire", lock.name(), null, null);
                pause(Duration.ofMillis(100));
                continue;
            }
            String token = Long.toString(handle.fencingToken());
            record(process, Event.Type.OK, "acquire", lock.name(), token, null);
            long[] safeUntil = {Long.MIN_VALUE};
            noteSafeUntil(process, handle, safeUntil);
            try {
                if (random.nextDouble() < DOOMED_PROBABILITY) {
                    doomed(client, process, handle, random);
                }
                criticalSection(client, process, handle, random, safeUntil);
            } finally {
                release(process, handle);
            }
        }
    }

    /**
     * While holding {@code handle}, an operation on the same client that must fail (issue 31, item 7): a lock
     * whose name is over the key limit (refused), the held lock again (queues behind itself and times out), or,
     * on a run with auth, a lock outside the user's prefix (PERMISSION_DENIED). None may cost the held lock its
     * tenure — the safe-until check judges that — and none may succeed: that is counted as a violation.
     * History: {@code doomed} with the kind as value; fail = refused as it must be, ok = it succeeded, info =
     * another error (a fault made the outcome unknown).
     */
    private void doomed(RotaClient client, int process, LockHandle handle, Random random) {
        List<String> kinds = context.auth() ? List.of("oversized", "self", "denied") : List.of("oversized", "self");
        String kind = kinds.get(random.nextInt(kinds.size()));
        Lock lock = switch (kind) {
            case "oversized" -> Lock.of(client, "x".repeat(OVERSIZED_NAME), options);
            case "self" -> Lock.of(client, handle.name(), options);
            default -> Lock.of(client, handle.name(), options.withPrefix("denied/lock"));
        };
        record(process, Event.Type.INVOKE, "doomed", handle.name(), kind, null);
        try {
            lock.acquire(DOOMED_WAIT).release();
            record(process, Event.Type.OK, "doomed", handle.name(), kind, null);
        } catch (LockTimeoutException e) {
            record(process, kind.equals("self") ? Event.Type.FAIL : Event.Type.INFO, "doomed", handle.name(), kind, null);
        } catch (RotaException e) {
            boolean refused = switch (kind) {
                case "oversized" -> e.code() == RotaException.Code.REQUEST_TOO_LARGE
                        || e.code() == RotaException.Code.INVALID_ARGUMENT;
                case "denied" -> e.code() == RotaException.Code.PERMISSION_DENIED;
                default -> false;
            };
            record(process, refused ? Event.Type.FAIL : Event.Type.INFO, "doomed", handle.name(), kind, null);
        } catch (InterruptedException e) {
            record(process, Event.Type.INFO, "doomed", handle.name(), kind, null);
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            record(process, Event.Type.INFO, "doomed", handle.name(), kind, null);
        }
    }

    /** Records the handle's safe-until (as a history time) if it moved since last recorded. */
    private void noteSafeUntil(int process, LockHandle handle, long[] recorded) {
        long s = context.runTime(handle.safeUntilNanos());
        if (s > recorded[0]) {
            recorded[0] = s;
            record(process, Event.Type.INVOKE, "safe-until", handle.name(), null, null);
            record(process, Event.Type.OK, "safe-until", handle.name(), Long.toString(s), null);
        }
    }

    private void criticalSection(RotaClient client, int process, LockHandle handle, Random random, long[] safeUntil) {
        int writes = 1 + random.nextInt(3);
        long holdNanos = longestHoldNanos / 10 + (long) (random.nextDouble() * longestHoldNanos * 9 / 10);
        int stallBefore = random.nextDouble() < STALL_PROBABILITY ? random.nextInt(writes) : -1;
        FencedResource resource = resources.get(handle.name());
        for (int w = 0; w < writes; w++) {
            if (w == stallBefore) {
                stall(client, process, handle, resource);
            }
            noteSafeUntil(process, handle, safeUntil);
            resource.write(process, handle.fencingToken());
            LockSupport.parkNanos(holdNanos / writes);
        }
        noteSafeUntil(process, handle, safeUntil);
        guardedWrite(process, handle);
    }

    /** A holder frozen past its lease: the lease ends, and it resumes only once a successor wrote (or later). */
    private void stall(RotaClient client, int process, LockHandle handle, FencedResource resource) {
        String token = Long.toString(handle.fencingToken());
        record(process, Event.Type.INVOKE, "stall", handle.name(), token, null);
        try {
            client.leases().revoke(handle.leaseId());
        } catch (RuntimeException e) {
            // the lease may or may not be gone: carry on as a holder that merely paused
            record(process, Event.Type.INFO, "stall", handle.name(), token, null);
            return;
        }
        long giveUp = System.nanoTime() + MAX_STALL.toNanos();
        while (resource.highest() <= handle.fencingToken() && System.nanoTime() - giveUp < 0 && !stopping) {
            pause(Duration.ofMillis(20));
        }
        record(process, Event.Type.OK, "stall", handle.name(), token, null);
    }

    private void guardedWrite(int process, LockHandle handle) {
        String token = Long.toString(handle.fencingToken());
        record(process, Event.Type.INVOKE, "guard", handle.name(), token, null);
        try {
            boolean applied = handle.guardedTxn().then(Op.put(DATA_PREFIX + handle.name(), token)).commit().succeeded();
            record(process, Event.Type.OK, "guard", handle.name(), token, applied);
        } catch (RuntimeException e) {
            record(process, Event.Type.INFO, "guard", handle.name(), token, null);
        }
    }

    private void release(int process, LockHandle handle) {
        String token = Long.toString(handle.fencingToken());
        record(process, Event.Type.INVOKE, "release", handle.name(), token, null);
        try {
            record(process, Event.Type.OK, "release", handle.name(), token, handle.release());
        } catch (RuntimeException e) {
            // the key stays until its lease expires; the next holder waits for that
            record(process, Event.Type.INFO, "release", handle.name(), token, null);
        }
    }

    private void record(int process, Event.Type type, String f, String lock, String value, Boolean result) {
        context.history().record(process, type, f, lock, value, result);
        count(type);
    }

    private void count(Event.Type type) {
        switch (type) {
            case INVOKE -> { }
            case OK -> counters.ok();
            case FAIL -> counters.failed();
            default -> counters.info();
        }
    }

    private static void pause(Duration d) {
        LockSupport.parkNanos(d.toNanos());
    }

    /** Stops the contenders and waits for them (each finishes its critical section and releases). */
    @Override
    public void stop() {
        stopping = true;
        WorkloadContext.joinAll(threads, ACQUIRE_TIMEOUT.plus(MAX_STALL).plus(Duration.ofSeconds(40)));
    }

    /** Closes the clients; there are no final reads (the checks need none). */
    @Override
    public void finish() {
        clients.forEach(RotaClient::close);
    }

    /** The checks are {@link LockChecker}'s. */
    @Override
    public WorkloadResult check(List<Event> history) {
        CheckReport r = LockChecker.check(history);
        return new WorkloadResult(r.verdict(), 0, r.report());
    }

    /**
     * The shared resource a lock protects: a fencing check and, in the history, the log of every write it
     * accepted or rejected. The check and the recording happen under one monitor, so the history's order of
     * accepted writes is the order the resource accepted them in.
     */
    private final class FencedResource {
        private final String lock;
        private final FenceGuard guard = new FenceGuard();

        FencedResource(String lock) {
            this.lock = lock;
        }

        synchronized void write(int process, long token) {
            String value = Long.toString(token);
            record(process, Event.Type.INVOKE, "write", lock, value, null);
            record(process, guard.admit(token) ? Event.Type.OK : Event.Type.FAIL, "write", lock, value, null);
        }

        long highest() {
            return guard.highest();
        }
    }
}
