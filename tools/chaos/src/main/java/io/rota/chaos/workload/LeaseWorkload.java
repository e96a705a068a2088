package io.rota.chaos.workload;

import io.rota.chaos.checker.CheckReport;
import io.rota.chaos.checker.LeaseChecker;
import io.rota.chaos.history.Event;
import io.rota.client.KeepAlive;
import io.rota.client.KeyValue;
import io.rota.client.Lease;
import io.rota.client.RotaClient;
import io.rota.client.recipes.LockOptions;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The lease workload: each client process is a lease holder that, again and again, grants a lease of
 * {@link #TTL}, puts a key on it, keeps it alive for a while (4–12 s) while reading the key every poll
 * interval (the client count over {@code --rate}, between {@link #MIN_POLL} and {@link #MAX_POLL}), then
 * stops the keep-alive (a holder that died) and keeps reading until the key is gone.
 * One key per lease: {@code lease-<process>-<n>}.
 *
 * <p>The holder's <b>safe-until</b> is computed as the SDK's lock recipe computes it
 * ({@code LockHandle.safeUntilNanos()}): the send time of the last keep-alive the cluster confirmed
 * ({@code KeepAlive.lastConfirmedSendNanos()}), or of the grant, + the granted TTL − the margin of
 * {@link #MARGIN} (10 % of the TTL + 2 × the default clock drift), on the client's monotonic clock. The cluster
 * restarted the lease's TTL no earlier than that send, so the lease cannot expire before safe-until. It is
 * recorded in the history (a {@code safe-until} event whose value is that instant as a history time), so the
 * check runs offline.
 *
 * <p>The properties, checked by {@link LeaseChecker} (docs/server.md, "Leases: how late can a dead holder's lease
 * expire?"):
 * <ol>
 *   <li><b>never early</b>: a read that completed before the holder's safe-until (the latest one recorded for
 *       the lease) must not find the key gone, whatever the SDK reported meanwhile (onLost is no excuse: a
 *       lease that expires before safe-until breaks every lock built on it);</li>
 *   <li><b>not too late</b>: once its holder stops, the key vanishes within TTL + 3 × E + 1 s (E: the
 *       election timeout; the server's bound for one change of a silent leader: E of grace, up to 2 × E to
 *       elect, a vote round and a checkpoint interval), plus {@link #SLACK} for a keep-alive in flight and for
 *       the polling — a leader killed, paused or cut off meanwhile is no excuse. Only a spell without a
 *       majority (two of three members killed: nothing can expire) is: a lease whose window overlaps one is
 *       reported with its expiry time, not judged.</li>
 * </ol>
 * A kept-alive key that vanishes after its safe-until (keep-alives failing under a fault) is counted in the
 * report, not judged.
 *
 * <p>History events: {@code grant}, {@code write} (the put on the lease), {@code read}, {@code safe-until},
 * {@code stop} (the keep-alive closed) and {@code lost} (onLost called), each as an invoke/complete pair; the
 * key is the lease's key, the value the lease id (grant, write), the value read (read), the instant (safe-until)
 * or the reason (lost). The holder thread records everything but {@code lost}, which the SDK's callback
 * thread records as process {@link #LISTENER_PROCESS} + the holder's, so each process's events pair up.
 */
public final class LeaseWorkload implements Workload {

    /** The TTL of every lease. */
    static final Duration TTL = Duration.ofSeconds(3);
    /** The slowest polling of a holder's key (at low rates). */
    static final Duration MAX_POLL = Duration.ofMillis(250);
    /** The fastest polling of a holder's key (at high rates). */
    static final Duration MIN_POLL = Duration.ofMillis(5);
    /** Added to the expiry bound: a keep-alive in flight when the holder stopped, and the polling interval. */
    static final Duration SLACK = Duration.ofSeconds(1);
    /** The safe-until margin, as the lock recipe's default for a lease of {@link #TTL}. */
    static final Duration MARGIN = LockOptions.defaults().withTtl(TTL).effectiveMargin(TTL);
    /** The onLost callback's events use this + the holder's process number as their process. */
    static final int LISTENER_PROCESS = 100_000;
    /** How long the final phase waits for every stopped lease's key to vanish. */
    private static final Duration FINAL_WAIT = Duration.ofSeconds(60);

    private final Duration election;
    private final Counters counters = new Counters();
    private final List<Thread> threads = new ArrayList<>();
    private final List<RotaClient> clients = new ArrayList<>();
    private volatile boolean stopping;
    private WorkloadContext context;
    private Duration poll = MAX_POLL;

    /**
     * A lease workload.
     *
     * @param election the cluster's election timeout E
     */
    public LeaseWorkload(Duration election) {
        this.election = election;
    }

    @Override
    public String name() {
        return "lease";
    }

    @Override
    public Counters counters() {
        return counters;
    }

    @Override
    public void start(WorkloadContext context) {
        this.context = context;
        long pollNanos = (long) (TimeUnit.SECONDS.toNanos(1) * context.clients() / context.rate());
        poll = Duration.ofNanos(Math.max(MIN_POLL.toNanos(), Math.min(MAX_POLL.toNanos(), pollNanos)));
        for (int c = 0; c < context.clients(); c++) {
            RotaClient client = context.newClient(c, Duration.ofSeconds(10), Duration.ofSeconds(1));
            clients.add(client);
            int process = c;
            Random random = new Random(context.seed() * 31 + c);
            Thread t = new Thread(() -> holder(client, process, random), "lease-holder-" + c);
            threads.add(t);
            t.start();
        }
    }

    private void holder(RotaClient client, int process, Random random) {
        for (int n = 0; !stopping; n++) {
            String key = "lease-" + process + "-" + n;
            try {
                cycle(client, process, key, random);
            } catch (RuntimeException e) {
                // grant or put failed under a fault (recorded as info): this cycle is over
                pause(poll);
            }
        }
    }

    private void cycle(RotaClient client, int process, String key, Random random) {
        long grantSent = context.history().record(process, Event.Type.INVOKE, "grant", key, null, null);
        Lease lease;
        try {
            lease = client.leases().grant(TTL);
        } catch (RuntimeException e) {
            record(process, Event.Type.INFO, "grant", key, null);   // a lease may have been granted: it expires
            throw e;
        }
        record(process, Event.Type.OK, "grant", key, Long.toString(lease.id()));
        long ttlLessMargin = lease.ttl().minus(MARGIN).toNanos();
        long[] safeUntil = {grantSent + ttlLessMargin};
        record(process, Event.Type.INVOKE, "safe-until", key, null);
        record(process, Event.Type.OK, "safe-until", key, Long.toString(safeUntil[0]));
        record(process, Event.Type.INVOKE, "write", key, Long.toString(lease.id()));
        try {
            client.kv().put(key, "held", lease.id());
        } catch (RuntimeException e) {
            record(process, Outcomes.certainlyNotApplied(e) ? Event.Type.FAIL : Event.Type.INFO, "write", key,
                    Long.toString(lease.id()));
            throw e;
        }
        record(process, Event.Type.OK, "write", key, Long.toString(lease.id()));
        long holdUntil = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(4_000 + random.nextInt(8_000));
        int listener = LISTENER_PROCESS + process;
        KeepAlive keepAlive = client.leases().keepAlive(lease.id(), (id, why) -> {
            record(listener, Event.Type.INVOKE, "lost", key, null);
            record(listener, Event.Type.OK, "lost", key, why.code().name());
        });
        Runnable noteSafeUntil = () -> keepAlive.lastConfirmedSendNanos().ifPresent(sent -> {
            long s = context.runTime(sent) + ttlLessMargin;
            if (s > safeUntil[0]) {
                safeUntil[0] = s;
                record(process, Event.Type.INVOKE, "safe-until", key, null);
                record(process, Event.Type.OK, "safe-until", key, Long.toString(s));
            }
        });
        try {
            while (System.nanoTime() < holdUntil && !stopping) {
                noteSafeUntil.run();
                poll(client, process, key);
                pause(poll);
            }
        } finally {
            record(process, Event.Type.INVOKE, "stop", key, null);
            keepAlive.close();
            record(process, Event.Type.OK, "stop", key, null);
            noteSafeUntil.run();   // a keep-alive confirmed since the last poll still counts
        }
        long giveUp = System.nanoTime() + bound(election).toNanos() + FINAL_WAIT.toNanos();
        while (System.nanoTime() < giveUp) {
            if (poll(client, process, key) == null) {
                return;
            }
            pause(poll);
        }
    }

    /** Reads the key; returns its value, or null if absent (a failed read is recorded as info: "unknown"). */
    private String poll(RotaClient client, int process, String key) {
        record(process, Event.Type.INVOKE, "read", key, null);
        try {
            String v = client.kv().get(key).first().map(KeyValue::valueString).orElse(null);
            record(process, Event.Type.OK, "read", key, v);
            return v;
        } catch (RuntimeException e) {
            record(process, Event.Type.INFO, "read", key, null);
            return "unknown";
        }
    }

    private void record(int process, Event.Type type, String f, String key, String value) {
        context.history().record(process, type, f, key, value, null);
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

    /** How long after its holder stopped a lease's key may still be there: TTL + 3E + 1 s + slack. */
    static Duration bound(Duration election) {
        return LeaseChecker.bound(TTL, election, SLACK);
    }

    @Override
    public void stop() {
        stopping = true;
    }

    /** Lets every holder stop its lease and watch the key vanish (the cluster is healed by now). */
    @Override
    public void finish() {
        WorkloadContext.joinAll(threads, bound(election).plus(FINAL_WAIT).plus(Duration.ofSeconds(30)));
        if (Thread.currentThread().isInterrupted()) {
            return;
        }
        clients.forEach(RotaClient::close);
    }

    /** The checks are {@link LeaseChecker}'s, with this workload's TTL and expiry bound. */
    @Override
    public WorkloadResult check(List<Event> history) {
        CheckReport r = LeaseChecker.check(history, TTL, bound(election));
        return new WorkloadResult(r.verdict(), 0, r.report());
    }
}
