package io.rota.chaos.workload;

import io.rota.chaos.checker.Verdict;
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
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
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
 * <p>The checks ({@link #checkHistory}), per lock: fencing (no accepted write has a token lower than one
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

    @Override
    public WorkloadResult check(List<Event> history) {
        return checkHistory(history);
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

    /**
     * Judges a lock history (pure).
     *
     * @param history every event of the run
     * @return NO if a fenced write broke token order, a token was handed out twice or out of real-time order,
     *         a stale guarded Rota write applied, or a holder acquired within an earlier holder's safe-until;
     *         YES otherwise; with the figures in the report
     */
    public static WorkloadResult checkHistory(List<Event> history) {
        Map<String, List<Event>> byLock = new TreeMap<>();
        for (Event e : history) {
            if (!e.isNemesis()) {
                byLock.computeIfAbsent(e.key(), k -> new ArrayList<>()).add(e);
            }
        }
        Figures total = new Figures();
        StringBuilder details = new StringBuilder();
        for (Map.Entry<String, List<Event>> entry : byLock.entrySet()) {
            checkLock(entry.getKey(), entry.getValue(), total, details);
        }
        long violations = total.fencingViolations + total.tokenOrderViolations + total.staleGuardApplied
                + total.safeUntilOverlaps + total.doomedSucceeded;
        String report = String.format(Locale.ROOT, "locks: %d, acquisitions: %d (timed out %d, indeterminate %d),"
                        + " simulated holder stalls: %d%n"
                        + "fenced writes accepted: %d, stale writes rejected by the resource: %d%n"
                        + "guarded Rota writes applied: %d, refused: %d (of them from a stale holder, a later holder"
                        + " had acquired: %d), indeterminate: %d%n"
                        + "overlaps observed (a critical section began before another holder's ended): %d%n"
                        + "lock violations with fencing (accepted writes that broke token order): %d%n"
                        + "token order violations (a token handed out twice, or lower than one acquired"
                        + " before): %d%n"
                        + "stale guarded Rota writes applied: %d%n"
                        + "holders whose safe windows overlap (a higher token acquired before a lower one's"
                        + " safe-until, release or stall): %d%n"
                        + "doomed operations while holding (issue 31): refused %d, outcome unknown %d,"
                        + " succeeded (must not): %d%n"
                        + "violations: %d%n%s",
                byLock.size(), total.acquisitions, total.acquireTimeouts, total.acquireUnknown, total.stalls,
                total.accepted, total.rejected, total.guardApplied, total.guardRefused, total.staleGuardRefused,
                total.guardUnknown, total.overlaps, total.fencingViolations, total.tokenOrderViolations,
                total.staleGuardApplied, total.safeUntilOverlaps, total.doomedRefused, total.doomedUnknown,
                total.doomedSucceeded, violations, details);
        return new WorkloadResult(violations == 0 ? Verdict.YES : Verdict.NO, 0, report);
    }

    /** The counts over every lock. */
    private static final class Figures {
        long acquisitions;
        long acquireTimeouts;
        long acquireUnknown;
        long stalls;
        long accepted;
        long rejected;
        long guardApplied;
        long guardRefused;
        long staleGuardRefused;
        long guardUnknown;
        long overlaps;
        long fencingViolations;
        long tokenOrderViolations;
        long staleGuardApplied;
        long safeUntilOverlaps;
        long doomedRefused;
        long doomedUnknown;
        long doomedSucceeded;
    }

    /**
     * One holder's tenure: from its acquire's completion until the first of its safe-until (the latest one it
     * recorded), its release's invocation and its stall's invocation (the simulated pause revokes the lease:
     * from then on the holder knows nothing is promised). No later holder may acquire before that end.
     */
    private static final class Tenure {
        final int process;
        final long token;
        final long acquired;
        long safeUntil = Long.MIN_VALUE;
        long given = Long.MAX_VALUE;

        Tenure(int process, long token, long acquired) {
            this.process = process;
            this.token = token;
            this.acquired = acquired;
        }

        long end() {
            return Math.min(safeUntil, given);
        }
    }

    /** One completed operation: who, which token, when it was invoked and when it completed. */
    private record Done(int process, long token, long invoked, long completed) {
    }

    /** The highest token among operations completed strictly before a time (sorted by completion). */
    private static final class HighestBefore {
        private final long[] completed;
        private final long[] prefixMax;

        HighestBefore(List<Done> ops) {
            List<Done> sorted = new ArrayList<>(ops);
            sorted.sort(Comparator.comparingLong(Done::completed));
            completed = new long[sorted.size()];
            prefixMax = new long[sorted.size()];
            long max = Long.MIN_VALUE;
            for (int i = 0; i < sorted.size(); i++) {
                completed[i] = sorted.get(i).completed();
                max = Math.max(max, sorted.get(i).token());
                prefixMax[i] = max;
            }
        }

        long at(long time) {
            int i = Arrays.binarySearch(completed, time);
            int n = i >= 0 ? lowerBound(i, time) : -i - 1;   // how many completed strictly before time
            return n == 0 ? Long.MIN_VALUE : prefixMax[n - 1];
        }

        private int lowerBound(int found, long time) {
            int i = found;
            while (i > 0 && completed[i - 1] == time) {
                i--;
            }
            return i;
        }
    }

    private static void checkLock(String lock, List<Event> events, Figures total, StringBuilder details) {
        Map<Integer, Long> invokedAt = new HashMap<>();
        Map<Integer, long[]> openWindow = new HashMap<>();   // process -> {token, acquired}
        Map<Integer, Long> lastEventAt = new HashMap<>();
        List<long[]> windows = new ArrayList<>();             // {start, end, token}
        List<Done> acquisitions = new ArrayList<>();
        List<Done> guardsApplied = new ArrayList<>();
        List<Done> guardsRefused = new ArrayList<>();
        Map<Integer, Tenure> tenure = new HashMap<>();
        List<Tenure> tenures = new ArrayList<>();
        long highestAccepted = Long.MIN_VALUE;
        for (Event e : events) {
            int p = e.process();
            lastEventAt.put(p, e.time());
            if (e.type() == Event.Type.INVOKE) {
                invokedAt.put(p, e.time());
                if (e.f().equals("release") && openWindow.containsKey(p)) {
                    long[] w = openWindow.remove(p);
                    windows.add(new long[]{w[1], e.time(), w[0]});
                }
                if ((e.f().equals("release") || e.f().equals("stall")) && tenure.containsKey(p)) {
                    Tenure t = tenure.get(p);
                    t.given = Math.min(t.given, e.time());
                }
                continue;
            }
            long invoked = invokedAt.getOrDefault(p, e.time());
            switch (e.f() + "/" + e.type()) {
                case "acquire/OK" -> {
                    long token = token(e);
                    total.acquisitions++;
                    acquisitions.add(new Done(p, token, invoked, e.time()));
                    openWindow.put(p, new long[]{token, e.time()});
                    Tenure t = new Tenure(p, token, e.time());
                    tenure.put(p, t);
                    tenures.add(t);
                }
                case "safe-until/OK" -> {
                    Tenure t = tenure.get(p);
                    if (t != null) {
                        t.safeUntil = Math.max(t.safeUntil, Long.parseLong(String.valueOf(e.value())));
                    }
                }
                case "acquire/FAIL" -> total.acquireTimeouts++;
                case "acquire/INFO" -> total.acquireUnknown++;
                case "stall/OK", "stall/INFO" -> total.stalls++;
                case "write/OK" -> {
                    long token = token(e);
                    total.accepted++;
                    if (token < highestAccepted) {
                        total.fencingViolations++;
                        details.append(String.format(Locale.ROOT, "  %s: the resource accepted token %d from"
                                        + " process %d at %.3f s after it had accepted token %d%n", lock, token, p,
                                e.time() / 1e9, highestAccepted));
                    }
                    highestAccepted = Math.max(highestAccepted, token);
                }
                case "write/FAIL" -> total.rejected++;
                case "guard/OK" -> (Boolean.TRUE.equals(e.result()) ? guardsApplied : guardsRefused)
                        .add(new Done(p, token(e), invoked, e.time()));
                case "guard/INFO" -> total.guardUnknown++;
                case "doomed/FAIL" -> total.doomedRefused++;
                case "doomed/INFO" -> total.doomedUnknown++;
                case "doomed/OK" -> {
                    total.doomedSucceeded++;
                    details.append(String.format(Locale.ROOT, "  %s: process %d's doomed operation '%s' succeeded at"
                            + " %.3f s (it must be refused)%n", lock, p, e.value(), e.time() / 1e9));
                }
                default -> { }
            }
        }
        openWindow.forEach((p, w) -> windows.add(new long[]{w[1], lastEventAt.get(p), w[0]}));
        total.overlaps += overlaps(windows);
        total.tokenOrderViolations += tokenOrder(lock, acquisitions, details);
        total.safeUntilOverlaps += safeUntilOverlaps(lock, tenures, details);
        HighestBefore acquired = new HighestBefore(acquisitions);
        HighestBefore applied = new HighestBefore(guardsApplied);
        for (Done g : guardsApplied) {
            total.guardApplied++;
            long later = Math.max(acquired.at(g.invoked()), applied.at(g.invoked()));
            if (later > g.token()) {
                total.staleGuardApplied++;
                details.append(String.format(Locale.ROOT, "  %s: a guarded write with token %d (process %d, invoked"
                                + " at %.3f s) applied after token %d had been acquired or written%n", lock,
                        g.token(), g.process(), g.invoked() / 1e9, later));
            }
        }
        for (Done g : guardsRefused) {
            total.guardRefused++;
            if (acquired.at(g.invoked()) > g.token()) {
                total.staleGuardRefused++;
            }
        }
    }

    /** Tokens handed out twice, and acquisitions that completed before another began yet have a higher token. */
    private static long tokenOrder(String lock, List<Done> acquisitions, StringBuilder details) {
        long violations = 0;
        Set<Long> seen = new HashSet<>();
        for (Done a : acquisitions) {
            if (!seen.add(a.token())) {
                violations++;
                details.append(String.format(Locale.ROOT, "  %s: token %d handed out twice (again to process %d at"
                        + " %.3f s)%n", lock, a.token(), a.process(), a.completed() / 1e9));
            }
        }
        HighestBefore before = new HighestBefore(acquisitions);
        for (Done a : acquisitions) {
            long earlier = before.at(a.invoked());
            if (earlier > a.token()) {
                violations++;
                details.append(String.format(Locale.ROOT, "  %s: process %d acquired token %d at %.3f s, lower than"
                                + " token %d acquired before its acquire began%n", lock, a.process(), a.token(),
                        a.completed() / 1e9, earlier));
            }
        }
        return violations;
    }

    /**
     * Holders that acquired while a holder with a lower token was still within its tenure (before its
     * safe-until, release or stall): the lease under the lower token expired early, or the lock let two in.
     * Tenures without a recorded safe-until (older histories) are not judged.
     */
    private static long safeUntilOverlaps(String lock, List<Tenure> tenures, StringBuilder details) {
        List<Tenure> byToken = new ArrayList<>(tenures);
        byToken.sort(Comparator.comparingLong(t -> t.token));
        long violations = 0;
        Tenure latestEnding = null;   // among strictly lower tokens
        int i = 0;
        while (i < byToken.size()) {
            int j = i;
            while (j < byToken.size() && byToken.get(j).token == byToken.get(i).token) {
                Tenure b = byToken.get(j);
                if (latestEnding != null && b.acquired < latestEnding.end()) {
                    violations++;
                    details.append(String.format(Locale.ROOT, "  %s: process %d acquired token %d at %.3f s, while"
                                    + " process %d's tenure with token %d lasted until %.3f s (safe-until %.3f s)%n",
                            lock, b.process, b.token, b.acquired / 1e9, latestEnding.process, latestEnding.token,
                            latestEnding.end() / 1e9, latestEnding.safeUntil / 1e9));
                }
                j++;
            }
            for (int k = i; k < j; k++) {
                Tenure a = byToken.get(k);
                if (a.safeUntil != Long.MIN_VALUE && (latestEnding == null || a.end() > latestEnding.end())) {
                    latestEnding = a;
                }
            }
            i = j;
        }
        return violations;
    }

    /** How many critical sections began before an earlier-begun one (of another holder) had ended. */
    private static long overlaps(List<long[]> windows) {
        windows.sort(Comparator.comparingLong(w -> w[0]));
        long count = 0;
        long latestEnd = Long.MIN_VALUE;
        for (long[] w : windows) {
            if (w[0] < latestEnd) {
                count++;
            }
            latestEnd = Math.max(latestEnd, w[1]);
        }
        return count;
    }

    private static long token(Event e) {
        return Long.parseLong(String.valueOf(e.value()));
    }
}
