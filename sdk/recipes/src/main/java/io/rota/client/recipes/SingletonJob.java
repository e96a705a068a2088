package io.rota.client.recipes;

import io.rota.client.GetResult;
import io.rota.client.KeyValue;
import io.rota.client.Op;
import io.rota.client.RotaClient;
import io.rota.client.Txn;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalTime;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A scheduled job that runs once per fire time across any number of instances: every instance runs the same
 * {@code SingletonJob}; for each fire time exactly one of them runs the task, under the job's {@link Lock},
 * with the lock's fencing token. If that instance dies (or pauses past its lease) mid-run, its attempt is
 * marked ABANDONED and another instance re-runs the fire time. Missed fire times follow a
 * {@link MissedRunPolicy}; every attempt is kept in a bounded, queryable {@linkplain #history history}.
 *
 * <pre>{@code
 * try (SingletonJob job = SingletonJob.daily(rota, "learning-reminders", LocalTime.of(8, 0),
 *         ZoneId.of("Europe/Berlin"), ctx -> sendReminders(ctx.fireTime(), ctx.fencingToken()))) {
 *     ... the application runs ...
 * }
 * }</pre>
 *
 * <p>Keys, under the prefix (default {@code rota/jobs}): {@code <prefix>/<job>/cursor} (the latest fire time
 * taken), {@code <prefix>/<job>/runs/<fire-ms>/<token>} (one record per attempt, see {@link JobRun}), and the
 * lock {@code <prefix>.lock/<job>/}. Each instance runs one daemon thread. See docs/jobs.md.
 */
public final class SingletonJob implements AutoCloseable {

    /** Only the most recent this many due fire times are looked at; older ones are neither run nor recorded. */
    public static final int MAX_CATCH_UP = 1_000;
    /** At most this many SKIPPED records are written per decision (one transaction). */
    static final int MAX_SKIPPED_RECORDS = 32;

    private static final System.Logger LOG = System.getLogger(SingletonJob.class.getName());
    private static final Duration RETRY_BACKOFF = Duration.ofMillis(200);

    private final RotaClient rota;
    private final String name;
    private final FireSchedule schedule;
    private final JobTask task;
    private final String instanceId;
    private final Clock clock;
    private final MissedRunPolicy policy;
    private final Duration misfireGrace;
    private final String prefix;
    private final int historyLimit;
    private final Duration pollInterval;
    private final JobListener listener;
    private final Lock lock;
    private final Instant started;
    private final Thread thread;
    private volatile boolean closing;

    private SingletonJob(Builder b) {
        this.rota = b.rota;
        this.name = b.name;
        this.schedule = b.schedule;
        this.task = b.task;
        this.instanceId = b.instanceId;
        this.clock = b.clock;
        this.policy = b.policy;
        this.misfireGrace = b.misfireGrace;
        this.prefix = b.prefix;
        this.historyLimit = b.historyLimit;
        this.pollInterval = b.pollInterval;
        this.listener = b.listener;
        this.lock = Lock.of(rota, name, LockOptions.defaults().withPrefix(prefix + ".lock").withTtl(b.lockTtl)
                .withLockDelay(b.lockDelay));
        this.started = clock.instant();
        this.thread = new Thread(this::loop, "rota-job-" + name + "-" + instanceId);
        this.thread.setDaemon(true);
    }

    /**
     * Runs {@code task} every {@code period} (at the multiples of it since the epoch), once cluster-wide,
     * with the default options; started.
     *
     * @param rota   the client
     * @param name   the job's name
     * @param period the period
     * @param task   the work
     * @return the running job; close it to stop this instance
     */
    public static SingletonJob fixedRate(RotaClient rota, String name, Duration period, JobTask task) {
        return builder(rota, name, FireSchedule.fixedRate(period), task).start();
    }

    /**
     * Runs {@code task} every day at {@code at} in {@code zone}, once cluster-wide, with the default options;
     * started.
     *
     * @param rota the client
     * @param name the job's name
     * @param at   the local time of day
     * @param zone the time zone
     * @param task the work
     * @return the running job; close it to stop this instance
     */
    public static SingletonJob daily(RotaClient rota, String name, LocalTime at, ZoneId zone, JobTask task) {
        return builder(rota, name, FireSchedule.daily(at, zone), task).start();
    }

    /**
     * Configures a job.
     *
     * @param rota     the client
     * @param name     the job's name (the same on every instance)
     * @param schedule when it fires
     * @param task     the work
     * @return a builder; finish with {@link Builder#start()}
     */
    public static Builder builder(RotaClient rota, String name, FireSchedule schedule, JobTask task) {
        return new Builder(rota, name, schedule, task);
    }

    /**
     * The recorded attempts of a job under the default prefix, without scheduling anything (for tools).
     *
     * @param rota the client
     * @param name the job's name
     * @return the attempts, by fire time then token (oldest first)
     */
    public static List<JobRun> history(RotaClient rota, String name) {
        return history(rota, Builder.DEFAULT_PREFIX, name);
    }

    /**
     * The recorded attempts of a job, without scheduling anything.
     *
     * @param rota   the client
     * @param prefix the jobs' key prefix
     * @param name   the job's name
     * @return the attempts, by fire time then token (oldest first)
     */
    public static List<JobRun> history(RotaClient rota, String prefix, String name) {
        return runs(rota.kv().getPrefix(runsPrefix(prefix, name)), name);
    }

    /**
     * The latest recorded attempt of every job under {@code prefix}, without scheduling anything (for
     * tools: {@code rotactl jobs list}). A job appears once it has fired at least once.
     *
     * @param rota   the client
     * @param prefix the jobs' key prefix ({@link Builder#DEFAULT_PREFIX} unless the application set one)
     * @return one attempt per job, the latest by fire time then token, ordered by job name
     */
    public static List<JobRun> latestRuns(RotaClient rota, String prefix) {
        String under = prefix + "/";
        TreeMap<String, JobRun> latest = new TreeMap<>();
        for (KeyValue kv : rota.kv().getPrefix(under).kvs()) {
            String rest = kv.keyString().substring(under.length());
            // <job>/runs/<fire-ms, 15 digits>/<token, 19 digits>; a job's name may itself contain '/'.
            int runs = rest.length() - RUN_SUFFIX_LENGTH;
            if (runs <= 0 || !rest.startsWith("/runs/", runs)) {
                continue;
            }
            JobRun run = JobRun.decode(rest.substring(0, runs), kv.valueString());
            latest.merge(run.job(), run, (a, b) -> Comparator.comparing(JobRun::fireTime)
                    .thenComparingLong(JobRun::token).compare(a, b) >= 0 ? a : b);
        }
        return List.copyOf(latest.values());
    }

    /** The length of {@code /runs/<15 digits>/<19 digits>}, the end of every attempt key. */
    private static final int RUN_SUFFIX_LENGTH = "/runs/".length() + 15 + 1 + 19;

    /**
     * This job's recorded attempts.
     *
     * @return the attempts, oldest first
     */
    public List<JobRun> history() {
        return history(rota, prefix, name);
    }

    /**
     * The job's name.
     *
     * @return the name
     */
    public String name() {
        return name;
    }

    /**
     * This instance's id.
     *
     * @return the instance id
     */
    public String instanceId() {
        return instanceId;
    }

    /** Stops this instance: interrupts a running task (another instance re-runs its fire time) and waits. */
    @Override
    public void close() {
        closing = true;
        thread.interrupt();
        try {
            thread.join(TimeUnit.SECONDS.toMillis(10));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    // ---------------------------------------------------------------------------------------------
    // The instance's loop
    // ---------------------------------------------------------------------------------------------

    /** The job's state in the store: the cursor and the latest attempt at it. */
    private record State(Instant cursor, JobRun latest) {
        boolean unfinished() {
            return cursor != null && (latest == null || !latest.state().settlesFireTime());
        }
    }

    private void loop() {
        while (!closing) {
            try {
                State s = readState();
                Instant next = schedule.next(s.cursor() != null ? s.cursor() : started);
                if (!s.unfinished() && clock.instant().isBefore(next)) {
                    waitUntil(next);
                    continue;
                }
                // Work is due, or a run is in progress (we queue behind its holder, to take over if it dies).
                long waitStart = System.nanoTime();
                try (LockHandle held = lock.acquire(pollInterval.multipliedBy(30))) {
                    long heldSince = System.nanoTime();
                    tell(l -> l.lockAcquired(name, Duration.ofNanos(heldSince - waitStart)));
                    try {
                        underLock(held);
                    } finally {
                        tell(l -> l.lockReleased(name, Duration.ofNanos(System.nanoTime() - heldSince)));
                    }
                } catch (LockTimeoutException busy) {
                    // a long run holds the lock: look again
                }
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException e) {
                if (closing) {
                    return;
                }
                LOG.log(System.Logger.Level.WARNING, "job " + name + " on " + instanceId + ": " + e.getMessage()
                        + "; retrying");
                try {
                    TimeUnit.MILLISECONDS.sleep(RETRY_BACKOFF.toMillis());
                } catch (InterruptedException stop) {
                    return;
                }
            }
        }
    }

    /** Waits on {@link #clock} until {@code target}, in steps of at most the poll interval. */
    private void waitUntil(Instant target) throws InterruptedException {
        long ms = Duration.between(clock.instant(), target).toMillis();
        TimeUnit.MILLISECONDS.sleep(Math.max(1, Math.min(ms, pollInterval.toMillis())));
    }

    /** Decides and runs, holding the lock: at most one instance is here at a time. */
    private void underLock(LockHandle held) throws InterruptedException {
        State s = readState();
        Instant now = clock.instant();
        if (s.unfinished()) {
            // Runs happen only under the lock and we hold it: the instance of that attempt lost it.
            Txn claim = held.guardedTxn();
            if (s.latest() != null) {
                claim.then(Op.put(attemptKey(s.latest()), s.latest().with(JobState.ABANDONED, now,
                        "instance " + s.latest().instanceId() + " lost the lock while " + s.latest().state()
                                + "; re-run by " + instanceId).encode()));
            }
            run(held, s.cursor(), claim, List.of());
            return;
        }
        List<Instant> due = MissedRuns.due(schedule, s.cursor() != null ? s.cursor() : started, now, MAX_CATCH_UP);
        if (due.isEmpty()) {
            return;
        }
        MissedRuns.Decision decision = MissedRuns.decide(policy, due, now, misfireGrace);
        Instant toRun = decision.run();
        List<Instant> toSkip = decision.skip();
        Txn claim = held.guardedTxn();
        for (Instant skipped : toSkip.subList(Math.max(0, toSkip.size() - MAX_SKIPPED_RECORDS), toSkip.size())) {
            JobRun record = new JobRun(name, skipped, 0, instanceId, JobState.SKIPPED, null, now,
                    "missed (policy " + policy + ")");
            claim.then(Op.put(attemptKey(record), record.encode()));
        }
        if (toRun == null) {
            if (claim.then(Op.put(cursorKey(), cursorRecord(toSkip.get(toSkip.size() - 1)))).commit().succeeded()) {
                tellSkipped(toSkip);
            }
        } else {
            run(held, toRun, claim, toSkip);
        }
        prune();
    }

    /**
     * Claims {@code fire} (with what {@code claim} already holds: the SKIPPED records of {@code skipped}, or
     * an ABANDONED mark), runs the task, records the outcome.
     */
    private void run(LockHandle held, Instant fire, Txn claim, List<Instant> skipped) throws InterruptedException {
        JobRun attempt = new JobRun(name, fire, held.fencingToken(), instanceId, JobState.CLAIMED, null, null, "");
        if (!claim.then(Op.put(cursorKey(), cursorRecord(fire)), Op.put(attemptKey(attempt), attempt.encode()))
                .commit().succeeded()) {
            return;   // the lock was lost before the claim: someone else decides
        }
        tellSkipped(skipped);
        attempt = new JobRun(name, fire, held.fencingToken(), instanceId, JobState.RUNNING, clock.instant(), null, "");
        if (!record(held, attempt)) {
            return;
        }
        Context ctx = new Context(held, fire);
        JobRun end;
        long runStart = System.nanoTime();
        try {
            held.runGuarded(() -> {
                task.run(ctx);
                return null;
            });
            end = attempt.with(JobState.DONE, clock.instant(), "ok");
        } catch (LockLostException lost) {
            tellRunEnded(fire, JobState.ABANDONED, runStart);
            return;   // not ours to record any more: the next holder marks it ABANDONED and re-runs it
        } catch (InterruptedException e) {
            if (closing) {
                tellRunEnded(fire, JobState.ABANDONED, runStart);
                throw e;   // our attempt stays RUNNING; the next holder takes it over
            }
            end = attempt.with(JobState.FAILED, clock.instant(), e.toString());
        } catch (Exception e) {
            end = attempt.with(JobState.FAILED, clock.instant(), e.toString());
        }
        // A DONE or FAILED the store refused (the lock was lost meanwhile) is re-run by the next holder.
        tellRunEnded(fire, record(held, end) ? end.state() : JobState.ABANDONED, runStart);
    }

    private void tellRunEnded(Instant fire, JobState outcome, long runStart) {
        Duration took = Duration.ofNanos(System.nanoTime() - runStart);
        tell(l -> l.runEnded(name, fire, outcome, took));
    }

    private void tellSkipped(List<Instant> skipped) {
        for (Instant s : skipped) {
            tell(l -> l.skipped(name, s));
        }
    }

    /** Tells the listener; its failure is logged, never the job's. */
    private void tell(Consumer<JobListener> event) {
        try {
            event.accept(listener);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "job " + name + ": listener " + listener + " failed", e);
        }
    }

    /** Writes {@code run}'s record, guarded by the lock; false if the lock was lost. */
    private boolean record(LockHandle held, JobRun run) {
        return held.guardedTxn().then(Op.put(attemptKey(run), run.encode())).commit().succeeded();
    }

    /** Deletes the oldest fire times' records beyond the history limit. */
    private void prune() {
        GetResult all = rota.kv().getPrefix(runsPrefix(prefix, name));
        TreeSet<String> fires = new TreeSet<>();
        for (KeyValue kv : all.kvs()) {
            String rest = kv.keyString().substring(runsPrefix(prefix, name).length());
            fires.add(rest.substring(0, rest.indexOf('/') + 1));
        }
        while (fires.size() > historyLimit) {
            rota.kv().deletePrefix(runsPrefix(prefix, name) + fires.pollFirst());
        }
    }

    private State readState() {
        GetResult all = rota.kv().getPrefix(prefix + "/" + name + "/");
        Instant cursor = null;
        for (KeyValue kv : all.kvs()) {
            if (kv.keyString().equals(cursorKey())) {
                cursor = Instant.parse(Fields.decode(kv.valueString()).get("fire"));
            }
        }
        JobRun latest = null;
        if (cursor != null) {
            for (JobRun r : runs(all, name)) {
                if (r.fireTime().equals(cursor) && (latest == null || r.token() >= latest.token())) {
                    latest = r;
                }
            }
        }
        return new State(cursor, latest);
    }

    private static List<JobRun> runs(GetResult result, String name) {
        List<JobRun> runs = new ArrayList<>();
        for (KeyValue kv : result.kvs()) {
            if (kv.keyString().contains("/runs/")) {
                runs.add(JobRun.decode(name, kv.valueString()));
            }
        }
        runs.sort(Comparator.comparing(JobRun::fireTime).thenComparingLong(JobRun::token));
        return runs;
    }

    private String cursorKey() {
        return prefix + "/" + name + "/cursor";
    }

    private static String cursorRecord(Instant fire) {
        Map<String, String> f = new LinkedHashMap<>();
        f.put("fire", fire.toString());
        return Fields.encode(f);
    }

    private static String runsPrefix(String prefix, String name) {
        return prefix + "/" + name + "/runs/";
    }

    /** {@code runs/<fire-ms, 15 digits>/<token, 19 digits>}: sorted by key = sorted by fire time, then token. */
    private String attemptKey(JobRun run) {
        return String.format("%s%015d/%019d", runsPrefix(prefix, name), run.fireTime().toEpochMilli(), run.token());
    }

    private final class Context implements JobContext {
        private final LockHandle held;
        private final Instant fire;

        Context(LockHandle held, Instant fire) {
            this.held = held;
            this.fire = fire;
        }

        @Override
        public String jobName() {
            return name;
        }

        @Override
        public Instant fireTime() {
            return fire;
        }

        @Override
        public long fencingToken() {
            return held.fencingToken();
        }

        @Override
        public String instanceId() {
            return instanceId;
        }

        @Override
        public boolean isCancelled() {
            return closing || !held.isHeld();
        }

        @Override
        public Txn guardedTxn() {
            return held.guardedTxn();
        }
    }

    /** Configures a {@link SingletonJob}. */
    public static final class Builder {
        /** The jobs' key prefix unless {@link #prefix(String)} sets another. */
        public static final String DEFAULT_PREFIX = "rota/jobs";

        private final RotaClient rota;
        private final String name;
        private final FireSchedule schedule;
        private final JobTask task;
        private String instanceId = "pid-" + ProcessHandle.current().pid();
        private Clock clock = Clock.systemUTC();
        private MissedRunPolicy policy = MissedRunPolicy.RUN_ONCE;
        private Duration misfireGrace = Duration.ofMinutes(1);
        private String prefix = DEFAULT_PREFIX;
        private int historyLimit = 100;
        private Duration pollInterval = Duration.ofSeconds(1);
        private Duration lockTtl = Duration.ofSeconds(10);
        private Duration lockDelay = Duration.ZERO;
        private JobListener listener = JobListener.NONE;

        private Builder(RotaClient rota, String name, FireSchedule schedule, JobTask task) {
            this.rota = Objects.requireNonNull(rota, "rota");
            if (name == null || name.isEmpty() || name.contains("/")) {
                throw new IllegalArgumentException("a job needs a non-empty name without '/': " + name);
            }
            this.name = name;
            this.schedule = Objects.requireNonNull(schedule, "schedule");
            this.task = Objects.requireNonNull(task, "task");
        }

        /**
         * This instance's id, recorded in the history (default {@code pid-<pid>}; use the host name in production).
         *
         * @param instanceId the id
         * @return this builder
         */
        public Builder instanceId(String instanceId) {
            this.instanceId = Objects.requireNonNull(instanceId, "instanceId");
            return this;
        }

        /**
         * The wall clock fire times are compared with (default UTC system clock; tests inject their own).
         *
         * @param clock the clock
         * @return this builder
         */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /**
         * What to do with missed fire times (default {@link MissedRunPolicy#RUN_ONCE}).
         *
         * @param policy the policy
         * @return this builder
         */
        public Builder missedRunPolicy(MissedRunPolicy policy) {
            this.policy = Objects.requireNonNull(policy, "policy");
            return this;
        }

        /**
         * How late a fire time may be taken and still count as on time (default 1 min), for {@link MissedRunPolicy#SKIP}.
         *
         * @param grace the grace
         * @return this builder
         */
        public Builder misfireGrace(Duration grace) {
            this.misfireGrace = Objects.requireNonNull(grace, "grace");
            return this;
        }

        /**
         * The key prefix (default {@code rota/jobs}).
         *
         * @param prefix the prefix, without a trailing '/'
         * @return this builder
         */
        public Builder prefix(String prefix) {
            this.prefix = Objects.requireNonNull(prefix, "prefix");
            return this;
        }

        /**
         * How many fire times' records are kept (default 100); older ones are deleted.
         *
         * @param limit at least 1
         * @return this builder
         */
        public Builder historyLimit(int limit) {
            if (limit < 1) {
                throw new IllegalArgumentException("historyLimit must be at least 1");
            }
            this.historyLimit = limit;
            return this;
        }

        /**
         * How often an idle instance re-reads the job's state at most (default 1 s).
         *
         * @param interval the interval
         * @return this builder
         */
        public Builder pollInterval(Duration interval) {
            this.pollInterval = Objects.requireNonNull(interval, "interval");
            return this;
        }

        /**
         * The TTL of the lease of the instance that runs: how soon a dead runner is taken over (default 10 s).
         *
         * @param ttl the TTL
         * @return this builder
         */
        public Builder lockTtl(Duration ttl) {
            this.lockTtl = Objects.requireNonNull(ttl, "ttl");
            return this;
        }

        /**
         * The job lock's lock-delay after a runner's lease expired (default 0; see {@link LockOptions}).
         *
         * @param delay the delay
         * @return this builder
         */
        public Builder lockDelay(Duration delay) {
            this.lockDelay = Objects.requireNonNull(delay, "delay");
            return this;
        }

        /**
         * A listener told of this instance's lock waits and holds and of its runs' outcomes (for metrics).
         *
         * @param listener the listener
         * @return this builder
         */
        public Builder listener(JobListener listener) {
            this.listener = Objects.requireNonNull(listener, "listener");
            return this;
        }

        /**
         * Creates and starts this instance of the job.
         *
         * @return the running job
         */
        public SingletonJob start() {
            SingletonJob job = new SingletonJob(this);
            job.thread.start();
            return job;
        }
    }

    /** For humans: job, instance, policy. */
    @Override
    public String toString() {
        return "SingletonJob[" + name + " on " + instanceId + ", " + policy + "]";
    }
}
